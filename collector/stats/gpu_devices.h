// GPU activity per device: busy time and launch latency, per process and merged over the
// processes of a host.
//
//   activity        kernels, memcpys and memsets with valid times on the device (the GPU is busy
//                   while any of them runs: Nsight Systems' "GPU utilization" counts kernels; we add
//                   copies and memsets, which keep a copy engine busy and are GPU work the step waits for)
//   busy_ns         |union of the activity ∩ the lifetime| (concurrent kernels count once)
//   busy_percent    busy_ns / lifetime_ns; lifetime = the process's wall time (merged: the union of
//                   the lifetimes of the processes that used the device)
//   active window   first activity start to last activity end; active_busy_percent = busy / window
//                   (what the GPU did once the program started using it: no start-up, no tail)
//   kernel_ns, memory_ns   Σ durations (not unions: concurrent kernels add up)
//   launch latency  kernel start − enter of the API call with the same correlation id (the
//                   launch): mean, median, p95 (linear interpolation). Kernels without a correlated
//                   call (dropped, or launched before tracing) and those that appear to start before
//                   their call (clock trouble) are left out.
//
// Merging: by (host, device id). The trace format has no device UUID, so processes that see
// different GPUs under one id (CUDA_VISIBLE_DEVICES set per process) are merged; per-process rows
// are always exact.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collector/base/intervals.h"
#include "collector/model/model.h"

namespace trainprof::collector {

struct DeviceRow {
  std::optional<int32_t> pid;  ///< the process; none for a row merged over processes
  std::string host;
  uint32_t device = 0;
  std::string name;        ///< from GPU_DEVICE ("" when not recorded)
  uint32_t processes = 0;  ///< processes with activity on it (1 for a per-process row)
  uint64_t kernels = 0, kernel_ns = 0;
  uint64_t memcpys = 0, memsets = 0, memory_ns = 0;
  uint64_t busy_ns = 0;
  uint64_t lifetime_ns = 0;
  std::optional<double> busy_percent;  ///< none for a zero lifetime
  uint64_t active_begin_ns = 0, active_end_ns = 0;
  std::optional<double> active_busy_percent;  ///< none for an empty window
  uint64_t latency_count = 0;
  double latency_mean_ns = 0, latency_median_ns = 0, latency_p95_ns = 0;
};

/// One row per device the process used (by device id).
std::vector<DeviceRow> ProcessDevices(const Process& process, const StringPool& strings);

/// One row per (host, device) over all processes, by host then device.
std::vector<DeviceRow> MergedDevices(const std::vector<const Process*>& processes, const StringPool& strings);

/// Union of the process's GPU activity on every device (the bottleneck's "GPU busy").
IntervalSet ProcessGpuActivity(const Process& process);

}  // namespace trainprof::collector
