// CUDA API statistics by function, the trainprof version of `nsys stats --report cuda_api_sum`:
// one row per (API, function), with the call durations summarised.
//
//   calls        calls that returned (their durations are the statistics)
//   percent      total / Σ total of every row of the table (as nsys's "Time (%)")
//   errors       returned calls with a non-zero status (cudaError_t / CUresult)
//   unfinished   calls that never returned (enter without exit): not in the durations
//
// Names: CudaApiDisplayName (CUPTI's "_v7000" suffix dropped). Rows by total time, descending.
#pragma once

#include <string>
#include <vector>

#include "collector/model/model.h"
#include "collector/base/sample_stats.h"

namespace trainprof::collector {

struct CudaApiRow {
  std::string name;  ///< e.g. "cudaLaunchKernel"
  std::string api;   ///< "runtime" or "driver"
  SampleStats time;  ///< durations (ns) of the calls that returned; time.count = calls
  double percent = 0;
  uint64_t errors = 0;
  uint64_t unfinished = 0;
};

/// The table over the given images' digests (one process's, or every process's; model/cuda_digest.h).
/// Statistics as DurationSummary gives them: exact up to its kExactSamples calls per row.
std::vector<CudaApiRow> CudaApiTable(const std::vector<const CudaDigest*>& images, const StringPool& strings);

}  // namespace trainprof::collector
