// The CUDA tables of a report (over all processes, or one process's): CUDA API by function, GPU
// kernels by name, memory operations by kind, devices. Each table is its own module
// (cuda_api_stats, gpu_kernel_stats, gpu_memory_stats, gpu_devices); this one puts them together
// and cuts them to --top.
#pragma once

#include <cstddef>
#include <vector>

#include "collector/stats/cuda_api_stats.h"
#include "collector/stats/gpu_devices.h"
#include "collector/stats/gpu_kernel_stats.h"
#include "collector/stats/gpu_memory_stats.h"

namespace trainprof::collector {

struct CudaTables {
  std::vector<CudaApiRow> api;
  size_t api_omitted = 0;
  std::vector<KernelRow> kernels;
  size_t kernels_omitted = 0;
  std::vector<MemoryOpRow> memory;
  size_t memory_omitted = 0;
  std::vector<DeviceRow> devices;  ///< never cut
  bool empty() const { return api.empty() && kernels.empty() && memory.empty() && devices.empty(); }
};

/// The tables over the given processes: the per-name tables from `digests` (their images' CUDA
/// digests: one process's, or every process's), devices per process (`merged` false: one process)
/// or merged per host and device, from the processes' own records, or left empty without
/// `devices` (made window by window by the caller: DeviceWindowSweep). Rows cut to `top` (0 = all).
CudaTables BuildCudaTables(const std::vector<const CudaDigest*>& digests, const std::vector<const Process*>& processes,
                           const StringPool& strings, bool full_names, size_t top, bool merged, bool devices = true);

}  // namespace trainprof::collector
