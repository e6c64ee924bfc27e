#include "collector/stats/temporal_breakdown.h"

#include "collector/base/sample_stats.h"

namespace trainprof::collector {

TemporalBreakdown TemporalBreakdownOf(const CategorizedActivity& activity) {
  TemporalBreakdown t;
  if (activity.all.empty()) return t;
  t.active_span_ns = activity.all.back().end - activity.all.front().begin;
  const uint64_t busy = Length(activity.all);
  t.idle_ns = t.active_span_ns - busy;
  t.compute_ns = Length(activity.of(KernelCategory::kComputation));
  t.non_compute_ns = busy - t.compute_ns;
  const double span = static_cast<double>(t.active_span_ns);
  if (span > 0) {
    t.idle_percent = Percent(static_cast<double>(t.idle_ns), span);
    t.compute_percent = Percent(static_cast<double>(t.compute_ns), span);
    t.non_compute_percent = Percent(static_cast<double>(t.non_compute_ns), span);
  }
  return t;
}

}  // namespace trainprof::collector
