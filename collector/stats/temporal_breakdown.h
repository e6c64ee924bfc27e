// The temporal breakdown of a process's GPU time: Holistic Trace Analysis's
// get_temporal_breakdown (BreakdownAnalysis.get_temporal_breakdown and _get_idle_time_for_kernels,
// hta/analyzers/breakdown_analysis.py), on CudaData. Definitions: docs/analysis.md, "Temporal
// breakdown".
//
//   active span   first start to last end of the process's GPU activity (kernels, memcpys,
//                 memsets; every device and stream: HTA's "kernel_time" of a rank)
//   idle          the active span minus the union of all the activity (nothing runs on any stream)
//   compute       the union of the computation kernels (kernel_categories.h)
//   non-compute   the rest: span − compute − idle, i.e. the time only communication, memory or
//                 "other" kernels run
//
//   GPU  |██comp██|  |▒comm▒|███|     |▒mem▒|
//        └────────────── active span ───────┘
//                 idle^         idle^^^^^
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "collector/stats/kernel_categories.h"

namespace trainprof::collector {

/// The three parts of the active span, in ns, and their shares of it (none for an empty span).
struct TemporalBreakdown {
  uint64_t active_span_ns = 0;
  uint64_t idle_ns = 0;
  uint64_t compute_ns = 0;
  uint64_t non_compute_ns = 0;
  std::optional<double> idle_percent, compute_percent, non_compute_percent;
};

TemporalBreakdown TemporalBreakdownOf(const CategorizedActivity& activity);

/// One row of `temporal_breakdown`: a process with GPU activity.
struct TemporalBreakdownRow {
  std::string host;
  int32_t pid = 0;
  std::optional<int64_t> rank;
  TemporalBreakdown breakdown;
};

}  // namespace trainprof::collector
