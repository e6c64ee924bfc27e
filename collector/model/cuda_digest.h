// The per-name CUDA statistics of one process image, summed while the reader decodes its records
// (collector/read/cuda_records.h feeds it every whole call and valid GPU record), so that the
// report's per-name tables (CUDA API by function, kernels by name, memory operations by kind, the
// GPU tracing counters) need no record kept: memory per distinct key, not per record
// (docs/performance.md, "CUDA records: measured, and the plan").
//
//   api       one row per (recorded name, API): durations of the calls that returned, errors
//             (returned with a non-zero status), unfinished (never returned), the first
//             unfinished call's enter time (the report lists their names in that order), exit
//             lost (no exit, and damaged bytes of the thread skipped after the enter)
//   kernels   one row per recorded (mangled) name: durations, and each launch configuration
//             (grid, block) with its count
//   memory    one row per copy kind, one for memsets: durations (ns), sizes (bytes), pageable copies
//   calls, overhead_ns   counters: every whole call; Σ GPU_OVERHEAD durations (ns)
//
// Names are the reader's string refs while it reads, pool ids after Remap (the reader calls it
// once, with the image's other refs). Durations are DurationSummary's: exact up to
// DurationSummary::kExactSamples values per row, a log-linear histogram beyond.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "collector/base/duration_summary.h"
#include "collector/base/string_pool.h"
#include "collector/model/cuda_model.h"

namespace trainprof::collector {

struct CudaApiSamples {
  StringId name = 0;  ///< as recorded (e.g. "cudaLaunchKernel_v7000"); 0 = none
  format::CudaApi api = format::CudaApi::kRuntime;
  DurationSummary time;  ///< ns, of the calls that returned
  uint64_t errors = 0;
  uint64_t unfinished = 0;  ///< never returned, the process ended inside (CudaCall::exit_lost false)
  uint64_t exit_lost = 0;   ///< no exit, which damaged bytes of its thread may have held (CudaCall::exit_lost)
  uint64_t first_unfinished_ns = UINT64_MAX;  ///< enter time of the earliest unfinished call
};

using LaunchDim = std::array<uint32_t, 3>;

struct KernelSamples {
  StringId name = 0;  ///< mangled, as recorded
  DurationSummary time;  ///< ns
  std::map<LaunchDim, uint64_t> grids, blocks;  ///< configuration → instances
};

struct MemoryOpSamples {
  bool memset = false;
  format::MemcpyKind kind = format::MemcpyKind::kUnknown;  ///< copies only
  DurationSummary time;  ///< ns
  DurationSummary size;  ///< bytes
  uint64_t pageable_count = 0;  ///< copies with a pageable host side (GpuMemcpy::pageable)
  uint64_t pageable_bytes = 0;
};

class CudaDigest {
 public:
  void Call(const CudaCall& call);  ///< a whole call (returned or never returned)
  void Kernel(const GpuKernel& kernel, const KernelConfig& config);  ///< with its launch configuration
  void Memcpy(const GpuMemcpy& copy);
  void Memset(const GpuMemset& memset);
  void Overhead(const GpuOverhead& overhead);
  /// Names from refs to pool ids (`pool_of_ref[ref]`, 0 past its end); rows whose names become
  /// equal are merged. Rows end sorted by key (name, then API), so that the result does not
  /// depend on the order the records came in.
  void Remap(const std::vector<StringId>& pool_of_ref);

  /// A digest of the given rows (a summary file's, collector/summary/): rows of equal keys merged
  /// and sorted as Remap leaves them.
  static CudaDigest FromRows(std::vector<CudaApiSamples> api, std::vector<KernelSamples> kernels,
                             std::vector<MemoryOpSamples> memory, uint64_t calls, uint64_t overhead_ns);

  const std::vector<CudaApiSamples>& api() const { return api_; }
  const std::vector<KernelSamples>& kernels() const { return kernels_; }
  const std::vector<MemoryOpSamples>& memory() const { return memory_; }  ///< by (memset, kind)
  uint64_t calls() const { return calls_; }
  uint64_t overhead_ns() const { return overhead_ns_; }

 private:
  std::vector<CudaApiSamples> api_;
  std::vector<KernelSamples> kernels_;
  std::vector<MemoryOpSamples> memory_;
  std::unordered_map<uint64_t, uint32_t> api_index_;     // name << 8 | api → index into api_
  std::unordered_map<StringId, uint32_t> kernel_index_;  // name → index into kernels_
  uint64_t calls_ = 0;
  uint64_t overhead_ns_ = 0;
  // The last row used: consecutive records are mostly of one name.
  uint64_t last_api_key_ = UINT64_MAX;
  uint32_t last_api_ = 0;
  StringId last_kernel_name_ = 0;
  uint32_t last_kernel_ = UINT32_MAX;
};

/// The digest of CUDA data that is held whole (a Kineto input, data made by hand in tests): each
/// call, kernel, copy, memset and overhead of `data` added as the reader would; names are
/// already pool ids.
CudaDigest DigestOf(const CudaData& data);

}  // namespace trainprof::collector
