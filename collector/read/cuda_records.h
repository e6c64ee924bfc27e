// The trace reader's part for CUDA records (format version 2, tags 48..59): decoding of whole
// records (fields by name, format/trainprof/records.h) into the image's CudaData (cuda_model.h). The reader
// (decode_records.cc) checks bounds and varints and hands over complete records only.
//
//   CUDA_API_ENTER ──► CudaCall (returned = false), open by correlation id
//   CUDA_API_EXIT  ──► the open call with that correlation: end, status, returned = true
//                      (none open: counted in unmatched_exits)
//   GPU_KERNEL/MEMCPY/MEMSET/SYNC/OVERHEAD
//                  ──► absolute time = chunk base_ns + zs / ze; a zero time (0 on the absolute
//                      axis, or before it), or end < start, is counted in invalid_timestamps and
//                      the record left out, so that no statistic ever sees it
//   GPU_DEVICE/CONTEXT/DROPPED/STATUS, CAPTURE ──► definitions, counters, events
//
// Numeric fields wider than the model's 32-bit ones (ids, grid sizes) saturate at UINT32_MAX:
// a damaged varint must not wrap into a plausible value.
//
// With a sink (model/cuda_sink.h) every whole call and valid GPU record also goes there as it is
// decoded, and to a digest (model/cuda_digest.h) when one is set; with `keep` false the vectors
// stay empty (or hold only the calls with a stack) and memory holds only the calls still open.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "collector/model/cuda_digest.h"
#include "collector/model/cuda_model.h"
#include "collector/model/cuda_sink.h"
#include "collector/read/range_id_map.h"
#include "trainprof/records.h"

namespace trainprof::collector {

/// A call with its place in the image's enter order (`seq`: how many CUDA_API_ENTER records the
/// image's decode met before its own, threads in the reader's order): the tie-break that orders
/// calls with the same enter time as a whole read does (SortByEnterTime).
struct SeqCall {
  CudaCall call;
  uint64_t seq = 0;
};

/// What a chunk's whole records cover, for the CUDA chunk index (read/cuda_chunk_index.h): the
/// times [lo, hi] of the calls that returned in it (enter to exit) and of its kernels, copies and
/// memsets, how many they are, and the correlation ids of those calls and of those GPU records.
struct CudaSpan {
  uint64_t lo = UINT64_MAX, hi = 0;
  uint64_t count = 0;
  uint64_t call_ids_lo = UINT64_MAX, call_ids_hi = 0;  ///< empty when lo > hi
  uint64_t gpu_ids_lo = UINT64_MAX, gpu_ids_hi = 0;
  bool any() const { return count > 0; }
  void AddCall(const CudaCall& c) {
    Add(c.begin_ns, c.end_ns);
    Widen(c.correlation, &call_ids_lo, &call_ids_hi);
  }
  void AddGpu(uint64_t start, uint64_t end, uint64_t correlation) {
    Add(start, end);
    Widen(correlation, &gpu_ids_lo, &gpu_ids_hi);
  }

 private:
  void Add(uint64_t begin, uint64_t end) {
    Widen(begin, &lo, &hi);
    hi = end > hi ? end : hi;
    ++count;
  }
  static void Widen(uint64_t v, uint64_t* lo, uint64_t* hi) {
    *lo = v < *lo ? v : *lo;
    *hi = v > *hi ? v : *hi;
  }
};

class CudaRecordDecoder {
 public:
  /// `string_ref` maps a raw string id of the file to the reader's string ref (resolved later).
  /// `sink` (may be null) also receives each record; `keep` false: none is kept in `out`, except,
  /// with `stacked_calls`, the whole calls that have a stack. `digest` (may be null) sums every
  /// whole call and valid GPU record per name (model/cuda_digest.h), remapped at Resolve.
  CudaRecordDecoder(CudaData* out, std::function<uint32_t(uint64_t)> string_ref, CudaSink* sink = nullptr,
                    bool keep = true, bool stacked_calls = false, CudaDigest* digest = nullptr)
      : out_(*out),
        string_ref_(std::move(string_ref)),
        sink_(sink),
        digest_(digest),
        keep_(keep),
        stacked_(!keep && stacked_calls),
        whole_calls_(sink != nullptr || digest != nullptr || stacked_) {}

  /// `base_ns` of a chunk whose base is damaged (a TSC file's sync pair off the clock line): its
  /// GPU activity records have no time, and are counted in invalid_timestamps.
  static constexpr uint64_t kLostBase = UINT64_MAX;

  /// One whole CUDA record (tags 48..59). `f` holds its varints after the tag and dt, in schema
  /// order (format/trainprof/records.h: read by name with format::Decode); `now` is the record's
  /// time when it is timed (dt chain), `base_ns` the chunk's base (for zs/ze; kLostBase: none),
  /// `thread` the image's thread index.
  void Add(uint8_t tag, const uint64_t* f, uint64_t now, uint64_t base_ns, uint32_t thread);

  /// Marks the calls open on `thread` (an image thread index) CudaCall::exit_lost: the reader
  /// skipped damaged bytes of that thread, where their exits may have been.
  void LoseOpenCalls(uint32_t thread);

  /// Gives the call that the last CUDA_API_EXIT closed its stack (EVENT_STACK; stacks.h). False:
  /// that exit matched no call.
  bool SetExitStack(uint64_t stack);

  /// The CUDA chunk index's hooks (read/cuda_chunk_index.h): `span` (may be null) grows by every
  /// call that returns and every valid kernel, copy and memset; `unreturned` (may be null) gets
  /// each call that never returned (its correlation id reused while it was open, or still open at
  /// CollectUnreturned), with its state then; `configs` (may be null) interns every valid kernel's
  /// launch configuration, as CudaData::kernel_configs does when records are kept. Not owned.
  void Track(CudaSpan* span, std::vector<SeqCall>* unreturned, KernelConfigs* configs) {
    span_ = span;
    unreturned_ = unreturned;
    configs_ = configs;
  }
  /// Notes in `out` the end of each valid kernel whose name `is_nccl` says is an NCCL kernel (1; 0:
  /// not one; 2: its name is not defined yet, a STRING of a thread decoded later: noted, to be
  /// told at Resolve), the first kMaxNcclEndsPerName of each name; names as refs until Resolve,
  /// which the reader follows by dropping what is no NCCL kernel after all. Not owned.
  void NoteNcclEnds(std::vector<KernelEnd>* out, std::function<int(uint32_t ref)> is_nccl) {
    nccl_ends_ = out;
    is_nccl_ = std::move(is_nccl);
  }
  /// The calls open now, with their enter order (any order).
  void OpenCalls(std::vector<SeqCall>* out) const;
  size_t open_count() const { return keep_ ? open_calls_.size() : sink_open_.size(); }
  /// CUDA_API_ENTER records met so far.
  uint64_t enters() const { return enters_; }
  /// Gives the tracked `unreturned` list the calls still open (before Resolve, which ends them).
  void CollectUnreturned();
  /// A windowed read (read/cuda_chunk_index.h; a decoder made with a sink and `keep` false): hands
  /// over the call the last exit closed, then starts again as the whole read stood at a chunk's
  /// start: `open` the calls open there, `enters` the enters met before it.
  void Restart(const SeqCall* open, size_t n, uint64_t enters);

  /// Replaces string refs by pool ids (`pool_of_ref[ref]`) once every STRING record was read; the
  /// sink gets the calls that never returned, then its Resolve.
  void Resolve(const std::vector<StringId>& pool_of_ref);

 private:
  void Enter(const CudaCall& c);
  bool Exit(uint64_t correlation, uint64_t now, uint32_t status);
  void FlushExited();  // the call the last exit closed, on (its stack can follow the exit)
  void Whole(const SeqCall& c);  // a whole call: to the sink, and kept if stacked_ and it has a stack
  // A GPU activity record (`f`, decoded as Record) into a T with its times (and, for work on a
  // stream, its ids): an invalid time is counted, a valid record goes on to Take.
  template <typename Record, typename T>
  void Activity(const uint64_t* f, uint64_t base_ns);
  // The rest of each kind's fields, then to the sink, digest and kept records.
  void Take(const format::rec::GpuKernel& r, GpuKernel& k);
  void Take(const format::rec::GpuMemcpy& r, GpuMemcpy& m);
  void Take(const format::rec::GpuMemset& r, GpuMemset& m);
  void Take(const format::rec::GpuSync& r, GpuSync& s);
  void Take(const format::rec::GpuOverhead& r, GpuOverhead& o);
  // A valid kernel, copy or memset after the sink and digest saw it: kept in `kept` when keep_,
  // its device noted, the tracked span widened.
  template <typename T>
  void Decoded(const T& x, std::vector<T>* kept);
  // The rest of a copy or memset (record `r`, decoded so far into `x`): its flags (bit 0: async)
  // and graph id, then to the sink and digest (their method for its kind), then Decoded.
  template <typename Record, typename T>
  void Memory(const Record& r, T& x, void (CudaSink::*to_sink)(const T&), void (CudaDigest::*to_digest)(const T&),
              std::vector<T>* kept);

  CudaData& out_;
  std::function<uint32_t(uint64_t)> string_ref_;
  RangeIdMap<size_t> open_calls_;  // correlation → index into out_.calls
  size_t last_exit_ = SIZE_MAX;                      // index of the call the last exit closed
  CudaSink* sink_;
  CudaDigest* digest_;
  bool keep_;
  bool stacked_;      // !keep_: the whole calls with a stack go into out_.calls
  bool whole_calls_;  // sink_ or stacked_: calls are followed below until they are whole
  RangeIdMap<SeqCall> sink_open_;  // whole_calls_: correlation → the open call
  SeqCall exited_;                                   // whole_calls_: the call the last exit closed
  bool has_exited_ = false;
  uint64_t enters_ = 0;
  CudaSpan* span_ = nullptr;
  std::vector<SeqCall>* unreturned_ = nullptr;
  KernelConfigs* configs_ = nullptr;
  std::vector<KernelEnd>* nccl_ends_ = nullptr;
  std::function<int(uint32_t)> is_nccl_;
  std::vector<uint8_t> nccl_name_;     // by name ref: 0 not known yet, 1 no, 2 an NCCL kernel
  std::vector<uint32_t> nccl_noted_;  // by name ref: ends noted
};

/// Sorts calls by enter time, ties in their order (as std::stable_sort by begin_ns), with 4 bytes
/// a call of extra memory; calls already in order (one thread's) are left as they are.
void SortByEnterTime(std::vector<CudaCall>* calls);

}  // namespace trainprof::collector
