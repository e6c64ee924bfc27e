#include "collector/read/trace_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collector/read/cuda_chunk_index.h"
#include "collector/read/cuda_records.h"
#include "collector/read/kineto_reader.h"
#include "collector/read/nvtx_matcher.h"
#include "collector/read/record_scan.h"
#include "collector/read/torch_op_ranges.h"
#include "collector/read/tsc_convert.h"
#include "trainprof/phases.h"
#include "trainprof/records.h"
#include "trainprof/torch_ops.h"

namespace trainprof::collector {
namespace {

using format::ChunkHeader;
using format::FileHeader;
using format::RecordTag;
namespace fr = format::rec;
using namespace scan;  // NOLINT: the record scanning constants and ReadVarints

static_assert(std::endian::native == std::endian::little,
              "the trace format is little-endian; the reader loads fields directly");

// Sanity bounds for header fields. The writer uses 16 KiB and 64 KiB; anything past these is a
// damaged header, and trusting it would make the slot arithmetic meaningless.
constexpr uint64_t kMaxHeaderRegion = 64ull << 20;
constexpr uint64_t kMaxChunkSize = 1ull << 30;
constexpr size_t kMaxErrorsPerFile = 32;  // further problems are only counted
// A header clock value at or past 2^62 ns (146 years of CLOCK_MONOTONIC uptime; CLOCK_REALTIME in
// the year 2116) is not one a writer took: a damaged header (0xFF bytes, random ones).
constexpr uint64_t kMaxClockNs = 1ull << 62;
// The header's end and the PROCESS_END record are read together at exit (inject/runtime.cc
// RecordEnd); farther apart than this, one of them is damaged (the record, decoded, is trusted).
constexpr uint64_t kMaxEndSkewNs = 1'000'000'000;

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

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

// One chunk slot as the reader found it: where it is, whose it is, and its committed records.
struct ChunkDesc {
  uint64_t slot = 0, offset = 0;  // slot number, file offset
  uint32_t tid = 0, thread_index = 0, seq = 0;
  uint64_t base_ns = 0;   // the dt chain's base, on the file's recording clock (ns or TSC ticks)
  uint64_t gpu_base_ns = 0;  // GPU activity's zs/ze base, CLOCK_MONOTONIC ns (TSC files: sync_ns)
  TscPair sync, last;     // TSC files: the chunk's calibration pairs (ticks 0: none)
  uint64_t data_begin = 0, data_end = 0;  // the committed records' bytes in the file
  bool cut = false;  // data_end was clamped (end of file, or committed beyond the chunk)
};

// Where the decoder's bytes come from: a buffer already in memory, or a file read piecewise.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  uint64_t size() const { return size_; }
  /// Bytes [off, off + len), fewer where the data ends (or the file shrank); valid until the next
  /// View call.
  virtual std::span<const uint8_t> View(uint64_t off, uint64_t len) = 0;
  /// A read error met by View ("" if none).
  const std::string& error() const { return error_; }
  /// The first offset >= off that may hold data (not in a hole of a sparse file); size() if none.
  virtual uint64_t NextData(uint64_t off) { return off; }

 protected:
  uint64_t size_ = 0;
  std::string error_;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::span<const uint8_t> data) : data_(data) { size_ = data.size(); }
  std::span<const uint8_t> View(uint64_t off, uint64_t len) override {
    if (off >= size_) return {};
    return data_.subspan(off, std::min(len, size_ - off));
  }

 private:
  std::span<const uint8_t> data_;
};

// pread rather than mmap: a file that shrinks while we read it (a live process, a copy in
// progress) would raise SIGBUS through a mapping; pread just returns less. One buffer of the
// largest piece asked for (a chunk): memory does not grow with the file.
class FileSource final : public ByteSource {
 public:
  FileSource(int fd, uint64_t size) : fd_(fd) { size_ = size; }
  uint64_t NextData(uint64_t off) override {
    const off_t data = ::lseek(fd_, static_cast<off_t>(off), SEEK_DATA);
    if (data >= 0) return static_cast<uint64_t>(data);
    return errno == ENXIO ? size_ : off;  // ENXIO: only a hole after off; other errors: no holes known
  }
  std::span<const uint8_t> View(uint64_t off, uint64_t len) override {
    if (off >= size_) return {};
    len = std::min(len, size_ - off);
    if (buf_.size() < len) buf_.resize(len);
    uint64_t got = 0;
    while (got < len) {
      ssize_t n = ::pread(fd_, buf_.data() + got, len - got, static_cast<off_t>(off + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        if (error_.empty()) error_ = std::string("read error at byte ") + std::to_string(off + got) + ": " + std::strerror(errno);
        break;
      }
      if (n == 0) break;
      got += static_cast<uint64_t>(n);
    }
    return {buf_.data(), got};
  }

 private:
  int fd_;
  std::vector<uint8_t> buf_;
};

// The STRING definitions of one image: raw id → bytes. Ids are dense from 1 in files the writer
// wrote, so ids below a bound that grows with the file (4 bytes a slot, at most the file's size)
// take a vector slot; others (forged, damaged) a hash-map entry. The bytes live in one arena: a
// million names cost their bytes and ~16 bytes each, not a std::string and a map node each.
class DefinedStrings {
 public:
  explicit DefinedStrings(uint64_t file_bytes) : dense_limit_(std::max<uint64_t>(uint64_t{1} << 16, file_bytes / 4)) {}
  /// Index of raw's definition, or UINT32_MAX.
  uint32_t Find(uint64_t raw) const {
    if (raw < dense_limit_) return raw < dense_.size() && dense_[raw] != 0 ? dense_[raw] - 1 : UINT32_MAX;
    auto it = sparse_.find(raw);
    return it == sparse_.end() ? UINT32_MAX : it->second;
  }
  bool contains(uint64_t raw) const { return Find(raw) != UINT32_MAX; }
  void Add(uint64_t raw, std::string_view bytes) {
    const auto index = static_cast<uint32_t>(spans_.size());
    if (raw < dense_limit_) {
      if (dense_.size() <= raw) dense_.resize(std::max<uint64_t>(raw + 1, dense_.size() * 2), 0);
      dense_[raw] = index + 1;
    } else {
      sparse_.emplace(raw, index);
    }
    spans_.push_back({arena_.size(), bytes.size()});
    arena_.append(bytes);
  }
  size_t size() const { return spans_.size(); }
  std::string_view bytes(uint32_t index) const {
    return std::string_view(arena_).substr(spans_[index].first, spans_[index].second);
  }

 private:
  uint64_t dense_limit_;
  std::vector<uint32_t> dense_;  // raw → index + 1 (0: not defined)
  std::unordered_map<uint64_t, uint32_t> sparse_;
  std::vector<std::pair<uint64_t, uint64_t>> spans_;  // offset, length in arena_
  std::string arena_;
};

class Decoder {
 public:
  Decoder(ByteSource* src, FileStatus* status, TraceImage* image, const ReadOptions& options)
      : src_(src),
        size_(src->size()),
        st_(*status),
        img_(*image),
        keep_(options.keep == KeepNvtx::kStreamed ? KeepNvtx::kPhases : options.keep),
        nvtx_sink_(options.nvtx_sink),
        nvtx_names_(options.nvtx_names),
        cuda_(&image->cuda, [this](uint64_t raw) { return StringRef(raw); }, options.cuda_sink,
              options.keep_cuda == KeepCuda::kAll, options.keep_cuda == KeepCuda::kStackedCalls,
              options.cuda_digest ? &image->cuda_digest : nullptr),
        defined_strings_(size_),
        small_ids_(std::max<uint64_t>(kSmallIds, size_ / 4)),
        max_undefined_refs_(std::max<uint64_t>(kMinUndefinedRefs, size_ / 64)) {
    image->nvtx_complete = keep_ == KeepNvtx::kAll;
    if (options.cuda_index) {
      index_ = std::make_unique<CudaChunkIndex>();
      cuda_.Track(&chunk_span_, &unreturned_, &index_->kernel_configs);
    }
  }
  /// The CUDA chunk index (null: not asked for, or none could be made), with the file's identity
  /// still to be filled; called once, after Resolve.
  std::unique_ptr<CudaChunkIndex> TakeCudaIndex() { return std::move(index_); }

  bool ReadHeader();
  /// The header's clock values a writer cannot have taken (damage): said, and left unknown.
  void CheckHeaderClocks();
  /// Once the records are read: a start after the first record, an end before the start or away
  /// from the PROCESS_END record (damage): said, and taken from the records.
  void CheckClocksAgainstRecords();
  /// Which clock the timed records are on (tsc_), from the header's flag bit 4 and, where it
  /// disagrees with them, the TSC fields: said as header damage.
  void DecideClock(const std::vector<ChunkDesc>& chunks);
  /// The file's (TSC, CLOCK_MONOTONIC) pairs: the header's start pair (when start_tsc and the
  /// start are known) and the chunks' sync and last pairs; a chunk's pair with ticks before its
  /// base_ns (the thread's earlier record) is no TSC reading: counted in *before_base, left out.
  std::vector<TscPair> CalibrationPairs(const std::vector<ChunkDesc>& chunks, size_t* before_base) const;
  void ReadMetadata();
  void ReadChunks();
  /// Ends decoding: the source is not used afterwards.
  void EndOfData();
  /// Maps the file's ids into `pool` (which it interns into).
  void Resolve(StringPool* pool);
  /// The stacks' refs to pool ids, stacks sorted by id, uses of ids no STACK defines said.
  void ResolveStacks(const std::vector<StringId>& string_pool, const std::vector<StringId>& domain_pool);
  uint64_t skipped() const { return skipped_; }

 private:
  /// A problem of `kind` (a file entry of model/losses.def), `n` of them, said as `what`.
  void Error(Loss kind, std::string what, uint64_t n = 1) {
    st_.losses[kind] += n;
    if (st_.errors.size() < kMaxErrorsPerFile) {
      st_.errors.push_back(std::move(what));
    } else {
      ++errors_dropped_;
    }
  }
  static std::string Num(uint64_t v) { return std::to_string(v); }

  /// The ref of string id `raw` (0 for 0), made at its first use. Inline: a known small id.
  [[gnu::always_inline]] uint32_t StringRef(uint64_t raw) {
    if (raw == 0) return 0;
    return raw < small_string_ref_.size() && small_string_ref_[raw] != 0 ? small_string_ref_[raw] : StringRefSlow(raw);
  }
  uint32_t StringRefSlow(uint64_t raw);
  /// The ref of domain id `raw` (0 for 0), made at its first use. Inline: a known small id.
  [[gnu::always_inline]] uint32_t DomainRef(uint64_t raw) {
    if (raw == 0) return 0;
    return raw < small_domain_ref_.size() && small_domain_ref_[raw] != 0 ? small_domain_ref_[raw] : DomainRefSlow(raw);
  }
  uint32_t DomainRefSlow(uint64_t raw);
  uint32_t ThreadFor(const ChunkDesc& c);
  /// The CUDA chunk index around a chunk's decode: its start state noted (returns where it begins
  /// in index_->open), then kept with the chunk's span if the chunk completed a CUDA record.
  size_t IndexChunkStart();
  void IndexChunkEnd(const ChunkDesc& c, uint32_t thread, size_t open_before);
  /// `kSink`: an NvtxSink is set (the exporters' second read); the report's decode has none of
  /// its bookkeeping.
  template <bool kSink>
  void DecodeChunk(const ChunkDesc& c, uint32_t thread);
  bool KeepEvent(uint32_t domain_ref);
  /// Whether a domain is format::kTorchOpsDomain (its ranges are operators, not NVTX ranges).
  bool IsOpsDomain(uint32_t domain_ref);
  /// Whether domain `domain_ref`'s name is one of the string ids `names`: 0 not known yet, 1 no,
  /// 2 yes; cached in `known` (by domain ref).
  uint8_t DomainIs(uint32_t domain_ref, const std::unordered_set<uint64_t>& names, std::vector<uint8_t>* known);
  /// A STACK record's frames (docs/trace-format.md, "Stacks") into img_.stacks; damage said.
  void AddStack(uint64_t id, std::string_view bytes, uint64_t at);

  ByteSource* src_;
  uint64_t size_;
  FileStatus& st_;
  TraceImage& img_;
  KeepNvtx keep_;
  NvtxSink* nvtx_sink_;
  const TraceImage* nvtx_names_;
  NvtxMatcher matcher_;
  TorchOpRanges ops_;
  CudaRecordDecoder cuda_;
  uint64_t skipped_ = 0;
  size_t errors_dropped_ = 0;
  uint32_t header_region_ = 0, chunk_size_ = 0;        // from the header
  uint32_t metadata_offset_ = 0, metadata_size_ = 0;
  bool metadata_cut_ = false, shrank_ = false;

  // Raw ids of the file are image-local. While decoding, events hold dense "refs" to them; Resolve()
  // maps refs to pool ids once every definition (possibly in a later chunk) has been seen.
  std::vector<uint64_t> string_ref_raw_{0};
  std::unordered_map<uint64_t, uint32_t> string_ref_of_;
  std::vector<uint32_t> small_string_ref_;  // raw id < kSmallIds → ref (0 = none yet)
  std::vector<uint64_t> domain_ref_raw_{0};
  std::unordered_map<uint64_t, uint32_t> domain_ref_of_;   // raw ids >= kMaxDomainIds
  std::vector<uint32_t> small_domain_ref_;                 // raw id < kMaxDomainIds → ref (0 = none yet)
  DefinedStrings defined_strings_;                          // interned into the pool by Resolve
  // Raw ids below small_ids_ map to refs through small_string_ref_ (4 bytes a slot, at most the
  // file's size in all); others through string_ref_of_.
  uint64_t small_ids_;
  // A forged file can name a new undefined string id in every record: each would cost a ref, a
  // range row and a pool name. Past max_undefined_refs_ ids used before any definition (the
  // writer defines every id before its first use; see Resolve for threads decoded out of order),
  // further ones share one ref, named "<undefined strings>", and count as damage.
  uint64_t max_undefined_refs_;
  uint64_t undefined_refs_ = 0;      // refs made for ids not defined when first used
  uint32_t overflow_ref_ = 0;        // the shared ref (0: none yet)
  uint64_t overflow_uses_ = 0;       // uses mapped to it
  static constexpr uint64_t kMinUndefinedRefs = 1 << 16;
  std::unordered_set<uint64_t> phase_strings_;              // raw ids of strings == kPhaseDomain
  std::vector<uint8_t> domain_is_phase_;                    // by domain ref: 0 unknown, 1 no, 2 yes
  std::unordered_set<uint64_t> ops_strings_;                // raw ids of strings == kTorchOpsDomain
  std::vector<uint8_t> domain_is_ops_;                      // by domain ref: 0 unknown, 1 no, 2 yes
  std::unordered_map<uint64_t, uint64_t> domain_names_;     // raw domain id → raw string id
  std::unordered_map<uint32_t, uint32_t> thread_names_;     // tid → string ref
  std::unordered_map<uint32_t, uint32_t> thread_of_index_;  // ChunkHeader::thread_index → dense
  uint32_t role_ref_ = 0;
  std::vector<uint32_t> env_refs_;  // kProcessEnv "NAME=value" string refs, in decoding order
  std::unordered_set<uint64_t> stack_ids_;  // STACK ids defined (the first definition is kept)
  static constexpr uint64_t kSmallIds = 1 << 16;
  // The TSC recording clock (kFlagTscClock): ticks → ns, from the header's and chunks' pairs.
  bool tsc_ = false;
  uint32_t tsc_khz_ = 0;
  uint64_t start_tsc_ = 0;
  std::shared_ptr<TscConverter> tsc_to_ns_;
  // ReadOptions::cuda_index: filled as the chunks are decoded; null once an index would not be
  // exact or small (read/cuda_chunk_index.h).
  std::unique_ptr<CudaChunkIndex> index_;
  CudaSpan chunk_span_;        // the CUDA span of the chunk being decoded
  uint64_t enters_before_ = 0;  // CUDA_API_ENTER records met before it
  std::vector<SeqCall> unreturned_;
  bool start_unknown_ = false;  // start_monotonic_ns damaged: the start is the first record's time
};

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

// " (at byte N)": where a header field a message names lies in the file.
std::string AtByte(size_t offset) { return " (at byte " + std::to_string(offset) + ")"; }

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

void Decoder::ReadChunks() {
  const uint64_t size = size_;
  if (size < header_region_) {
    st_.truncated = true;
    if (!metadata_cut_) {
      Error(Loss::header_errors, "file truncated at byte " + Num(size) + ", inside the header region (" + Num(header_region_) + " bytes)");
    }
    return;
  }
  bool cut_reported = false;
  size_t bad_chunk_headers = 0;  // chunks skipped for their header, or with a damaged sequence number
  std::vector<ChunkDesc> chunks;
  const uint64_t slots = (size - header_region_ + chunk_size_ - 1) / chunk_size_;
  for (uint64_t k = 0; k < slots; ++k) {
    const uint64_t off = header_region_ + k * chunk_size_;
    const uint64_t avail = std::min<uint64_t>(chunk_size_, size - off);
    const std::span<const uint8_t> head = src_->View(off, std::min<uint64_t>(avail, sizeof(ChunkHeader)));
    if (head.size() < std::min<uint64_t>(avail, sizeof(ChunkHeader))) {
      shrank_ = true;  // reported by EndOfData
      break;
    }
    if (avail < sizeof(ChunkHeader)) {
      if (std::all_of(head.begin(), head.end(), [](uint8_t b) { return b == 0; })) continue;
      st_.truncated = true;
      cut_reported = true;
      Error(Loss::chunk_errors, "chunk " + Num(k) + " truncated at byte " + Num(size) + " (inside its chunk header)");
      skipped_ += avail;
      continue;
    }
    const uint32_t magic = Load<uint32_t>(head.data() + offsetof(ChunkHeader, magic));
    if (magic == 0) {
      // Claimed but not yet initialised, or preallocated zeros. In a sparse file, jump over the
      // hole (a file of a few chunks can claim gigabytes of slots).
      const uint64_t data = src_->NextData(off);
      if (data >= off + chunk_size_) k = std::max(k, (data - header_region_) / chunk_size_ - 1);
      continue;
    }
    if (magic != format::kChunkMagic) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08x", magic);
      Error(Loss::chunk_errors, "chunk " + Num(k) + ": bad chunk magic " + hex + " at byte " + Num(off));
      skipped_ += avail;
      ++bad_chunk_headers;
      continue;
    }
    ChunkDesc c;
    c.slot = k;
    c.offset = off;
    c.tid = Load<uint32_t>(head.data() + offsetof(ChunkHeader, tid));
    c.thread_index = Load<uint32_t>(head.data() + offsetof(ChunkHeader, thread_index));
    c.seq = Load<uint32_t>(head.data() + offsetof(ChunkHeader, thread_seq));
    c.base_ns = Load<uint64_t>(head.data() + offsetof(ChunkHeader, base_ns));
    if (img_.version >= 3) {  // zero in files on CLOCK_MONOTONIC; DecideClock checks that
      c.sync = {Load<uint64_t>(head.data() + offsetof(ChunkHeader, sync_ticks)),
                Load<uint64_t>(head.data() + offsetof(ChunkHeader, sync_ns))};
      c.last = {Load<uint64_t>(head.data() + offsetof(ChunkHeader, last_ticks)),
                Load<uint64_t>(head.data() + offsetof(ChunkHeader, last_ns))};
    }
    uint64_t committed = Load<uint32_t>(head.data() + offsetof(ChunkHeader, committed));
    const uint64_t room = chunk_size_ - sizeof(ChunkHeader);
    if (committed > room) {
      Error(Loss::chunk_errors, "chunk " + Num(k) + ": committed count " + Num(committed) + " beyond chunk size " +
            Num(chunk_size_) + " (at byte " + Num(off + offsetof(ChunkHeader, committed)) + ")");
      committed = room;
      c.cut = true;
    }
    c.data_begin = off + sizeof(ChunkHeader);
    c.data_end = c.data_begin + committed;
    if (c.data_end > size) {
      st_.truncated = true;
      cut_reported = true;
      Error(Loss::chunk_errors, "chunk " + Num(k) + " truncated at byte " + Num(size) + " (its records end at byte " + Num(c.data_end) + ")");
      c.data_end = size;
      c.cut = true;
    }
    chunks.push_back(c);
  }
  const uint64_t claimed_end = header_region_ + uint64_t{img_.chunks_claimed} * chunk_size_;
  if (claimed_end > size) {
    st_.truncated = true;
    if (!cut_reported) {
      Error(Loss::chunk_errors, "file truncated at byte " + Num(size) + " (" + Num(img_.chunks_claimed) +
            (img_.chunks_claimed == 1 ? " chunk claimed ends" : " chunks claimed end") + " at byte " +
            Num(claimed_end) + ")");
    }
  }

  DecideClock(chunks);
  for (ChunkDesc& c : chunks) c.gpu_base_ns = tsc_ ? c.sync.ns : c.base_ns;
  bool times_lost = false;  // a TSC file none of whose pairs converts: its records are not read
  if (tsc_) {
    std::vector<std::string> damage;  // what is wrong with the clock fields, said after the verdict
    if (start_tsc_ == 0 && !start_unknown_) {
      damage.push_back("bad header: start_tsc 0 in a file on the TSC clock, the start pair is left out of the clock calibration" +
                       AtByte(offsetof(FileHeader, start_tsc)));
    }
    size_t before_base = 0;
    std::vector<TscPair> pairs = CalibrationPairs(chunks, &before_base);
    if (before_base != 0) {
      damage.push_back("clock calibration: " + Num(before_base) + (before_base == 1 ? " pair" : " pairs") +
                       " (TSC, CLOCK_MONOTONIC) before the records of their chunk (its base_ns), ignored");
    }
    TscConverter::Rejected rejected;
    tsc_to_ns_ = std::make_shared<TscConverter>(std::move(pairs), tsc_khz_, &rejected);
    auto said = [&](size_t n, const std::string& why) {
      if (n == 0) return;
      damage.push_back("clock calibration: " + Num(n) + (n == 1 ? " pair" : " pairs") +
                       " (TSC, CLOCK_MONOTONIC) " + why + ", ignored");
    };
    said(rejected.out_of_order, "out of order");
    said(rejected.off_line, "off the line through the others");
    said(rejected.no_rate, rejected.no_rate_khz != 0 ? "on a line of " + Num(static_cast<uint64_t>(rejected.no_rate_khz + 0.5)) +
                                                           " kHz, no TSC's rate"
                                                     : "without a TSC rate to convert with");
    if (tsc_khz_ != 0 && !TscConverter::PlausibleKhz(tsc_khz_)) {
      damage.push_back("bad header: tsc_khz " + Num(tsc_khz_) + " is no TSC's rate (" + Num(TscConverter::kMinTscKhz) +
                       " to " + Num(TscConverter::kMaxTscKhz) + " kHz)" +
                       (rejected.rate_khz != 0 ? ", the rate of the file's calibration pairs (" +
                                                 Num(static_cast<uint64_t>(rejected.rate_khz + 0.5)) +
                                                 " kHz) converts the times"
                                               : "") +
                       AtByte(offsetof(FileHeader, tsc_khz)));
    } else if (rejected.rate_khz != 0) {
      damage.push_back("bad header: tsc_khz " + Num(tsc_khz_) + " is off the rate of the file's calibration pairs (" +
                       Num(static_cast<uint64_t>(rejected.rate_khz + 0.5)) +
                       " kHz), which convert the times (at byte " + Num(offsetof(FileHeader, tsc_khz)) + ")");
    }
    if (!tsc_to_ns_->usable()) {
      // Ticks are never read as ns: without a conversion the file's times are unknown. Said
      // first: the warning line shows the first few of a file's errors.
      Error(Loss::header_errors, "clock calibration: no usable (TSC, CLOCK_MONOTONIC) pair, the times cannot be converted: "
                                 "the records are not read");
      times_lost = true;
    }
    for (std::string& d : damage) Error(Loss::header_errors, std::move(d));
    if (!times_lost) {
      // A kept pair lies on the conversion exactly; one left out is off it by more than 1 ms.
      auto off_line = [&](const TscPair& p) {
        const uint64_t ns = tsc_to_ns_->ToNs(p.ticks);
        return (ns > p.ns ? ns - p.ns : p.ns - ns) > TscConverter::kSameTimeNs;
      };
      if (!start_unknown_ && start_tsc_ != 0 && off_line({start_tsc_, img_.start_ns})) {
        Error(Loss::header_errors, "bad header: the start pair (start_tsc " + Num(start_tsc_) + AtByte(offsetof(FileHeader, start_tsc)) +
                                       ", start_monotonic_ns " + Num(img_.start_ns) + AtByte(offsetof(FileHeader, start_monotonic_ns)) +
                                       ") is off the clock calibration line, the start is taken from the first record");
        start_unknown_ = true;
      }
      // A chunk's GPU activity is timed from its sync pair's ns (ChunkHeader::sync_ns): with the
      // pair off the line, those records have no usable time (counted in invalid_timestamps).
      for (ChunkDesc& c : chunks) {
        if (c.sync.ticks != 0 && off_line(c.sync)) c.gpu_base_ns = CudaRecordDecoder::kLostBase;
      }
    }
  }

  // Each thread's chunks in sequence order; threads in writer order.
  std::sort(chunks.begin(), chunks.end(), [](const ChunkDesc& a, const ChunkDesc& b) {
    if (a.thread_index != b.thread_index) return a.thread_index < b.thread_index;
    if (a.seq != b.seq) return a.seq < b.seq;
    return a.slot < b.slot;
  });
  // A thread numbers its chunks 0, 1, 2, ... as it claims them (ChunkHeader::thread_seq), and
  // writes each one's header before it claims the next: a number missing is a chunk lost
  // (zeroed pages, a header overwritten), with the definitions and records it held.
  uint64_t untimed_gpu = 0;  // GPU activity in chunks whose time base (sync pair) is damaged
  uint64_t missing = 0;
  std::string missing_where;
  size_t missing_runs = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const ChunkDesc& c = chunks[i];
    const bool same_thread = i > 0 && chunks[i - 1].thread_index == c.thread_index;
    const uint64_t expected = same_thread ? uint64_t{chunks[i - 1].seq} + 1 : 0;
    if (c.seq > expected && c.seq - expected > slots) {  // more than the file holds: the number is damaged
      ++bad_chunk_headers;  // its true number looks missing: not said again
      Error(Loss::chunk_errors, "chunk " + Num(c.slot) + ": thread_seq " + Num(c.seq) + " is past the file's " + Num(slots) +
                                    " chunks (at byte " + Num(c.offset + offsetof(ChunkHeader, thread_seq)) + ")");
    } else if (c.seq > expected) {
      missing += c.seq - expected;
      if (missing_runs++ < 3) {
        missing_where += (missing_runs > 1 ? "; " : ": ") + std::string("thread ") + Num(c.thread_index) + " (tid " +
                         Num(c.tid) + ") " + (c.seq - expected == 1 ? "number " + Num(expected)
                                                                   : "numbers " + Num(expected) + "-" + Num(c.seq - 1));
      }
    }
  }
  // Chunks skipped for a bad header were said already, and are likely the ones missing.
  if (missing > bad_chunk_headers) {
    if (missing_runs > 3) missing_where += "; +" + Num(missing_runs - 3) + " more";
    Error(Loss::chunk_errors, Num(missing) + (missing == 1 ? " chunk" : " chunks") +
                                  " missing from their thread's sequence (zeroed or overwritten), with the records " +
                                  "and definitions they held" + missing_where);
  }
  for (size_t i = 0; i < chunks.size(); ++i) {
    const ChunkDesc& c = chunks[i];
    if (times_lost) {
      skipped_ += c.data_end - c.data_begin;
      continue;
    }
    if (i > 0 && chunks[i - 1].thread_index == c.thread_index && chunks[i - 1].seq == c.seq) {
      // A copy, or a damaged number: which one holds the thread's records there is unknown, and
      // reading both would count records twice.
      Error(Loss::chunk_errors, "chunks " + Num(chunks[i - 1].slot) + " and " + Num(c.slot) + " are both sequence " + Num(c.seq) +
            " of thread " + Num(c.thread_index) + ": chunk " + Num(c.slot) + " not read");
      skipped_ += c.data_end - c.data_begin;
      continue;
    }
    uint32_t thread = ThreadFor(c);
    if (thread == UINT32_MAX) {
      skipped_ += c.data_end - c.data_begin;
      continue;
    }
    // A gap in the thread's sequence: chunks it wrote were lost (a damaged chunk header, zeroed
    // pages), and with them maybe the exits of its open CUDA calls.
    if (i > 0 && chunks[i - 1].thread_index == c.thread_index && c.seq > chunks[i - 1].seq + 1) {
      cuda_.LoseOpenCalls(thread);
    }
    const uint64_t invalid_before = img_.cuda.invalid_timestamps;
    const size_t open_before = index_ ? IndexChunkStart() : 0;
    if (nvtx_sink_ != nullptr) {
      DecodeChunk<true>(c, thread);
    } else {
      DecodeChunk<false>(c, thread);
    }
    if (index_) IndexChunkEnd(c, thread, open_before);
    if (c.gpu_base_ns == CudaRecordDecoder::kLostBase) untimed_gpu += img_.cuda.invalid_timestamps - invalid_before;
  }
  if (untimed_gpu > 0) {
    Error(Loss::chunk_errors, Num(untimed_gpu) + (untimed_gpu == 1 ? " GPU activity record" : " GPU activity records") +
                                  " left out: the calibration pair of their chunk, their time base, is off the clock line");
  }
}

uint32_t Decoder::ThreadFor(const ChunkDesc& c) {
  auto [it, inserted] = thread_of_index_.try_emplace(c.thread_index, static_cast<uint32_t>(img_.threads.size()));
  if (inserted) {
    if (img_.threads.size() >= kMaxThreadsPerImage) {
      thread_of_index_.erase(it);
      Error(Loss::chunk_errors, "chunk " + Num(c.slot) + ": more than " + Num(kMaxThreadsPerImage) + " threads");
      return UINT32_MAX;
    }
    ThreadInfo t;
    t.tid = c.tid;
    t.writer_index = c.thread_index;
    img_.threads.push_back(t);
  } else if (img_.threads[it->second].tid != c.tid) {
    Error(Loss::chunk_errors, "chunk " + Num(c.slot) + ": thread " + Num(c.thread_index) + " has tid " + Num(c.tid) +
          ", its earlier chunks tid " + Num(img_.threads[it->second].tid));
  }
  ++img_.threads[it->second].chunks;
  return it->second;
}

size_t Decoder::IndexChunkStart() {
  chunk_span_ = {};
  enters_before_ = cuda_.enters();
  const size_t before = index_->open.size();
  if (cuda_.open_count() > CudaChunkIndex::kMaxOpenCalls || before + cuda_.open_count() > CudaChunkIndex::kMaxOpenTotal) {
    index_.reset();  // a forged file's calls left open by the thousand: no small start states
    cuda_.Track(nullptr, nullptr, nullptr);
    return 0;
  }
  cuda_.OpenCalls(&index_->open);
  return before;
}

void Decoder::IndexChunkEnd(const ChunkDesc& c, uint32_t thread, size_t open_before) {
  if (!index_) return;
  if (!chunk_span_.any()) {  // nothing completed here: a later chunk's start state has its calls
    index_->open.resize(open_before);
    return;
  }
  CudaChunkIndex::Chunk k;
  k.data_begin = c.data_begin;
  k.data_end = c.data_end;
  k.base = c.base_ns;
  k.gpu_base = c.gpu_base_ns;
  k.thread = thread;
  k.cut = c.cut;
  k.span = chunk_span_;
  k.open_begin = static_cast<uint32_t>(open_before);
  k.open_end = static_cast<uint32_t>(index_->open.size());
  k.enters_before = enters_before_;
  index_->chunks.push_back(k);
}

uint32_t Decoder::StringRefSlow(uint64_t raw) {
  if (raw == 0) return 0;
  uint32_t* ref;
  if (raw < small_ids_) {
    if (small_string_ref_.size() <= raw) {
      small_string_ref_.resize(std::max<uint64_t>({raw + 1, 256, small_string_ref_.size() * 2}), 0);
    }
    ref = &small_string_ref_[raw];
    if (*ref != 0) return *ref;
  } else {
    auto it = string_ref_of_.find(raw);
    if (it != string_ref_of_.end()) return it->second;
    ref = nullptr;
  }
  if (!defined_strings_.contains(raw) && undefined_refs_++ >= max_undefined_refs_) {
    if (overflow_ref_ == 0) {
      overflow_ref_ = static_cast<uint32_t>(string_ref_raw_.size());
      string_ref_raw_.push_back(0);  // no raw id: Resolve names it
    }
    ++overflow_uses_;
    return overflow_ref_;  // not remembered: a use after the id's definition gets its own ref
  }
  const auto made = static_cast<uint32_t>(string_ref_raw_.size());
  string_ref_raw_.push_back(raw);
  if (ref != nullptr) {
    *ref = made;
  } else {
    string_ref_of_.emplace(raw, made);
  }
  return made;
}

uint32_t Decoder::DomainRefSlow(uint64_t raw) {
  if (raw == 0) return 0;
  // The writer's ids (below kMaxDomainIds) through a vector; others (forged) through the map.
  if (raw < format::kMaxDomainIds) {
    if (small_domain_ref_.size() <= raw) small_domain_ref_.resize(format::kMaxDomainIds, 0);
    uint32_t& ref = small_domain_ref_[raw];
    if (ref == 0) {
      ref = static_cast<uint32_t>(domain_ref_raw_.size());
      domain_ref_raw_.push_back(raw);
    }
    return ref;
  }
  auto [it, inserted] = domain_ref_of_.try_emplace(raw, static_cast<uint32_t>(domain_ref_raw_.size()));
  if (inserted) domain_ref_raw_.push_back(raw);
  return it->second;
}

uint8_t Decoder::DomainIs(uint32_t domain_ref, const std::unordered_set<uint64_t>& names, std::vector<uint8_t>* known) {
  if (known->size() <= domain_ref) known->resize(domain_ref + 1, 0);
  uint8_t& k = (*known)[domain_ref];
  if (k == 0) {
    // The writer defines a domain (and its name) before using it; until both are seen (a damaged
    // file), the answer is unknown (0) and asked again next time.
    auto it = domain_names_.find(domain_ref_raw_[domain_ref]);
    if (it == domain_names_.end() || !defined_strings_.contains(it->second)) return 0;
    k = names.contains(it->second) ? 2 : 1;
  }
  return k;
}

bool Decoder::KeepEvent(uint32_t domain_ref) {
  if (keep_ == KeepNvtx::kAll) return true;
  if (domain_ref == 0) return false;  // the default domain: never the phases'
  return DomainIs(domain_ref, phase_strings_, &domain_is_phase_) != 1;  // unknown: kept
}

bool Decoder::IsOpsDomain(uint32_t domain_ref) {
  if (domain_ref == 0 || ops_strings_.empty()) return false;
  return DomainIs(domain_ref, ops_strings_, &domain_is_ops_) == 2;
}

template <bool kSink>
void Decoder::DecodeChunk(const ChunkDesc& c, uint32_t thread) {
  const std::span<const uint8_t> view = src_->View(c.data_begin, c.data_end - c.data_begin);
  const uint8_t* p = view.data();
  // The file offset of a byte of the view, for messages.
  auto offset_of = [&](const uint8_t* q) { return c.data_begin + static_cast<uint64_t>(q - view.data()); };
  const uint8_t* const end = view.data() + view.size();
  const bool cut = c.cut || view.size() < c.data_end - c.data_begin;
  if (view.size() < c.data_end - c.data_begin) shrank_ = true;
  ThreadInfo& info = img_.threads[thread];
  // `ticks`: the dt chain's running sum on the file's recording clock; `now`: it in
  // CLOCK_MONOTONIC ns (the same number unless the file is on the TSC clock).
  uint64_t ticks = c.base_ns;
  std::optional<TscConverter::Cursor> tsc;
  if (tsc_) tsc.emplace(*tsc_to_ns_);
  uint64_t now = tsc ? tsc->ToNs(ticks) : ticks;
  // A record's varints after the tag and dt, in schema order (format/trainprof/records.def);
  // the cases below read them by name through format::Decode.
  uint64_t f[format::kMaxRecordFields];
  uint64_t dt = 0;
  // The previous timed record of this chunk, for an EVENT_STACK (none at the chunk's start).
  uint8_t prev_tag = 0;
  uint32_t prev_domain = 0, prev_name = 0;
  uint64_t prev_range = 0;
  size_t prev_kept = SIZE_MAX;  // its index in img_.nvtx when kept
  // The sink's event waits for the record after it, which may be its EVENT_STACK; any other timed
  // record, and the chunk's end (also where damage ends it early), hand it over.
  NvtxEvent pending;
  uint64_t pending_stack = 0;
  bool has_pending = false;
  auto hand_over = [&] {
    if (!kSink || !has_pending) return;
    has_pending = false;
    if (nvtx_names_ != nullptr) {
      const auto& names = nvtx_names_->string_of_ref;
      const auto& domains = nvtx_names_->domain_of_ref;
      pending.name = pending.name < names.size() ? names[pending.name] : 0;
      pending.domain = pending.domain < domains.size() ? domains[pending.domain] : 0;
    }
    nvtx_sink_->Event(pending, pending_stack);
  };
  struct AtExit {
    decltype(hand_over)& f;
    ~AtExit() {
      if constexpr (kSink) f();
    }
  } hand_over_at_exit{hand_over};
  // Damage from `rec` on: the rest of the chunk is skipped, and with it maybe the exits of the
  // thread's open CUDA calls (they are then not calls the process ended inside).
  auto lose_rest = [&](const uint8_t* rec) {
    skipped_ += static_cast<uint64_t>(end - rec);
    cuda_.LoseOpenCalls(thread);
  };
  // A timed record `delta` ticks after the one before it (the caller has checked for overflow):
  // the time now, and the image's first and last record times.
  auto advance = [&](uint64_t delta) __attribute__((always_inline)) {
    ticks += delta;
    now = tsc ? tsc->ToNs(ticks) : ticks;
    if (!img_.has_timed_records || now < img_.first_record_ns) img_.first_record_ns = now;
    if (!img_.has_timed_records || now > img_.last_record_ns) img_.last_record_ns = now;
    img_.has_timed_records = true;
  };
  while (p < end) {
    const uint8_t* const rec = p;
    const uint8_t tag = *p++;
    if (tag == 0 && cut) {
      // Past a committed count that overran the chunk: zeros are space nobody wrote.
      if (std::all_of(rec, end, [](uint8_t b) { return b == 0; })) return;
    }
    if constexpr (!kSink) {
      // Most records of a long trace are NVTX pushes, pops, marks, starts and ends: the report's
      // decode takes them here, with the generic path's effects (below) and none of its set-up
      // per record; pushes and pops, the most common, in code of their own. Anything unusual (a
      // record cut or damaged, a time overflow) goes down the generic path, which says what is
      // wrong.
      if (tag >= kPushTag && tag <= kEndTag) {
        uint64_t v[4] = {0, 0, 0, 0};  // the record's fields in schema order (records.def)
        const uint8_t* q = p;
        const uint64_t room = static_cast<uint64_t>(end - q);
        bool whole;
        switch (tag) {
          case kPushTag:
          case kMarkTag:  // domain, name, category
            whole = room >= kPushReadAhead && format::GetVarintFast(&q, &dt) && format::GetVarintFast(&q, &v[0]) &&
                    format::GetVarintFast(&q, &v[1]) && format::GetVarintFast(&q, &v[2]);
            break;
          case kStartTag:  // domain, name, category, range_id
            whole = room >= kStartReadAhead && format::GetVarintFast(&q, &dt) && format::GetVarintFast(&q, &v[0]) &&
                    format::GetVarintFast(&q, &v[1]) && format::GetVarintFast(&q, &v[2]) &&
                    format::GetVarintFast(&q, &v[3]);
            break;
          default:  // pop: domain; end: range_id
            whole = room >= kPopReadAhead && format::GetVarintFast(&q, &dt) && format::GetVarintFast(&q, &v[0]);
            break;
        }
        if (whole && dt <= UINT64_MAX - ticks) {
          p = q;
          advance(dt);
          ++img_.records;
          ++info.events;
          prev_tag = tag;
          prev_kept = SIZE_MAX;
          bool kept = false;
          NvtxEvent e;
          if (tag == kPushTag || tag == kPopTag) {
            const bool push = tag == kPushTag;
            const uint32_t domain = DomainRef(v[0]);
            const uint32_t name = push ? StringRef(v[1]) : 0;
            prev_domain = domain;
            prev_name = name;
            prev_range = 0;
            if (IsOpsDomain(domain)) {  // an operator, not a range
              if (push) {
                ops_.Push(thread, name, now);
              } else {
                ops_.Pop(thread, now, &img_.host_ops);
              }
              continue;
            }
            if (push) {
              matcher_.Push(thread, domain, name, now);
            } else {
              matcher_.Pop(thread, domain, now);
            }
            ++img_.nvtx_events;
            if (!KeepEvent(domain)) continue;
            e.kind_ = static_cast<uint8_t>(push ? NvtxKind::kPush : NvtxKind::kPop);
            e.domain = domain;
            e.name = name;
            e.category = static_cast<uint32_t>(push ? v[2] : 0);
            kept = true;
          } else {
            if (tag == kEndTag) {
              e.kind_ = static_cast<uint8_t>(NvtxKind::kEnd);
              e.range_id = v[0];
              matcher_.End(e.range_id, now);
              kept = keep_ == KeepNvtx::kAll;
            } else {
              e.domain = DomainRef(v[0]);
              e.name = StringRef(v[1]);
              e.category = static_cast<uint32_t>(v[2]);
              if (tag == kMarkTag) {
                e.kind_ = static_cast<uint8_t>(NvtxKind::kMark);
                matcher_.Mark(e.domain, e.name);
                kept = KeepEvent(e.domain);
              } else {
                e.kind_ = static_cast<uint8_t>(NvtxKind::kStart);
                e.range_id = v[3];
                matcher_.Start(e.domain, e.name, e.range_id, now);
                kept = keep_ == KeepNvtx::kAll;
              }
            }
            ++img_.nvtx_events;
            prev_domain = e.domain;
            prev_name = e.name;
            prev_range = e.range_id;
          }
          if (kept) {
            e.time_ns = now;
            e.thread = thread;
            prev_kept = img_.nvtx.size();
            img_.nvtx.push_back(e);
          }
          continue;
        }
      }
    }
    const format::RecordInfo* layout;
    bool whole;
    if (tag == kPushTag && static_cast<uint64_t>(end - p) >= kPushReadAhead) {
      // Most records of a long trace are pushes and pops: their varints without the layout
      // lookup and the loop over its fields (the same values ReadVarints reads).
      layout = &kPushLayout;
      whole = format::GetVarintFast(&p, &dt) && format::GetVarintFast(&p, &f[0]) &&
              format::GetVarintFast(&p, &f[1]) && format::GetVarintFast(&p, &f[2]);
    } else if (tag == kPopTag && static_cast<uint64_t>(end - p) >= kPopReadAhead) {
      layout = &kPopLayout;
      whole = format::GetVarintFast(&p, &dt) && format::GetVarintFast(&p, &f[0]);
    } else {
      layout = format::FindRecord(tag);
      if (layout == nullptr || layout->since > img_.version) {  // v1 files have no CUDA records
        Error(Loss::bad_record_tags, "bad record tag " + Num(tag) + " at byte " + Num(offset_of(rec)));
        lose_rest(rec);
        return;
      }
      whole = ReadVarints(*layout, &p, end, &dt, f);
    }
    const bool timed = layout->cls == format::RecordClass::kTimed;
    std::string_view bytes;
    if (whole && layout->has_bytes) {
      const uint64_t length = f[layout->field_count - 1];  // an S field is last: its length
      if (length > format::kMaxStringBytes) {
        Error(Loss::malformed_records, "string of " + Num(length) + " bytes at byte " + Num(offset_of(rec)) +
              " (longer than kMaxStringBytes " + Num(format::kMaxStringBytes) + ")");
        lose_rest(rec);
        return;
      }
      if (length > static_cast<uint64_t>(end - p)) {
        whole = false;
      } else {
        bytes = std::string_view(reinterpret_cast<const char*>(p), length);
        p += length;
      }
    }
    if (!whole) {
      // A record cut by the end of the data is expected where the data was cut (already
      // reported); inside committed bytes it is damage.
      if (!cut) {
        Error(Loss::malformed_records, "malformed record (tag " + Num(tag) + ") at byte " + Num(offset_of(rec)));
        lose_rest(rec);
      } else {
        skipped_ += static_cast<uint64_t>(end - rec);
      }
      return;
    }

    if (timed) {
      if (dt > UINT64_MAX - ticks) {
        Error(Loss::malformed_records, "time overflow (delta " + Num(dt) + " ns) at byte " + Num(offset_of(rec)));
        lose_rest(rec);
        return;
      }
      advance(dt);
    }
    ++img_.records;
    ++info.events;

    NvtxEvent e;
    e.time_ns = now;
    e.thread = thread;
    ProcessEvent pe;
    pe.time_ns = now;
    pe.thread = thread;
    // An NVTX event with a name (push, mark, start).
    auto named = [&](NvtxKind kind, uint64_t domain, uint64_t name, uint64_t category) __attribute__((always_inline)) {
      e.kind_ = static_cast<uint8_t>(kind);
      e.domain = DomainRef(domain);
      e.name = StringRef(name);
      e.category = static_cast<uint32_t>(category);
    };
    // Every NVTX event: counted, to the sink, and kept as keep_ says (`kept`: KeepEvent's answer).
    bool nvtx_event = false;
    auto seen = [&](bool kept) {
      ++img_.nvtx_events;
      if (kept) img_.nvtx.push_back(e);
      if constexpr (kSink) {
        hand_over();
        pending = e;
        pending_stack = 0;
        has_pending = nvtx_event = true;
      }
    };
    auto keep = [&] { seen(KeepEvent(e.domain)); };
    const size_t nvtx_before = img_.nvtx.size();
    auto process_event = [&](ProcessEventKind kind, uint64_t what, uint64_t value, int64_t code) {
      pe.kind = kind;
      pe.what = static_cast<uint32_t>(std::min<uint64_t>(what, UINT32_MAX));
      pe.value = value;
      pe.code = code;
      img_.process_events.push_back(pe);
    };
    switch (static_cast<RecordTag>(tag)) {
      case RecordTag::kRangePush: {
        const auto r = format::Decode<fr::RangePush>(f);
        named(NvtxKind::kPush, r.domain, r.name, r.category);
        if (IsOpsDomain(e.domain)) {
          ops_.Push(thread, e.name, now);
          break;
        }
        matcher_.Push(thread, e.domain, e.name, now);
        keep();
        break;
      }
      case RecordTag::kMark: {
        const auto r = format::Decode<fr::Mark>(f);
        named(NvtxKind::kMark, r.domain, r.name, r.category);
        matcher_.Mark(e.domain, e.name);
        keep();
        break;
      }
      case RecordTag::kRangeStart: {
        const auto r = format::Decode<fr::RangeStart>(f);
        named(NvtxKind::kStart, r.domain, r.name, r.category);
        e.range_id = r.range_id;
        matcher_.Start(e.domain, e.name, e.range_id, now);
        seen(keep_ == KeepNvtx::kAll);
        break;
      }
      case RecordTag::kRangePop:
        e.kind_ = static_cast<uint8_t>(NvtxKind::kPop);
        e.domain = DomainRef(format::Decode<fr::RangePop>(f).domain);
        if (IsOpsDomain(e.domain)) {
          ops_.Pop(thread, now, &img_.host_ops);
          break;
        }
        matcher_.Pop(thread, e.domain, now);
        keep();
        break;
      case RecordTag::kRangeEnd:
        e.kind_ = static_cast<uint8_t>(NvtxKind::kEnd);
        e.range_id = format::Decode<fr::RangeEnd>(f).range_id;
        matcher_.End(e.range_id, now);
        seen(keep_ == KeepNvtx::kAll);
        break;
      case RecordTag::kString: {
        const auto r = format::Decode<fr::String>(f, bytes);
        if (r.id != 0 && !defined_strings_.contains(r.id)) {
          defined_strings_.Add(r.id, r.bytes);
          if (r.bytes == format::kPhaseDomain) phase_strings_.insert(r.id);
          if (r.bytes == format::kTorchOpsDomain) ops_strings_.insert(r.id);
        }
        break;
      }
      case RecordTag::kDomain: {
        const auto r = format::Decode<fr::Domain>(f);
        if (r.domain != 0) domain_names_[r.domain] = r.name;
        break;
      }
      case RecordTag::kThreadName: {
        const auto r = format::Decode<fr::ThreadName>(f);
        if (r.tid <= UINT32_MAX) thread_names_[static_cast<uint32_t>(r.tid)] = StringRef(r.name);
        break;
      }
      case RecordTag::kRole:
        role_ref_ = StringRef(format::Decode<fr::Role>(f).name);
        break;
      case RecordTag::kProcessEnv:
        env_refs_.push_back(StringRef(format::Decode<fr::ProcessEnv>(f).name));
        break;
      case RecordTag::kProcessEnd: {
        const auto r = format::Decode<fr::ProcessEnd>(f);
        process_event(ProcessEventKind::kProcessEnd, r.kind, 0, r.code);
        break;
      }
      case RecordTag::kFork:
        process_event(ProcessEventKind::kFork, 0, format::Decode<fr::Fork>(f).pid, 0);
        break;
      case RecordTag::kExec:
        pe.text = StringRef(format::Decode<fr::Exec>(f).path);
        process_event(ProcessEventKind::kExec, 0, 0, 0);
        break;
      case RecordTag::kChildExit: {
        const auto r = format::Decode<fr::ChildExit>(f);
        process_event(ProcessEventKind::kChildExit, r.kind, r.pid, r.code);
        break;
      }
      case RecordTag::kMisuse: {
        const auto r = format::Decode<fr::Misuse>(f);
        process_event(ProcessEventKind::kMisuse, r.what, r.detail, 0);
        break;
      }
      case RecordTag::kStack: {
        const auto r = format::Decode<fr::Stack>(f, bytes);
        AddStack(r.id, r.bytes, offset_of(rec));
        break;
      }
      case RecordTag::kEventStack: {
        const uint64_t stack = format::Decode<fr::EventStack>(f).stack;
        if (stack == 0) break;
        switch (static_cast<RecordTag>(prev_tag)) {
          case RecordTag::kRangePush: matcher_.SetPushStack(thread, prev_domain, stack); break;
          case RecordTag::kRangeStart: matcher_.SetStartStack(prev_range, stack); break;
          case RecordTag::kMark: matcher_.MarkStack(prev_domain, prev_name, stack); break;
          case RecordTag::kCudaApiExit: cuda_.SetExitStack(stack); break;
          default: break;  // at a chunk's start or after another record: nothing to attach to
        }
        if (prev_kept != SIZE_MAX) img_.stacks.nvtx.push_back({prev_kept, stack});
        if (kSink && has_pending && pending_stack == 0) pending_stack = stack;  // the first of them
        break;
      }
      case RecordTag::kModule: {
        const auto r = format::Decode<fr::Module>(f);
        if (r.end <= r.start) {
          Error(Loss::malformed_records, "MODULE at byte " + Num(offset_of(rec)) + ": empty span [" + Num(r.start) +
                                             ", " + Num(r.end) + ") (left out)");
          break;
        }
        img_.stacks.modules.push_back({.bias = r.bias, .start = r.start, .end = r.end, .path = StringRef(r.path),
                                       .build_id = r.build_id == 0 ? 0 : StringRef(r.build_id)});
        break;
      }
      case RecordTag::kSample: {
        const auto r = format::Decode<fr::Sample>(f);
        img_.stacks.samples.push_back({.time_ns = now, .thread = thread, .stack = r.stack, .python_missed = r.python_missed});
        break;
      }
      case RecordTag::kSampleThreadLost: {
        const auto r = format::Decode<fr::SampleThreadLost>(f);
        img_.stacks.threads_not_sampled.push_back({.thread = thread, .reason = static_cast<uint32_t>(r.reason),
                                                   .error = r.error, .limit = r.limit, .queued = r.queued});
        break;
      }
      case RecordTag::kSamplePaused: {
        const uint64_t ns = format::Decode<fr::SamplePaused>(f).cpu_ns;
        img_.stacks.paused_cpu_ns = ns > UINT64_MAX - img_.stacks.paused_cpu_ns ? UINT64_MAX : img_.stacks.paused_cpu_ns + ns;
        break;
      }
      case RecordTag::kCategoryName:
      case RecordTag::kDomainDestroy:  // counted, not needed by the report yet
        break;
      default:  // CUDA records (the schema's since: only in files of version 2 on)
        cuda_.Add(tag, f, now, c.gpu_base_ns, thread);
        break;
    }
    if (timed) {
      if (kSink && !nvtx_event) hand_over();
      prev_tag = tag;
      prev_domain = e.domain;
      prev_name = e.name;
      prev_range = e.range_id;
      prev_kept = img_.nvtx.size() > nvtx_before ? img_.nvtx.size() - 1 : SIZE_MAX;
    }
  }
}

void Decoder::AddStack(uint64_t id, std::string_view bytes, uint64_t at) {
  if (id == 0 || stack_ids_.contains(id)) return;  // a second definition of an id: the first stays
  Stack stack{.id = id, .frames = {}};
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const auto* const end = p + bytes.size();
  while (p < end) {
    uint64_t v = 0, file = 0, line = 0;
    bool ok = format::GetVarint(&p, end, &v);
    if (ok && (v & 1) != 0) ok = format::GetVarint(&p, end, &file) && format::GetVarint(&p, end, &line);
    if (!ok) {
      Error(Loss::malformed_records, "STACK " + Num(id) + " at byte " + Num(at) + ": frame " +
                                         Num(stack.frames.size() + 1) + " does not decode (the stack is left out)");
      return;
    }
    StackFrame fr;
    if (v == 0) {  // the cut marker: the part before it had more frames (Python ones, after any)
      fr.cut = true;
      fr.python = !stack.frames.empty() && stack.frames.back().python;
    } else if ((v & 1) == 0) {
      fr.address = v >> 1;
    } else {
      fr.python = true;
      fr.function = StringRef(v >> 1);
      fr.file = StringRef(file);
      fr.line = static_cast<uint32_t>(std::min<uint64_t>(line, UINT32_MAX));
    }
    stack.frames.push_back(fr);
  }
  stack_ids_.insert(id);
  img_.stacks.stacks.push_back(std::move(stack));
}

void Decoder::EndOfData() {
  if (!src_->error().empty()) {
    st_.truncated = true;
    Error(Loss::read_errors, src_->error());
  } else if (shrank_ || (size_ > 0 && src_->View(size_ - 1, 1).empty())) {
    st_.truncated = true;
    Error(Loss::read_errors, "the file shrank while it was read (was " + Num(size_) + " bytes): read up to where it ended");
  }
  src_ = nullptr;
  CheckClocksAgainstRecords();
}

void Decoder::Resolve(StringPool* pool) {
  StringPool& pool_ = *pool;
  // Definitions in the order the file gave them: pool ids do not depend on anything else.
  std::vector<StringId> defined(defined_strings_.size());
  for (size_t i = 0; i < defined.size(); ++i) defined[i] = pool_.Intern(defined_strings_.bytes(static_cast<uint32_t>(i)));
  // String refs → pool ids; ids never defined in this file become "<string #N>".
  std::vector<StringId> string_pool(string_ref_raw_.size(), 0);
  uint64_t undefined = 0, first_undefined = 0;
  for (size_t r = 1; r < string_ref_raw_.size(); ++r) {
    uint64_t raw = string_ref_raw_[r];
    const uint32_t def = defined_strings_.Find(raw);
    if (r == overflow_ref_) {
      string_pool[r] = pool_.Intern("<undefined strings>");
    } else if (def != UINT32_MAX) {
      string_pool[r] = defined[def];
    } else {
      if (undefined++ == 0) first_undefined = raw;
      string_pool[r] = pool_.Intern("<string #" + Num(raw) + ">");
    }
  }
  std::vector<StringId> domain_pool(domain_ref_raw_.size(), 0);
  uint64_t undefined_domains = 0, first_undefined_domain = 0;
  for (size_t r = 1; r < domain_ref_raw_.size(); ++r) {
    uint64_t raw = domain_ref_raw_[r];
    auto it = domain_names_.find(raw);
    if (it == domain_names_.end()) {
      if (undefined_domains++ == 0) first_undefined_domain = raw;
      domain_pool[r] = pool_.Intern("<domain #" + Num(raw) + ">");
      continue;
    }
    // Name id 0 is "no name" (nvtxDomainCreateA(NULL)): an unnamed domain, never an error.
    const uint32_t s = it->second == 0 ? UINT32_MAX : defined_strings_.Find(it->second);
    if (s != UINT32_MAX && defined[s] != 0) {
      domain_pool[r] = defined[s];
    } else {
      if (it->second != 0 && s == UINT32_MAX && undefined++ == 0) first_undefined = it->second;
      domain_pool[r] = pool_.Intern("<domain #" + Num(raw) + ">");
    }
  }
  // An id nothing defines, in a file whose records all decoded and whose chunks are all there,
  // is the program's doing (the writer stores a definition before any use): NVTX misuse, counted
  // per process. In a file with other damage the definition may be what was lost: damage.
  if (overflow_uses_ > 0) {
    Error(Loss::undefined_string_uses,
          "more than " + Num(max_undefined_refs_) + " string ids used before any definition (forged or damaged): " +
              Num(overflow_uses_) + " further uses shown as <undefined strings>",
          overflow_uses_);
  }
  const bool intact = st_.errors.empty() && errors_dropped_ == 0 && !st_.truncated;
  if (intact) {
    img_.undefined_names = undefined;
    img_.undefined_domains = undefined_domains;
  } else {
    if (undefined > 0) {
      Error(Loss::undefined_ids,
            "undefined string id " + Num(first_undefined) + (undefined > 1 ? " (" + Num(undefined) + " ids in all)" : ""),
            undefined);
    }
    if (undefined_domains > 0) {
      Error(Loss::undefined_ids,
            "undefined domain id " + Num(first_undefined_domain) +
                (undefined_domains > 1 ? " (" + Num(undefined_domains) + " ids in all)" : ""),
            undefined_domains);
    }
  }
  for (NvtxEvent& e : img_.nvtx) {
    e.name = string_pool[e.name];
    e.domain = domain_pool[e.domain];
  }
  img_.string_of_ref = string_pool;
  img_.domain_of_ref = domain_pool;
  // Operators still open: the process ended (or the file was cut) inside them.
  ops_.CloseAll(std::max(img_.end_ns, img_.last_record_ns), &img_.host_ops);
  for (HostOp& h : img_.host_ops) h.name = string_pool[h.name];
  // The summary's keys were refs too; two refs can name the same string (a name defined twice
  // under different ids), so keys may merge.
  NvtxSummary by_ref = matcher_.Finish();
  for (RangeSamples& r : by_ref.ranges) {
    r.key.domain = domain_pool[r.key.domain];
    r.key.name = string_pool[r.key.name];
  }
  for (MarkCount& m : by_ref.marks) {
    m.domain = domain_pool[m.domain];
    m.name = string_pool[m.name];
  }
  img_.nvtx_summary.Merge(std::move(by_ref));
  ResolveStacks(string_pool, domain_pool);
  for (ProcessEvent& pe : img_.process_events) pe.text = string_pool[pe.text];
  if (index_) {
    cuda_.CollectUnreturned();
    cuda_.Track(nullptr, nullptr, nullptr);
    if (overflow_ref_ != 0) {
      index_.reset();  // refs of undefined ids depend on the order of their uses
    } else if (unreturned_.size() > CudaChunkIndex::kMaxOpenCalls) {
      index_.reset();  // each would be in every window after its enter (a forged file)
    } else {
      index_->version = img_.version;
      if (tsc_) index_->tsc = tsc_to_ns_;
      index_->unreturned = std::move(unreturned_);
      index_->pool_of_ref = string_pool;
      index_->small_string_ref = small_string_ref_;
      index_->string_ref_of = string_ref_of_;
    }
  }
  cuda_.Resolve(string_pool);
  img_.role = string_pool[role_ref_];
  // Rank variables learned after start win over the header's (docs/trace-format.md, PROCESS_ENV),
  // found through an index by name: a damaged file can hold a million of them, all different.
  std::unordered_map<std::string, size_t> env_index;  // name → its first entry in img_.env
  for (size_t i = 0; i < img_.env.size(); ++i) env_index.try_emplace(img_.env[i].first, i);
  for (uint32_t ref : env_refs_) {
    const std::string_view nv = pool_.Get(string_pool[ref]);
    const size_t eq = nv.find('=');
    if (nv.empty() || eq == 0) continue;
    std::string name(nv.substr(0, eq)), value(eq == std::string_view::npos ? "" : nv.substr(eq + 1));
    auto [it, inserted] = env_index.try_emplace(name, img_.env.size());
    if (inserted) {
      img_.env.emplace_back(std::move(name), std::move(value));
    } else {
      img_.env[it->second].second = std::move(value);
    }
  }
  for (ThreadInfo& t : img_.threads) {
    auto it = thread_names_.find(t.tid);
    if (it != thread_names_.end()) t.name = string_pool[it->second];
  }
  if (errors_dropped_ > 0) {
    st_.errors.push_back("and " + Num(errors_dropped_) + (errors_dropped_ == 1 ? " more problem" : " more problems"));
  }
}

void Decoder::ResolveStacks(const std::vector<StringId>& string_pool, const std::vector<StringId>& domain_pool) {
  ImageStacks& st = img_.stacks;
  for (Stack& s : st.stacks) {
    for (StackFrame& fr : s.frames) {
      if (!fr.python) continue;
      fr.function = string_pool[fr.function];
      fr.file = string_pool[fr.file];
    }
  }
  std::sort(st.stacks.begin(), st.stacks.end(), [](const Stack& a, const Stack& b) { return a.id < b.id; });
  st.start_realtime_ns = img_.start_realtime_ns;
  for (Module& m : st.modules) {
    m.path = string_pool[m.path];
    m.build_id = string_pool[m.build_id];
  }
  st.uses = matcher_.TakeUses();
  for (StackUse& u : st.uses) {
    u.domain = domain_pool[u.domain];
    u.name = string_pool[u.name];
  }
  // Uses of ids that no STACK defines: damage (a lost chunk held the definition); they stay, as
  // "<stack #N>" frames-less call sites.
  uint64_t undefined = 0, first = 0;
  auto check = [&](uint64_t id) {
    if (id != 0 && st.Find(id) == nullptr && undefined++ == 0) first = id;
  };
  for (const StackUse& u : st.uses) check(u.stack);
  for (const CudaCall& c : img_.cuda.calls) check(c.stack);
  for (const Sample& smp : st.samples) check(smp.stack);
  if (undefined > 0) {
    Error(Loss::undefined_ids, "undefined stack id " + Num(first) + (undefined > 1 ? " (" + Num(undefined) + " uses in all)" : ""),
          undefined);
  }
}

}  // namespace

struct DecodedTrace::State {
  ReadResult result;
  TraceImage image;
  // The file as it was opened, for the CUDA chunk index (ReadOptions::cuda_index): a path and its
  // identity, or a copy of the bytes of a read from memory.
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  uint64_t device = 0, inode = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  std::unique_ptr<Decoder> decoder;  // null: nothing usable (the status says why)
  std::optional<KinetoDecoded> kineto;  // a Kineto JSON trace (kineto_reader.h)

  void Run(ByteSource* src, const std::string& path, const ReadOptions& options) {
    // Recognised by content: a trainprof trace starts with its magic, a Kineto trace with gzip's
    // magic or a JSON object.
    if (const std::span<const uint8_t> head = src->View(0, 64); LooksLikeKineto(head)) {
      const uint64_t size = src->size();
      kineto = DecodeKineto([src](uint64_t off, uint64_t len) { return src->View(off, len); }, size, path, options,
                            [src, size]() -> std::string {
                              if (!src->error().empty()) return src->error();
                              if (size > 0 && src->View(size - 1, 1).empty())
                                return "the file shrank while it was read (was " + std::to_string(size) +
                                       " bytes): read up to where it ended";
                              return {};
                            });
      return;
    }
    result.status.path = path;
    result.status.bytes = src->size();
    decoder = std::make_unique<Decoder>(src, &result.status, &image, options);
    if (!decoder->ReadHeader()) {  // bytes_read stays 0: nothing was usable
      decoder.reset();
      return;
    }
    // A second read for the exporters (read/nvtx_stream.h) of a file that another trace has
    // replaced since (a rename, a copy over it): its events would be another process's or run's,
    // named through the wrong refs. Nothing of it is decoded.
    if (const TraceImage* first = options.nvtx_names; first != nullptr) {
      if (image.pid != first->pid || image.header_start_ns != first->header_start_ns ||
          // A damaged wall-clock start reads as 0 here, and the first read's process tree filled
          // it in from the host's other processes (FillUnknownRealtime).
          (image.start_realtime_ns != 0 && image.start_realtime_ns != first->start_realtime_ns) ||
          image.run_id != first->run_id) {
        result.status.errors.push_back("another trace has replaced the file since it was loaded (pid " +
                                       std::to_string(image.pid) + ", was " + std::to_string(first->pid) +
                                       "; or another start or run)");
        ++result.status.losses[Loss::read_errors];
        decoder.reset();
        return;
      }
    }
    result.status.usable = true;
    decoder->ReadMetadata();
    decoder->ReadChunks();
    decoder->EndOfData();
    image.truncated = result.status.truncated;
    result.status.bytes_read = src->size() - std::min<uint64_t>(decoder->skipped(), src->size());
  }
};

DecodedTrace::DecodedTrace() : state_(std::make_unique<State>()) {}
DecodedTrace::~DecodedTrace() = default;
DecodedTrace::DecodedTrace(DecodedTrace&&) noexcept = default;
DecodedTrace& DecodedTrace::operator=(DecodedTrace&&) noexcept = default;

DecodedTrace DecodedTrace::Failed(const std::string& path, const std::string& error) {
  DecodedTrace out;
  out.state_->result.status.path = path;
  out.state_->result.status.errors.push_back(error);
  ++out.state_->result.status.losses[Loss::read_errors];
  return out;
}

ReadResult DecodedTrace::Finish(StringPool* strings) {
  State& st = *state_;
  if (st.kineto) {
    ReadResult r = FinishKineto(std::move(*st.kineto), strings);
    st.kineto.reset();
    return r;
  }
  if (st.decoder) {
    st.decoder->Resolve(strings);
    if (std::unique_ptr<CudaChunkIndex> index = st.decoder->TakeCudaIndex()) {
      index->path = st.result.status.path;
      index->size = st.result.status.bytes;
      index->bytes = std::move(st.bytes);
      index->device = st.device;
      index->inode = st.inode;
      index->mtime_ns = st.mtime_ns;
      index->ctime_ns = st.ctime_ns;
      index->Seal();
      st.image.cuda_index = std::move(index);
    }
    st.decoder.reset();
    st.result.image = std::move(st.image);
  }
  return std::move(st.result);
}

DecodedTrace DecodeTraceBytes(std::span<const uint8_t> data, const std::string& path, const ReadOptions& options) {
  MemorySource src(data);
  DecodedTrace out;
  if (options.cuda_index) out.state_->bytes = std::make_shared<const std::vector<uint8_t>>(data.begin(), data.end());
  out.state_->Run(&src, path, options);
  return out;
}

DecodedTrace DecodeTraceFile(const std::string& path, const ReadOptions& options) {
  auto fail = [&](const std::string& what, uint64_t bytes) {
    DecodedTrace out;
    out.state_->result.status.path = path;
    out.state_->result.status.bytes = bytes;
    out.state_->result.status.errors.push_back(what);
    ++out.state_->result.status.losses[Loss::read_errors];
    return out;
  };
  // O_NONBLOCK: opening a FIFO (a path swapped after the directory was listed) must not wait for
  // a writer; it is refused below. pread on a regular file ignores the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return fail(std::string("cannot open: ") + std::strerror(errno), 0);
  struct stat sb {};
  if (::fstat(fd, &sb) != 0) {
    int e = errno;
    ::close(fd);
    return fail(std::string("cannot stat: ") + std::strerror(e), 0);
  }
  if (!S_ISREG(sb.st_mode)) {
    ::close(fd);
    return fail("not a regular file", 0);
  }
  FileSource src(fd, static_cast<uint64_t>(sb.st_size));
  DecodedTrace out;
  out.state_->device = sb.st_dev;
  out.state_->inode = sb.st_ino;
  out.state_->mtime_ns = int64_t{sb.st_mtim.tv_sec} * 1'000'000'000 + sb.st_mtim.tv_nsec;
  out.state_->ctime_ns = int64_t{sb.st_ctim.tv_sec} * 1'000'000'000 + sb.st_ctim.tv_nsec;
  out.state_->Run(&src, path, options);
  ::close(fd);
  return out;
}

ReadResult ReadTraceBytes(std::span<const uint8_t> data, const std::string& path, StringPool* strings,
                          const ReadOptions& options) {
  return DecodeTraceBytes(data, path, options).Finish(strings);
}

ReadResult ReadTraceFile(const std::string& path, StringPool* strings, const ReadOptions& options) {
  return DecodeTraceFile(path, options).Finish(strings);
}

std::string DescribeDamage(const FileStatus& status) {
  std::string out;
  const size_t shown = std::min<size_t>(status.errors.size(), 3);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) out += "; ";
    out += status.errors[i];
  }
  if (status.errors.size() > shown) out += "; +" + std::to_string(status.errors.size() - shown) + " more";
  // How much of it was usable (the bytes decoded, the damaged and cut ones not), where that says
  // something: not of an empty file or one not opened.
  if (status.bytes > 0) {
    out += " (" + std::to_string(status.bytes_read) + " of " + std::to_string(status.bytes) +
           (status.bytes == 1 ? " byte usable)" : " bytes usable)");
  }
  return out;
}

}  // namespace trainprof::collector
