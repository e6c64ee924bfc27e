#include "collector/report/report_gpu_overlap.h"

#include <algorithm>

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

GpuOverlapWindows::GpuOverlapWindows(const Trace& trace, const Bottleneck& bottleneck, bool whole)
    : trace_(trace), whole_(whole) {
  sweeps_.reserve(trace.processes.size());
  for (size_t p = 0; p < trace.processes.size(); ++p) sweeps_.emplace_back(StepsOf(bottleneck, p));
}

void GpuOverlapWindows::Add(const TimeWindow& window, const std::vector<const CudaWindowData*>& data) {
  for (size_t p = 0; p < data.size(); ++p) {
    // Each image's calls by correlation id, for the NCCL kernels' launches: over the images' own
    // records made by CategorizeActivity (null), and only for an image with NCCL kernels;
    // otherwise the window's (CudaWindowData::Enter, made from what it is correlated with).
    std::vector<const IdMap<uint64_t>*> enter(trace_.processes[p].images.size(), nullptr);
    if (!whole_) {
      for (size_t m = 0; m < enter.size(); ++m) enter[m] = &data[p]->Enter(m);
    }
    sweeps_[p].Add(CategorizeActivity(trace_.processes[p], trace_.strings, window, data[p]->records(), enter));
  }
}

void GpuOverlapWindows::AddTo(Report* r) && {
  for (size_t i = 0; i < sweeps_.size(); ++i) {
    const GpuOverlapSweep& sweep = sweeps_[i];
    if (sweep.empty()) continue;
    const Process& p = trace_.processes[i];
    r->temporal_breakdown.push_back({p.host, p.pid, p.rank, sweep.Temporal()});
    r->kernel_categories.push_back({p.host, p.pid, p.rank, sweep.Categories(), sweep.Steps()});
  }
}

void AddGpuOverlap(const Trace& trace, Report* r) {
  GpuOverlapWindows overlap(trace, r->bottleneck, /*whole=*/true);
  const CudaWindows whole(trace.processes);
  ForEachCudaWindow(whole, trace.processes, /*threads=*/0,
                    [&](size_t, const std::vector<const CudaWindowData*>& data) { overlap.Add(TimeWindow{}, data); });
  std::move(overlap).AddTo(r);
}

}  // namespace trainprof::collector
