#include "collector/report/report_gpu_overlap.h"

namespace trainprof::collector {

void AddGpuOverlap(const std::vector<ProcessSummary>& summaries, Report* r) {
  for (const ProcessSummary& s : summaries) {
    if (!s.steps_gpu.overlap) continue;
    const GpuOverlap& o = *s.steps_gpu.overlap;
    r->temporal_breakdown.push_back({s.info.host, s.info.pid, s.info.rank, o.temporal});
    r->kernel_categories.push_back({s.info.host, s.info.pid, s.info.rank, o.categories, o.steps});
  }
}

}  // namespace trainprof::collector
