// The GPU part of the bottleneck verdict: for a training process, how busy its GPU is during its
// steps, and what the host was doing while the GPU was idle (docs/analysis.md, "GPU idle time").
//
//   steps      the steps in the statistics (no warm-up, no evaluation steps)
//   busy       |union of the process's kernels, memcpys and memsets (every device) ∩ steps|
//   idle       steps \ busy: the GPU ran nothing of this process
//   each idle instant goes to the first that applies, in this order:
//     data_wait  the main thread waits for a DataLoader batch (a kDataWait phase covers it)
//     sync       a thread of the process is inside a synchronising CUDA call (cuda_calls.h: kSync,
//                or a copy that blocks the host, kCopy): the host waits for the GPU, the GPU has
//                nothing to run
//     launch     a thread is inside a kernel launch call (kLaunch)
//     other      none of these: Python, CPU work, logging between GPU work
//
//   launch-bound  launch is the largest cause, covers ≥ kLaunchBoundIdlePercent of the idle time,
//                 and the kernels are short: median kernel < kShortKernelNs, or shorter than the
//                 median launch call (the GPU finishes a kernel before the host has launched the next)
//   GPU-bound     idle < kGpuIdlePercent of the step: the GPU is the limit; no attribution needed
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/base/duration_summary.h"
#include "collector/base/intervals.h"
#include "collector/model/cuda_calls.h"
#include "collector/model/cuda_window.h"
#include "collector/model/model.h"

namespace trainprof::collector {

// Thresholds (docs/analysis.md, "Thresholds").
inline constexpr double kGpuIdlePercent = 10;          ///< idle share of the step below which: GPU-bound
inline constexpr uint64_t kShortKernelNs = 10'000;     ///< median kernel below this: short kernels
inline constexpr double kLaunchBoundIdlePercent = 50;  ///< launch share of the idle time for launch-bound

enum class IdleCause : uint8_t { kDataWait, kSync, kLaunch, kOther, kCount };
inline constexpr size_t kIdleCauses = static_cast<size_t>(IdleCause::kCount);
const char* IdleCauseName(IdleCause c);  ///< "data_wait", "sync", "launch", "other"

struct GpuIdle {
  bool recorded = false;  ///< the process has GPU activity records
  std::string why_not;    ///< when !recorded: what its GPU tracing said
  uint64_t steps = 0;
  uint64_t step_ns = 0;
  uint64_t busy_ns = 0;
  uint64_t idle_ns = 0;
  double busy_percent = 0;  ///< of step_ns
  double idle_percent = 0;
  std::array<uint64_t, kIdleCauses> idle_by_cause{};
  IdleCause cause = IdleCause::kOther;  ///< the largest (ties: in the order above)
  bool gpu_bound = false;
  // The synchronising call that covers most idle time (sync_call empty when none does).
  std::string sync_call;  ///< "cudaStreamSynchronize", "cudaMemcpyAsync (DtoH, pageable)", ...
  uint64_t sync_call_idle_ns = 0;
  uint64_t sync_calls = 0;  ///< calls of it that begin in the steps
  double sync_calls_per_step = 0;
  bool sync_after_dtoh = false;  ///< at least half of them follow a device-to-host copy on their thread
  uint64_t sync_copy_bytes = 0;  ///< median size of those copies
  // Launches and kernels that begin in the steps.
  uint64_t kernels = 0;
  double kernels_per_step = 0;
  double kernel_median_ns = 0;
  uint64_t launch_calls = 0;
  double launch_median_ns = 0;
  bool medians_exact = true;  ///< false: the two medians estimated (past 1024 values, within 0.39%)
  bool launch_bound = false;

  uint64_t idle(IdleCause c) const { return idle_by_cause[static_cast<size_t>(c)]; }
  double idle_share(IdleCause c) const;  ///< percent of idle_ns
};

/// Sets `g`'s figures made from its measured ones (recorded true): busy and idle shares, the
/// largest cause, GPU-bound, per-step counts, launch-bound (the rules above).
void FinishGpuIdle(GpuIdle* g);

/// The GPU idle analysis of one process made window by window (model/cuda_window.h): each
/// window's activity, call spans, steps and waits clipped to it (the interval algebra acts point by
/// point, so the lengths add up to the whole's), the calls and kernels it owns counted, each
/// thread's previous call carried into the next window. Any cut into windows gives what one
/// window gives.
class GpuIdleSweep {
 public:
  /// `steps`, `waits` as AnalyzeGpuIdle; `correlated[i]`: the GPU records of `process`'s image i by
  /// correlation id, over all of them (CorrelateGpuRecords); none is owned, all are kept until
  /// Result.
  GpuIdleSweep(const Process& process, const std::vector<Interval>& steps, const IntervalSet& waits,
               const StringPool& strings, std::vector<const Correlated*> correlated);

  /// One window; `records[i]`: the records of image i that the window owns or overlaps.
  void Add(const TimeWindow& window, const std::vector<const CudaData*>& records);

  /// The analysis; `any_activity`: the process has a kernel, memcpy or memset with valid times.
  GpuIdle Result(bool any_activity) &&;

 private:
  struct PreviousCall {  // what a synchronisation after it needs of a thread's latest call
    bool copy_call = false;  // a cudaMemcpy* / cuMemcpy* by name
    bool dtoh = false;       // the copy it started is DtoH (held by value: windows come and go)
    uint64_t bytes = 0;      // that copy's bytes
  };
  struct Label {  // a synchronising call's label: its idle time and its calls in the steps
    uint64_t covered_ns = 0;
    uint64_t calls = 0;
    std::vector<uint64_t> dtoh_bytes;  // the device-to-host copy each followed or was
  };
  const Process& process_;
  const StringPool& strings_;
  std::vector<const Correlated*> correlated_;
  IntervalSet steps_, waits_;
  GpuIdle g_;
  std::unordered_map<StringId, std::string> names_;  // recorded name → display name
  std::map<std::string, Label> labels_;
  std::vector<std::unordered_map<uint32_t, PreviousCall>> previous_;  // per image: thread → its latest call
  DurationSummary kernel_durations_, launch_durations_;  // exact up to 1024 values, then bounded
};

/// `steps`: the steps in the statistics; `waits`: their data-wait time (union).
GpuIdle AnalyzeGpuIdle(const Process& process, const std::vector<Interval>& steps, const IntervalSet& waits,
                       const StringPool& strings);

/// The sentences about the GPU for the verdict (gpu_idle_text.cc), each with its numbers.
void DescribeGpuIdle(const GpuIdle& g, std::vector<std::string>* out);

}  // namespace trainprof::collector
