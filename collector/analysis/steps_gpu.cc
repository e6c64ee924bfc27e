#include "collector/analysis/steps_gpu.h"

#include <algorithm>
#include <utility>

#include "collector/analysis/bottleneck.h"

namespace trainprof::collector {

bool IsTrainingProcess(const ProcessPhases& phases) {
  return phases.Count(Phase::kDataWait) > 0 || phases.Count(Phase::kBackward) > 0 ||
         phases.Count(Phase::kProfilerStep) > 0;
}

const Step* WarmupStep(const StepSplit& split, bool recorded_from_delay) {
  if (recorded_from_delay) return nullptr;
  const Step* first = nullptr;
  size_t train = 0;
  for (const Step& s : split.steps) {
    if (s.eval) continue;
    if (first == nullptr) first = &s;
    ++train;
  }
  return train >= kWarmupMinSteps ? first : nullptr;
}

CountedSteps CountSteps(const ProcessFacts& facts, const ProcessPhases& phases) {
  CountedSteps out;
  out.training = IsTrainingProcess(phases);
  if (!out.training) return out;
  out.split = SplitSteps(phases, facts.ddp_backend.has_value());
  const StepSplit& split = out.split;
  const Step* warmup = WarmupStep(split, facts.recorded_from_delay);
  std::vector<Interval> waits;
  for (size_t i = 0; i < split.steps.size(); ++i) {
    const Step& s = split.steps[i];
    out.all.push_back({i, {s.begin_ns, s.end_ns}});
    if (s.eval || &s == warmup) continue;
    out.in_statistics.push_back({s.begin_ns, s.end_ns});
    waits.insert(waits.end(), s.waits.begin(), s.waits.end());
  }
  out.waits = Union(std::move(waits));
  std::sort(out.all.begin(), out.all.end(),
                   [](const StepWindow& a, const StepWindow& b) { return a.time.begin < b.time.begin; });
  return out;
}

struct StepsGpuSweep::ProcessSweeps {
  CountedSteps steps;  // the sweeps below keep references into it
  std::optional<CollectivesSweep> collectives;  // a training process
  std::optional<GpuIdleSweep> idle;             // a training process
  bool any_activity = false;                    // a kernel, memcpy or memset with valid times
  std::vector<Correlated> correlated;           // each image's GPU records by correlation id, this window's
  std::optional<GpuOverlapSweep> overlap;
};

StepsGpuSweep::StepsGpuSweep(const Trace& trace, const RunView& run, bool whole) : trace_(trace), whole_(whole) {
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    const Process& process = trace.processes[i];
    auto s = std::make_unique<ProcessSweeps>();
    s->steps = CountSteps(*run.facts[i], *run.phases[i]);
    s->overlap.emplace(s->steps.all);
    if (s->steps.training) {
      s->collectives.emplace(s->steps.in_statistics, trace.strings);
      for (const TraceImage& img : process.images) s->any_activity = s->any_activity || img.cuda.any_activity();
      // Each image's GPU records by correlation id, made for each window from what it is
      // correlated with (with one window: the image's records).
      s->correlated.resize(s->any_activity ? process.images.size() : 0);
      std::vector<const Correlated*> correlated_of;
      for (const Correlated& c : s->correlated) correlated_of.push_back(&c);
      s->idle.emplace(process, s->steps.in_statistics, s->steps.waits, trace.strings, std::move(correlated_of));
    }
    sweeps_.push_back(std::move(s));
  }
}

StepsGpuSweep::~StepsGpuSweep() = default;

void StepsGpuSweep::Add(const TimeWindow& window, const std::vector<const CudaWindowData*>& data) {
  for (size_t p = 0; p < sweeps_.size(); ++p) {
    ProcessSweeps& s = *sweeps_[p];
    const CudaWindowData& d = *data[p];
    // Each image's calls by correlation id, for the NCCL kernels' launches: with one window over
    // the images' own records made by CategorizeActivity (null), and only for an image with NCCL
    // kernels; otherwise the window's (CudaWindowData::Enter, made from what it is correlated with).
    std::vector<const IdMap<uint64_t>*> enter(trace_.processes[p].images.size(), nullptr);
    if (!whole_) {
      for (size_t m = 0; m < enter.size(); ++m) enter[m] = &d.Enter(m);
    }
    s.overlap->Add(CategorizeActivity(trace_.processes[p], trace_.strings, window, d.records(), enter));
    if (!s.steps.training) continue;
    s.collectives->Add(window, d.records());
    if (!s.any_activity) continue;
    for (size_t i = 0; i < s.correlated.size(); ++i) s.correlated[i] = CorrelateGpuRecords(d.PartnerSources(i));
    s.idle->Add(window, d.records());
    for (Correlated& c : s.correlated) c = {};  // the sweep reads them in Add only
  }
}

std::vector<StepsGpu> StepsGpuSweep::Results(std::vector<StepSplit>* splits) && {
  std::vector<StepsGpu> out(sweeps_.size());
  if (splits != nullptr) splits->assign(sweeps_.size(), {});
  for (size_t p = 0; p < sweeps_.size(); ++p) {
    ProcessSweeps& s = *sweeps_[p];
    if (splits != nullptr) (*splits)[p] = std::move(s.steps.split);
    out[p].overlap = s.overlap->Result();
    if (!s.steps.training) continue;
    out[p].nccl = s.collectives->nccl();
    out[p].idle = std::move(*s.idle).Result(s.any_activity);
  }
  sweeps_.clear();
  return out;
}

std::vector<StepsGpu> SweepStepsGpu(const Trace& trace, const RunView& run, std::vector<StepSplit>* splits) {
  StepsGpuSweep sweep(trace, run, /*whole=*/true);
  const CudaWindows whole(trace.processes);  // one window over the records of the trace
  ForEachCudaWindow(whole, trace.processes, /*threads=*/0,
                    [&](size_t, const std::vector<const CudaWindowData*>& data) { sweep.Add(TimeWindow{}, data); });
  return std::move(sweep).Results(splits);
}

}  // namespace trainprof::collector
