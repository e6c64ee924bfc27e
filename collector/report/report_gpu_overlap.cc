#include "collector/report/report_gpu_overlap.h"

#include <algorithm>
#include <optional>

#include "collector/model/cuda_calls.h"
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

void AddGpuOverlap(const Trace& trace, Report* r, const CudaWindows* windows) {
  std::optional<CudaWindows> whole;  // without windows: one over the records of the trace
  if (windows == nullptr) whole.emplace(trace.processes);
  const CudaWindows& w = windows == nullptr ? *whole : *windows;
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    const Process& p = trace.processes[i];
    // Each image's calls by correlation id, for the NCCL kernels' launches: over the images' own
    // records made there, and only for an image with NCCL kernels; otherwise made for each window
    // from what it is correlated with (CudaWindowData::partners).
    std::vector<IdMap<uint64_t>> enter(w.whole() ? 0 : p.images.size());
    std::vector<const IdMap<uint64_t>*> enter_of(p.images.size(), nullptr);
    for (size_t m = 0; m < enter.size(); ++m) enter_of[m] = &enter[m];
    GpuOverlapSweep sweep(StepsOf(r->bottleneck, i));
    for (size_t k = 0; k < w.size(); ++k) {
      const CudaWindowData data = w.Read(k, p);
      for (size_t m = 0; m < enter.size(); ++m) enter[m] = EnterByCorrelation(*data.partners()[m], /*skip_zero=*/false);
      sweep.Add(CategorizeActivity(p, trace.strings, w.window(k), data.records(), enter_of));
    }
    if (sweep.empty()) continue;
    r->temporal_breakdown.push_back({p.host, p.pid, p.rank, sweep.Temporal()});
    r->kernel_categories.push_back({p.host, p.pid, p.rank, sweep.Categories(), sweep.Steps()});
  }
}

}  // namespace trainprof::collector
