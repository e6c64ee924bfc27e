// GPU memory operations by kind, the trainprof version of `nsys stats --report
// cuda_gpu_mem_time_sum` and `cuda_gpu_mem_size_sum` in one table: one row per copy kind
// ("memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memcpy HtoH", "memcpy PtoP", ...) and one for
// memsets.
//
//   time             durations of the operations (ns), as nsys's time summary
//   size             sizes (bytes), as nsys's size summary
//   percent          total time / Σ total time of every row
//   bandwidth_gbps   Σ bytes / Σ time, in GB/s (10^9 bytes per second = bytes per ns); none
//                    when the total time is 0
//   pageable_*       copies with a pageable (not pinned) host side: the driver stages them
//                    through a pinned buffer, they block the calling thread and cannot overlap
//                    with compute (CUDA C++ Best Practices Guide, "Pinned Memory")
//
// Rows by total time, descending.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collector/model/model.h"
#include "collector/base/sample_stats.h"

namespace trainprof::collector {

struct MemoryOpRow {
  std::string kind;   ///< "memcpy_htod", "memcpy_dtoh", ..., "memset"
  std::string label;  ///< "memcpy HtoD", ..., "memset"
  SampleStats time;   ///< ns; time.count = operations
  SampleStats size;   ///< bytes
  double percent = 0;
  std::optional<double> bandwidth_gbps;
  uint64_t pageable_count = 0;
  uint64_t pageable_bytes = 0;
};

/// The table over the given images' digests (model/cuda_digest.h). Statistics as DurationSummary
/// gives them: exact up to its kExactSamples operations per row.
std::vector<MemoryOpRow> MemoryTable(const std::vector<const CudaDigest*>& images);

}  // namespace trainprof::collector
