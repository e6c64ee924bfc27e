// The header of a trainprof file, its clocks checked and decided, and its metadata block
// (trace_decoder.h).
#include "collector/read/trace_decoder.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "collector/read/record_scan.h"
#include "trainprof/phases.h"
#include "trainprof/torch_ops.h"

namespace trainprof::collector::decode {

namespace fr = format::rec;
using namespace scan;  // NOLINT: the record scanning constants and ReadVarints

// 16 bytes as 32 lowercase hex digits; "" when all zero (unknown).
std::string HexId(const uint8_t* p) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  bool any = false;
  for (int i = 0; i < 16; ++i) {
    any = any || p[i] != 0;
    out += kHex[p[i] >> 4];
    out += kHex[p[i] & 15];
  }
  return any ? out : std::string();
}

bool Decoder::ReadHeader() {
  const std::span<const uint8_t> head = src_->View(0, sizeof(FileHeader));
  const uint8_t* d = head.data();
  const uint64_t size = head.size() < sizeof(FileHeader) ? head.size() : size_;
  const std::string header_cut = " (the file header is " + Num(sizeof(FileHeader)) + " bytes)";
  if (size == 0) {
    Error(Loss::header_errors, "empty file (0 bytes)");
    return false;
  }
  if (std::memcmp(d, format::kFileMagic, std::min<uint64_t>(size, sizeof format::kFileMagic)) != 0) {
    Error(Loss::header_errors, "not a trainprof trace (wrong magic)");
    return false;
  }
  if (size < offsetof(FileHeader, version) + 4) {
    Error(Loss::header_errors, "header truncated at byte " + Num(size) + header_cut);
    return false;
  }
  img_.version = Load<uint32_t>(d + offsetof(FileHeader, version));
  if (img_.version < format::kMinReadableVersion || img_.version > format::kFormatVersion) {
    std::string reads = format::kMinReadableVersion == format::kFormatVersion
                            ? "version " + Num(format::kFormatVersion)
                            : "versions " + Num(format::kMinReadableVersion) + " to " + Num(format::kFormatVersion);
    Error(Loss::header_errors, "unsupported format version " + Num(img_.version) + " (this trainprof reads " + reads + ")");
    return false;
  }
  if (size >= offsetof(FileHeader, pid) + 4) st_.pid = Load<int32_t>(d + offsetof(FileHeader, pid));
  if (size < sizeof(FileHeader)) {
    Error(Loss::header_errors, "header truncated at byte " + Num(size) + header_cut);
    return false;
  }
  header_region_ = Load<uint32_t>(d + offsetof(FileHeader, header_region_size));
  chunk_size_ = Load<uint32_t>(d + offsetof(FileHeader, chunk_size));
  img_.flags = Load<uint32_t>(d + offsetof(FileHeader, flags));
  img_.pid = Load<int32_t>(d + offsetof(FileHeader, pid));
  img_.ppid = Load<int32_t>(d + offsetof(FileHeader, ppid));
  img_.start_realtime_ns = Load<uint64_t>(d + offsetof(FileHeader, start_realtime_ns));
  img_.start_ns = Load<uint64_t>(d + offsetof(FileHeader, start_monotonic_ns));
  img_.header_start_ns = img_.start_ns;
  // The TSC clock: version 4 files, and the version 3 files of the writers between the TSC clock
  // and version 4 (2026-12-01/02), which set the flag bit; earlier version 3 writers left it zero,
  // and versions 1 and 2 never had it.
  // Which clock is decided once the chunks' pairs are known too (DecideClock): a flag that
  // disagrees with the TSC fields is damage, and the fields' evidence decides.
  tsc_ = img_.version >= 3 && (img_.flags & format::kFlagTscClock) != 0;
  if (img_.version >= 3) {
    tsc_khz_ = Load<uint32_t>(d + offsetof(FileHeader, tsc_khz));
    start_tsc_ = Load<uint64_t>(d + offsetof(FileHeader, start_tsc));
  }
  metadata_offset_ = Load<uint32_t>(d + offsetof(FileHeader, metadata_offset));
  metadata_size_ = Load<uint32_t>(d + offsetof(FileHeader, metadata_size));
  img_.image_index = Load<uint32_t>(d + offsetof(FileHeader, image_index));
  uint32_t end_kind = Load<uint32_t>(d + offsetof(FileHeader, end_kind));
  img_.end_code = Load<int32_t>(d + offsetof(FileHeader, end_code));
  img_.end_ns = Load<uint64_t>(d + offsetof(FileHeader, end_monotonic_ns));
  img_.records_dropped = Load<uint64_t>(d + offsetof(FileHeader, records_dropped));
  img_.samples_dropped = Load<uint64_t>(d + offsetof(FileHeader, samples_dropped));
  img_.chunks_claimed = Load<uint32_t>(d + offsetof(FileHeader, chunks_claimed));
  img_.stacks_skipped = Load<uint32_t>(d + offsetof(FileHeader, stacks_skipped));
  img_.pid_namespace = Load<uint64_t>(d + offsetof(FileHeader, pid_namespace));
  img_.start_ticks = Load<uint64_t>(d + offsetof(FileHeader, start_ticks));
  img_.boot_id = HexId(d + offsetof(FileHeader, boot_id));
  img_.run_id = HexId(d + offsetof(FileHeader, run_id));

  if (header_region_ < sizeof(FileHeader) || header_region_ > kMaxHeaderRegion) {
    Error(Loss::header_errors, "bad header: header_region_size " + Num(header_region_) + " (at byte " +
          Num(offsetof(FileHeader, header_region_size)) + ")");
    return false;
  }
  if (chunk_size_ <= sizeof(ChunkHeader) || chunk_size_ > kMaxChunkSize) {
    Error(Loss::header_errors, "bad header: chunk_size " + Num(chunk_size_) + " (at byte " + Num(offsetof(FileHeader, chunk_size)) + ")");
    return false;
  }
  if (end_kind > static_cast<uint32_t>(EndKind::kReturned)) {
    Error(Loss::header_errors, "bad header: end_kind " + Num(end_kind) + " (at byte " + Num(offsetof(FileHeader, end_kind)) + ")");
    end_kind = 0;
  }
  img_.end_kind = static_cast<EndKind>(end_kind);
  CheckHeaderClocks();
  return true;
}

void Decoder::CheckHeaderClocks() {
  // The wall-clock start aligns this process with others (hosts, export's time axis): unusable,
  // it is unknown (0) and the process tree takes its host's offset from another process.
  if (img_.start_realtime_ns >= kMaxClockNs) {
    Error(Loss::header_errors, "bad header: start_realtime_ns " + Num(img_.start_realtime_ns) +
                                   " is no wall-clock time, the process is placed by its host's other processes" +
                                   AtByte(offsetof(FileHeader, start_realtime_ns)));
    img_.start_realtime_ns = 0;
  }
  if (img_.start_ns >= kMaxClockNs) {
    Error(Loss::header_errors, "bad header: start_monotonic_ns " + Num(img_.start_ns) +
                                   " is no CLOCK_MONOTONIC time, the start is taken from the first record" +
                                   AtByte(offsetof(FileHeader, start_monotonic_ns)));
    start_unknown_ = true;
    img_.start_ns = 0;
  }
  if (img_.end_ns >= kMaxClockNs) {
    Error(Loss::header_errors, "bad header: end_monotonic_ns " + Num(img_.end_ns) +
                                   " is no CLOCK_MONOTONIC time, the end is taken from the records" +
                                   AtByte(offsetof(FileHeader, end_monotonic_ns)));
    img_.end_ns = 0;
  }
}

std::vector<TscPair> Decoder::CalibrationPairs(const std::vector<ChunkDesc>& chunks, size_t* before_base) const {
  // A chunk's base_ns is its thread's record before the chunk was claimed, read on the same TSC
  // before the claim took the sync pair (and before the thread's last pair): a pair earlier than
  // that by more than this is no reading of that TSC (CPUs' TSCs agree far closer).
  constexpr uint64_t kSlackTicks = 1ull << 26;  // 22 ms at 3 GHz
  std::vector<TscPair> pairs;
  if (!start_unknown_ && start_tsc_ != 0) pairs.push_back({start_tsc_, img_.start_ns});
  for (const ChunkDesc& c : chunks) {
    for (const TscPair& p : {c.sync, c.last}) {
      if (p.ticks == 0) continue;
      if (p.ticks < c.base_ns && c.base_ns - p.ticks > kSlackTicks) {
        ++*before_base;
        continue;
      }
      pairs.push_back(p);
    }
  }
  return pairs;
}

void Decoder::DecideClock(const std::vector<ChunkDesc>& chunks) {
  if (img_.version < 3) {  // bit 4 was unused; these files are on CLOCK_MONOTONIC
    tsc_ = false;
    return;
  }
  size_t chunk_pairs = 0;
  for (const ChunkDesc& c : chunks) chunk_pairs += (c.sync.ticks != 0 ? 1 : 0) + (c.last.ticks != 0 ? 1 : 0);
  const bool fields = tsc_khz_ != 0 || start_tsc_ != 0 || chunk_pairs != 0;
  const std::string set = "tsc_khz " + Num(tsc_khz_) + ", start_tsc " + Num(start_tsc_) + " and " + Num(chunk_pairs) +
                          (chunk_pairs == 1 ? " chunk calibration pair" : " chunk calibration pairs");
  if (tsc_ && !fields) {  // a TSC writer always sets tsc_khz and start_tsc
    Error(Loss::header_errors, "bad header: flags bit 4 (TSC clock) is set, but " + set +
                                   " are 0: the times are read as CLOCK_MONOTONIC ns" + AtByte(offsetof(FileHeader, flags)));
    tsc_ = false;
    return;
  }
  if (tsc_ || !fields) return;
  // The flag says CLOCK_MONOTONIC, the fields a writer on that clock leaves 0 say TSC: the pairs
  // decide. Pairs that make a TSC conversion (a TSC's rate, most of them on one line) are no
  // accident of damage.
  size_t before_base = 0;
  std::vector<TscPair> pairs = CalibrationPairs(chunks, &before_base);
  const size_t given = pairs.size() + before_base;
  TscConverter::Rejected rejected;
  const TscConverter trial(std::move(pairs), tsc_khz_, &rejected);
  const std::vector<TscPair>& kept = trial.pairs();
  if (kept.size() >= 2 && 2 * kept.size() > given) {
    const TscPair &a = kept.front(), &b = kept.back();
    const uint64_t khz = b.ns > a.ns ? static_cast<uint64_t>(static_cast<long double>(b.ticks - a.ticks) * 1e6L /
                                                             static_cast<long double>(b.ns - a.ns) + 0.5L)
                                     : 0;
    Error(Loss::header_errors, "bad header: flags bit 4 (TSC clock) is clear, but " + set + " are set, and " + Num(kept.size()) +
                                   " of " + Num(given) + " pairs fit a TSC of " + Num(khz) +
                                   " kHz: the times are read as TSC ticks" + AtByte(offsetof(FileHeader, flags)));
    tsc_ = true;
  } else {
    Error(Loss::header_errors, "bad header: flags bit 4 (TSC clock) is clear, but " + set +
                                   " are set (0 on CLOCK_MONOTONIC) and fit no TSC conversion: the times are read as CLOCK_MONOTONIC ns" +
                                   AtByte(offsetof(FileHeader, flags)));
  }
}

void Decoder::CheckClocksAgainstRecords() {
  constexpr uint64_t kSlackNs = 1'000'000;  // 1 ms: far more than a TSC pair's rounding
  // The header's start is read before the first record is written.
  if (!start_unknown_ && img_.has_timed_records && img_.start_ns > img_.first_record_ns + kSlackNs) {
    Error(Loss::header_errors, "bad header: start_monotonic_ns " + Num(img_.start_ns) + " is after the first record (" +
                                   Num(img_.first_record_ns) + "), the start is taken from the first record" +
                                   AtByte(offsetof(FileHeader, start_monotonic_ns)));
    start_unknown_ = true;
  }
  if (start_unknown_) img_.start_ns = img_.has_timed_records ? img_.first_record_ns : 0;
  // The end the writer stamped at exit: after the start, and with the PROCESS_END record the
  // same exit wrote (RecordEnd: both read at once). Unusable, the end comes from the records, as
  // for a process killed before it.
  if (img_.end_ns == 0) return;
  const ProcessEvent* end_record = nullptr;
  for (const ProcessEvent& e : img_.process_events) {
    if (e.kind == ProcessEventKind::kProcessEnd && (end_record == nullptr || e.time_ns > end_record->time_ns)) end_record = &e;
  }
  std::string why;
  if (img_.end_ns < img_.start_ns) {
    why = " is before the start (" + Num(img_.start_ns) + ")";
  } else if (end_record != nullptr && (img_.end_ns > end_record->time_ns + kMaxEndSkewNs ||
                                       img_.end_ns + kMaxEndSkewNs < end_record->time_ns)) {
    why = " is not the PROCESS_END record's time (" + Num(end_record->time_ns) + ")";
  }
  if (why.empty()) return;
  Error(Loss::header_errors, "bad header: end_monotonic_ns " + Num(img_.end_ns) + why +
                                 ", the end is taken from the records" + AtByte(offsetof(FileHeader, end_monotonic_ns)));
  img_.end_ns = 0;
}

void Decoder::ReadMetadata() {
  if (metadata_size_ == 0) return;
  const uint64_t size = size_;
  if (metadata_offset_ < sizeof(FileHeader) || metadata_offset_ > header_region_ ||
      metadata_size_ > header_region_ - metadata_offset_) {
    Error(Loss::metadata_errors, "metadata (offset " + Num(metadata_offset_) + ", " + Num(metadata_size_) +
          " bytes) lies outside the header region");
    return;
  }
  uint64_t end = uint64_t{metadata_offset_} + metadata_size_;
  if (end > size) {
    st_.truncated = true;
    metadata_cut_ = true;
    Error(Loss::metadata_errors, "header truncated at byte " + Num(size) + " (metadata ends at byte " + Num(end) + ")");
    end = size;
  }
  const std::span<const uint8_t> meta = src_->View(metadata_offset_, end - metadata_offset_);
  if (meta.size() < end - metadata_offset_) end = metadata_offset_ + meta.size();  // shrank meanwhile
  auto at = [&](uint64_t file_offset) { return meta.data() + (file_offset - metadata_offset_); };
  uint64_t p = metadata_offset_;
  while (p + 6 <= end) {
    auto key = static_cast<format::MetaKey>(Load<uint16_t>(at(p)));
    uint64_t len = Load<uint32_t>(at(p + 2));
    if (key == format::MetaKey::kEnd) return;
    if (len > end - (p + 6)) {
      if (!metadata_cut_) Error(Loss::metadata_errors, "metadata entry at byte " + Num(p) + " runs past the metadata (length " + Num(len) + ")");
      skipped_ += end - p;
      return;
    }
    std::string value(reinterpret_cast<const char*>(at(p + 6)), len);
    switch (key) {
      case format::MetaKey::kHost: img_.host = std::move(value); break;
      case format::MetaKey::kExecutable: img_.executable = std::move(value); break;
      case format::MetaKey::kWorkingDir: img_.working_dir = std::move(value); break;
      case format::MetaKey::kVersion: img_.writer_version = std::move(value); break;
      case format::MetaKey::kCommandLine: {
        img_.argv.clear();
        size_t start = 0;
        while (start <= value.size()) {
          size_t nul = value.find('\0', start);
          if (nul == std::string::npos) nul = value.size();
          img_.argv.emplace_back(value, start, nul - start);
          start = nul + 1;
        }
        while (!img_.argv.empty() && img_.argv.back().empty()) img_.argv.pop_back();
        break;
      }
      case format::MetaKey::kEnv: {
        size_t eq = value.find('=');
        if (eq == std::string::npos) {
          img_.env.emplace_back(std::move(value), std::string());
        } else {
          img_.env.emplace_back(value.substr(0, eq), value.substr(eq + 1));
        }
        break;
      }
      case format::MetaKey::kCapture: {
        // "key=value" entries separated by NUL bytes; unknown keys skipped.
        img_.capture.present = true;
        size_t start = 0;
        while (start < value.size()) {
          size_t nul = value.find('\0', start);
          if (nul == std::string::npos) nul = value.size();
          std::string_view entry(value.data() + start, nul - start);
          start = nul + 1;
          size_t eq = entry.find('=');
          if (eq == std::string_view::npos) continue;
          std::string_view k = entry.substr(0, eq), v = entry.substr(eq + 1);
          if (k == "range") img_.capture.range = v;
          if (k == "range_end") img_.capture.range_end = v;
          if (k == "window_start_ns") img_.capture.window_start_ns = std::strtoull(std::string(v).c_str(), nullptr, 10);
          if (k == "window_end_ns") img_.capture.window_end_ns = std::strtoull(std::string(v).c_str(), nullptr, 10);
        }
        break;
      }
      case format::MetaKey::kPythonShimOff: img_.python_shim_off = std::move(value); break;
      case format::MetaKey::kStacks: {  // NUL-separated key=value entries; the one read here:
        // python_unsupported=TEXT, the CPython whose frames the sampler could not read.
        const std::string_view key = "python_unsupported=";
        for (size_t start = 0; start < value.size();) {
          size_t nul = value.find('\0', start);
          if (nul == std::string::npos) nul = value.size();
          std::string_view entry(value.data() + start, nul - start);
          start = nul + 1;
          if (entry.substr(0, key.size()) == key) img_.python_unsupported = entry.substr(key.size());
        }
        break;
      }
      default: break;  // a key from a newer writer: skip it
    }
    p += 6 + len;
  }
  skipped_ += end - p;  // a partial entry at the end
}

}  // namespace trainprof::collector::decode
