// The chunk slots of a trainprof file: found, checked, ordered per thread and decoded; the CUDA
// chunk index kept around each chunk (trace_decoder.h).
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

}  // namespace trainprof::collector::decode
