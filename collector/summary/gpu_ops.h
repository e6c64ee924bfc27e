// A process's GPU ops for its summary (GpuOpsSummary, process_summary.h): their idle gaps by kind
// per stream and their launch calls per name, made from all its CUDA records at once
// (SummarizeGpuOps) or window by window with the other windowed analyses (GpuOpsSweep; a large
// trace, model/cuda_window.h). Any cut into windows gives what one window gives.
#pragma once

#include <vector>

#include "collector/model/cuda_window.h"
#include "collector/model/model.h"
#include "collector/summary/process_summary.h"

namespace trainprof::collector {

/// The GPU ops of `p` from the CUDA records its images keep (one window); names read in `strings`.
GpuOpsSummary SummarizeGpuOps(const Process& p, const StringPool& strings);

/// The GPU ops of every process of a trace, window by window (windows read again, not whole():
/// each window's look-ups made from its partners, CudaWindowData::Enter and PartnerSources).
///
///   GpuOpsSweep sweep(trace);
///   for (size_t k = 0; k < windows.size(); ++k) sweep.Add(windows.window(k), data_of_k);
///   std::vector<GpuOpsSummary> per_process = std::move(sweep).Summaries();
class GpuOpsSweep {
 public:
  explicit GpuOpsSweep(const Trace& trace);

  /// One window; `data[p]`: its records of trace.processes[p].
  void Add(const TimeWindow& window, const std::vector<const CudaWindowData*>& data);
  /// One per process of the trace, in its order.
  std::vector<GpuOpsSummary> Summaries() &&;

 private:
  const Trace& trace_;
  std::vector<IdleKindsSweep> idle_;      // per process
  std::vector<KernelLaunchSweep> launch_;  // per process
};

}  // namespace trainprof::collector
