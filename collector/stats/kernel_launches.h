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
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collector/base/duration_summary.h"
#include "collector/base/id_map.h"
#include "collector/base/string_pool.h"
#include "collector/model/cuda_digest.h"
#include "collector/model/cuda_model.h"
#include "collector/model/cuda_window.h"

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
  /// false: the medians and the p95 estimated (past DurationSummary::kExactSamples launches, within
  /// its kRelativeError); mean and counts are exact either way.
  bool exact = true;
};

struct KernelLaunches {
  std::vector<KernelLaunchRow> rows;  ///< by count, descending (ties: by name), cut to `top`
  size_t omitted = 0;                 ///< rows cut
};

/// The launches of one name: what a process's summary keeps of them (summary/process_summary.h),
/// merged over processes by adding (KernelLaunchRows).
struct LaunchSamples {
  bool memory = false;  ///< a memcpy or memset (its label in `name`); false: a kernel
  std::string name;     ///< the kernel's name as recorded (mangled), or "memcpy HtoD", ..., "memset"
  /// The launch calls' durations and the launch delays (ns): exact up to 1024 launches, then
  /// bounded (base/duration_summary.h).
  DurationSummary cpu, delay;
  uint64_t shorter = 0, long_launches = 0, long_delays = 0;
};

/// The rows of the launches of every process given (each a process's LaunchSamples, in any order),
/// those of one name added; `digests` gives every image's per-name tables, whose kernel table
/// numbers the kernels whose shortened names collide (called only then); `full_names` as
/// --full-names; `top` 0: no cut.
KernelLaunches KernelLaunchRows(const std::vector<const std::vector<LaunchSamples>*>& processes,
                                const std::function<std::vector<const CudaDigest*>()>& digests,
                                const StringPool& strings, bool full_names, size_t top);

/// A launch call's enter and exit (CLOCK_MONOTONIC ns).
struct LaunchCall {
  uint64_t begin = 0, end = 0;
};

/// The launch calls of an image (returned, correlation id not 0, a launch call's name) by
/// correlation id.
IdMap<LaunchCall> LaunchCallsOf(const CudaData& data, const StringPool& strings);
/// The same over the calls of `sources`, one after the other (a window's records, then its other
/// partners: CudaWindowData::PartnerSources).
IdMap<LaunchCall> LaunchCallsOf(const std::vector<const CudaData*>& sources, const StringPool& strings);

/// The launch statistics made window by window (model/cuda_window.h): each window's GPU ops (those
/// it owns) with their launch call. Any cut into windows gives the rows one window gives.
class KernelLaunchSweep {
 public:
  explicit KernelLaunchSweep(const StringPool& strings);

  /// One window; `images[i]`: the records of an image that the window owns or overlaps,
  /// `launches[i]` that image's launch calls (LaunchCallsOf, over all its calls). Images may come
  /// a few at a time (one window: each image's launch calls held only while it is added).
  void Add(const TimeWindow& window, const std::vector<const CudaData*>& images,
           const std::vector<const IdMap<LaunchCall>*>& launches);

  /// The rows (KernelLaunchRows of these samples alone).
  KernelLaunches Rows(const std::function<std::vector<const CudaDigest*>()>& digests, bool full_names, size_t top) &&;
  /// The samples, one per name: kernels by recorded name, then memory operations by label.
  std::vector<LaunchSamples> Samples() &&;

 private:
  // (0 kernel / 1 memory, recorded name or label): kernels and memory operations never share a row.
  using Key = std::pair<int, std::string>;
  LaunchSamples& RowOfKernel(StringId name);
  LaunchSamples& RowOfCopy(format::MemcpyKind kind);

  const StringPool& strings_;
  std::map<Key, LaunchSamples> by_name_;
  // The rows by what a GPU record carries (a node-based map: a row never moves), so that a record
  // costs no name string and no look-up by string.
  std::unordered_map<StringId, LaunchSamples*> by_kernel_;
  std::map<format::MemcpyKind, LaunchSamples*> by_copy_;
  LaunchSamples* memsets_ = nullptr;
};

/// The launch statistics of the images' GPU ops; `full_names` as --full-names; `top` 0: no cut.
KernelLaunches AnalyzeKernelLaunches(const std::vector<const CudaData*>& images, const StringPool& strings,
                                     bool full_names, size_t top);

}  // namespace trainprof::collector
