// Where the reader can hand an image's CUDA records one at a time, as it decodes them, instead of
// (or besides) keeping them in CudaData's vectors: the way to CUDA analyses whose memory does not
// grow with the trace (docs/performance.md, "CUDA records: measured, and the plan"). Set it in
// ReadOptions (read/trace_reader.h); ReadOptions::keep_cuda (KeepCuda::kNone) then leaves the vectors
// empty (counters, definitions and events are kept either way).
//
// What a sink sees, per image, in file order (a thread's chunks in order, threads one after the
// other; not time order):
//   Call      a whole call: at its exit (returned, status, the EVENT_STACK that followed it), or,
//             for a call that never returned, at the end of the file (returned false, end ==
//             begin), those by enter time
//   Kernel, Memcpy, Memset, Sync, Overhead   each valid GPU record as it is decoded (the ones with
//             a zero or reversed time are counted in invalid_timestamps and never reach it)
//   Resolve   once, at the end: the pool id of every string ref the records above carried
//             (their `name`), as CudaData's are resolved
#pragma once

#include <cstdint>
#include <vector>

#include "collector/model/cuda_model.h"

namespace trainprof::collector {

class CudaSink {
 public:
  virtual ~CudaSink() = default;
  virtual void Call(const CudaCall& call) = 0;
  /// Call, with the call's place in the image's enter order (read/cuda_records.h, SeqCall): for
  /// a sink that orders calls as a whole read does. Calls Call unless overridden.
  virtual void CallAt(const CudaCall& call, uint64_t enter_seq) {
    (void)enter_seq;
    Call(call);
  }
  /// `config`: the kernel's launch configuration (`kernel.config` is 0: the sink keeps its own)
  virtual void Kernel(const GpuKernel& kernel, const KernelConfig& config) = 0;
  virtual void Memcpy(const GpuMemcpy& copy) = 0;
  virtual void Memset(const GpuMemset& memset) = 0;
  virtual void Sync(const GpuSync& sync) = 0;
  virtual void Overhead(const GpuOverhead& overhead) = 0;
  /// `pool_of_ref[ref]`: the pool id of a string ref carried by the records (0 past its end).
  virtual void Resolve(const std::vector<StringId>& pool_of_ref) = 0;
};

}  // namespace trainprof::collector
