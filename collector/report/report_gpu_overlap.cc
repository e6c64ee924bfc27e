#include "collector/report/report_gpu_overlap.h"

#include <algorithm>

#include "collector/stats/gpu_overlap_sweep.h"

namespace trainprof::collector {
namespace {

// The steps of process `index` in the bottleneck analysis, by begin.
std::vector<StepWindow> StepsOf(const Bottleneck& b, size_t index) {
  std::vector<StepWindow> steps;
  for (const TrainingProcess& t : b.processes) {
    if (t.process != static_cast<int>(index)) continue;
    for (const StepRow& s : t.step_rows) steps.push_back({s.step, {s.start_ns, s.end_ns}});
  }
  std::sort(steps.begin(), steps.end(),
            [](const StepWindow& a, const StepWindow& b) { return a.time.begin < b.time.begin; });
  return steps;
}

}  // namespace

void AddGpuOverlap(const Trace& trace, Report* r) {
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    const Process& p = trace.processes[i];
    GpuOverlapSweep sweep(StepsOf(r->bottleneck, i));
    sweep.Add(CategorizeActivity(p, trace.strings));
    if (sweep.empty()) continue;
    r->temporal_breakdown.push_back({p.host, p.pid, p.rank, sweep.Temporal()});
    r->kernel_categories.push_back({p.host, p.pid, p.rank, sweep.Categories(), sweep.Steps()});
  }
}

}  // namespace trainprof::collector
