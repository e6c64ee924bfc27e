// GPU kernel statistics by kernel, the trainprof version of `nsys stats --report
// cuda_gpu_kern_sum` (with the launch configuration of cuda_gpu_kern_gb_sum folded in): one row
// per mangled name, so that two kernels never merge even when their shortened names are equal.
//
//   instances   kernel executions with valid times
//   percent     total / Σ total of every kernel of the table (nsys's "Time (%)": share of kernel time)
//   grid/block  "XxYxZ" when every instance used the same, else "varies" (grid_most_common tells
//               the most frequent one; ties: the smallest)
//
// Rows by total GPU time, descending.
#pragma once

#include <string>
#include <vector>

#include "collector/model/model.h"
#include "collector/base/sample_stats.h"

namespace trainprof::collector {

struct KernelRow {
  std::string name;     ///< display name (kernel_names.h: shortened unless full_names)
  std::string mangled;  ///< as recorded
  SampleStats time;     ///< durations (ns); time.count = instances
  double percent = 0;
  std::string grid, block;                          ///< "256x1x1" or "varies"
  std::string grid_most_common, block_most_common;  ///< always a configuration
  uint64_t grid_variants = 0, block_variants = 0;   ///< distinct configurations seen
};

/// The table over the given images' digests (model/cuda_digest.h); display names are made once
/// per distinct kernel. Statistics as DurationSummary gives them: exact up to its kExactSamples
/// instances per row.
std::vector<KernelRow> KernelTable(const std::vector<const CudaDigest*>& images, const StringPool& strings,
                                   bool full_names);

}  // namespace trainprof::collector
