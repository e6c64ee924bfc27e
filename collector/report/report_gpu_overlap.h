// The GPU overlap rows of the report: for each process with GPU activity, its temporal breakdown
// (stats/temporal_breakdown.h) and kernel categories (stats/kernel_categories.h), the latter with
// the communication of each of its steps (the bottleneck analysis's steps, steps.csv).
#pragma once

#include "collector/model/model.h"
#include "collector/report/report.h"

namespace trainprof::collector {

/// Fills r->temporal_breakdown and r->kernel_categories from `trace`, in process order, and the
/// records in `windows` (null: one window over the trace's records); needs r->bottleneck (the
/// steps). A process has steps in its kernel_categories row only when it ran communication
/// kernels.
void AddGpuOverlap(const Trace& trace, Report* r, const CudaWindows* windows = nullptr);

}  // namespace trainprof::collector
