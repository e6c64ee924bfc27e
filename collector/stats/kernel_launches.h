// Kernel launch statistics per kernel name: Holistic Trace Analysis's CUDA kernel launch
// statistics (HTA 0.5.0, hta/analyzers/cuda_kernel_analysis.py, CudaKernelAnalysis.
// cuda_kernel_launch_stats and visualize_cuda_launch_kernel_info; trace_analysis.py,
// get_cuda_kernel_launch_stats; docs/analysis.md, "Kernel launches").
//
//   launch         a CUDA call named cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync or
//                  cudaMemsetAsync (CUPTI's _vNNNN suffix dropped; HTA's set with its default
//                  include_memory_events=True), that returned, and the kernel, memcpy or memset with
//                  its correlation id
//   cpu launch     the call's duration (end − begin)
//   launch delay   GPU start − end of the call, 0 when negative (HTA: ts_gpu − ts_cpu − dur_cpu,
//                  clipped at 0). The device table's launch latency (gpu_devices.h) is GPU start −
//                  begin of the call: about cpu launch + launch delay
//   shorter_than_launch   the GPU op ran shorter than its launch call, for calls of at most
//                  kLaunchRuntimeCutoffNs (HTA's "short GPU kernels")
//   long_launches  calls longer than kLaunchRuntimeCutoffNs (HTA's runtime outliers)
//   long_delays    launch delay over kLaunchDelayCutoffNs (HTA's launch delay outliers)
//
// Rows per name (a kernel's name as recorded, shown as the kernel table shows it; "memcpy HtoD",
// ..., "memset" for memory operations), over every process given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collector/base/string_pool.h"
#include "collector/model/cuda_model.h"

namespace trainprof::collector {

/// HTA's `runtime_cutoff` default (50 µs) and `launch_delay_cutoff` default (100 µs).
inline constexpr uint64_t kLaunchRuntimeCutoffNs = 50'000;
inline constexpr uint64_t kLaunchDelayCutoffNs = 100'000;

struct KernelLaunchRow {
  std::string name;  ///< the kernel table's display name (numbered where shortened names collide),
                     ///< or "memcpy HtoD", ..., "memset"
  uint64_t count = 0;  ///< GPU ops with a launch call
  double cpu_launch_mean_ns = 0, cpu_launch_median_ns = 0;
  double launch_delay_mean_ns = 0, launch_delay_median_ns = 0, launch_delay_p95_ns = 0;
  uint64_t shorter_than_launch = 0, long_launches = 0, long_delays = 0;
};

struct KernelLaunches {
  std::vector<KernelLaunchRow> rows;  ///< by count, descending (ties: by name), cut to `top`
  size_t omitted = 0;                 ///< rows cut
};

/// The launch statistics of the images' GPU ops; `full_names` as --full-names; `top` 0: no cut.
KernelLaunches AnalyzeKernelLaunches(const std::vector<const CudaData*>& images, const StringPool& strings,
                                     bool full_names, size_t top);

}  // namespace trainprof::collector
