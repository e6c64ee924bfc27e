// The GPU overlap rows of the report: for each process with GPU activity, its temporal breakdown
// (stats/temporal_breakdown.h) and kernel categories (stats/kernel_categories.h), the latter with
// the communication of each of its steps (the bottleneck analysis's steps, steps.csv).
#pragma once

#include <vector>

#include "collector/base/id_map.h"
#include "collector/model/cuda_window.h"
#include "collector/model/model.h"
#include "collector/report/report.h"
#include "collector/stats/gpu_overlap_sweep.h"

namespace trainprof::collector {

/// Fills r->temporal_breakdown and r->kernel_categories from `trace`'s records (one window), in
/// process order; needs r->bottleneck (the steps). A process has steps in its kernel_categories
/// row only when it ran communication kernels.
void AddGpuOverlap(const Trace& trace, Report* r);

/// The same rows fed window by window, for one pass over the windows that feeds every windowed
/// analysis (report.cc): each process's look-ups its window's (CudaWindowData::Enter, made from
/// its partners), or, with `whole` (one window over the images' own records), made from the images.
///
///   GpuOverlapWindows overlap(trace, r->bottleneck, windows.whole());
///   for (size_t k = 0; k < windows.size(); ++k) overlap.Add(windows.window(k), data_of_k);
///   std::move(overlap).AddTo(r);
class GpuOverlapWindows {
 public:
  /// The steps are `bottleneck`'s (Report::bottleneck).
  GpuOverlapWindows(const Trace& trace, const Bottleneck& bottleneck, bool whole);

  /// One window; `data[p]`: its records of trace.processes[p].
  void Add(const TimeWindow& window, const std::vector<const CudaWindowData*>& data);
  /// Fills r->temporal_breakdown and r->kernel_categories, as AddGpuOverlap.
  void AddTo(Report* r) &&;

 private:
  const Trace& trace_;
  bool whole_;  // one window over the images' own records
  std::vector<GpuOverlapSweep> sweeps_;  // per process
};

}  // namespace trainprof::collector
