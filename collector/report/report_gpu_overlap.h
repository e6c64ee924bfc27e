// The GPU overlap rows of the report: for each process with GPU activity, its temporal breakdown
// (stats/temporal_breakdown.h) and kernel categories (stats/kernel_categories.h), the latter with
// the communication of each of its steps (the bottleneck analysis's steps, steps.csv), merged from
// the processes' summaries (their StepsGpu: analysis/steps_gpu.h).
#pragma once

#include <vector>

#include "collector/report/report.h"
#include "collector/summary/process_summary.h"

namespace trainprof::collector {

/// Fills r->temporal_breakdown and r->kernel_categories from the summaries, in their order. A
/// process has steps in its kernel_categories row only when it ran communication kernels.
void AddGpuOverlap(const std::vector<ProcessSummary>& summaries, Report* r);

}  // namespace trainprof::collector
