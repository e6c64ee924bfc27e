#include "collector/analysis/gpu_idle.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "collector/model/cuda_calls.h"
#include "collector/stats/gpu_devices.h"
#include "collector/stats/gpu_tracing.h"
#include "collector/base/sample_stats.h"

namespace trainprof::collector {
namespace {

bool Inside(const IntervalSet& s, uint64_t t) {
  auto it = std::upper_bound(s.begin(), s.end(), t, [](uint64_t x, const Interval& i) { return x < i.end; });
  return it != s.end() && it->begin <= t;
}

bool IsCopyCall(std::string_view name) { return name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy"); }

}  // namespace

const char* IdleCauseName(IdleCause c) {
  switch (c) {
    case IdleCause::kDataWait: return "data_wait";
    case IdleCause::kSync: return "sync";
    case IdleCause::kLaunch: return "launch";
    default: return "other";
  }
}

double GpuIdle::idle_share(IdleCause c) const { return Percent(idle(c), idle_ns); }

GpuIdleSweep::GpuIdleSweep(const Process& process, const std::vector<Interval>& step_list, const IntervalSet& waits,
                           const StringPool& strings, std::vector<const Correlated*> correlated)
    : process_(process),
      strings_(strings),
      correlated_(std::move(correlated)),
      steps_(Union(step_list)),
      waits_(waits),
      previous_(correlated_.size()) {
  g_.steps = step_list.size();
  g_.step_ns = Length(steps_);
}

void GpuIdleSweep::Add(const TimeWindow& w, const std::vector<const CudaData*>& records) {
  std::vector<Interval> activity, sync_all, launch_all;
  std::map<const std::string*, std::vector<Interval>> sync_by_label;  // this window's spans, by label
  for (size_t i = 0; i < records.size(); ++i) {
    const CudaData& c = *records[i];
    const Correlated& corr = *correlated_[i];
    std::unordered_map<uint32_t, PreviousCall>& previous = previous_[i];
    for (const CudaCall& call : c.calls) {
      auto [it, inserted] = names_.try_emplace(call.name);
      if (inserted) it->second = CudaApiDisplayName(strings_.Get(call.name));
      const std::string& name = it->second;
      const GpuMemcpy* const* copy = corr.copies.Find(call.correlation);
      const GpuMemcpy* m = copy == nullptr ? nullptr : *copy;
      const CallClass cls = ClassifyCall(name, m, corr.kernels.Find(call.correlation) != nullptr);
      const bool owned = w.Owns(call.begin_ns);
      const uint64_t end = CallEnd(call, process_.end_ns);
      if (cls == CallClass::kSync || cls == CallClass::kCopy) {
        std::string text = name;
        if (cls == CallClass::kCopy && m != nullptr) text += " (" + MemcpyKindName(m->kind) + (m->pageable() ? ", pageable)" : ")");
        auto& [label, stats] = *labels_.try_emplace(std::move(text)).first;
        if (w.Overlaps(call.begin_ns, end)) {
          sync_all.push_back(w.Clip(call.begin_ns, end));
          sync_by_label[&label].push_back(sync_all.back());
        }
        if (owned && Inside(steps_, call.begin_ns)) {
          ++stats.calls;
          if (cls == CallClass::kCopy) {
            if (m != nullptr && m->kind == format::MemcpyKind::kDtoH) stats.dtoh_bytes.push_back(m->bytes);
          } else if (auto prev = previous.find(call.thread);
                     prev != previous.end() && prev->second.copy_call && prev->second.dtoh) {
            stats.dtoh_bytes.push_back(prev->second.bytes);
          }
        }
      } else if (cls == CallClass::kLaunch) {
        if (w.Overlaps(call.begin_ns, end)) launch_all.push_back(w.Clip(call.begin_ns, end));
        if (owned && Inside(steps_, call.begin_ns) && call.returned) launch_durations_.Add(call.duration());
      }
      if (owned) {
        const bool dtoh = m != nullptr && m->kind == format::MemcpyKind::kDtoH;
        previous[call.thread] = {IsCopyCall(name), dtoh, dtoh ? m->bytes : 0};
      }
    }
    for (const GpuKernel& k : c.kernels) {
      if (w.Overlaps(k.start_ns, k.end_ns)) activity.push_back(w.Clip(k.start_ns, k.end_ns));
      if (w.Owns(k.start_ns) && Inside(steps_, k.start_ns)) kernel_durations_.Add(k.duration());
    }
    for (const GpuMemcpy& m : c.memcpys) {
      if (w.Overlaps(m.start_ns, m.end_ns)) activity.push_back(w.Clip(m.start_ns, m.end_ns));
    }
    for (const GpuMemset& m : c.memsets) {
      if (w.Overlaps(m.start_ns, m.end_ns)) activity.push_back(w.Clip(m.start_ns, m.end_ns));
    }
  }

  // Busy and idle time in the window, then the idle time by what the host did.
  const IntervalSet steps = Clip(steps_, w.begin_ns, w.end_ns);
  const IntervalSet busy = Intersect(Union(std::move(activity)), steps);
  const IntervalSet idle = Subtract(steps, busy);
  g_.busy_ns += Length(busy);
  g_.idle_ns += Length(idle);
  const IntervalSet data = Intersect(idle, Clip(waits_, w.begin_ns, w.end_ns));
  const IntervalSet after_data = Subtract(idle, data);
  const IntervalSet sync_set = Union(std::move(sync_all));
  const IntervalSet sync = Intersect(after_data, sync_set);
  const IntervalSet after_sync = Subtract(after_data, sync_set);
  const IntervalSet launch_set = Union(std::move(launch_all));
  const IntervalSet launch = Intersect(after_sync, launch_set);
  g_.idle_by_cause[static_cast<size_t>(IdleCause::kDataWait)] += Length(data);
  g_.idle_by_cause[static_cast<size_t>(IdleCause::kSync)] += Length(sync);
  g_.idle_by_cause[static_cast<size_t>(IdleCause::kLaunch)] += Length(launch);
  g_.idle_by_cause[static_cast<size_t>(IdleCause::kOther)] += Length(Subtract(after_sync, launch_set));
  for (auto& [label, spans] : sync_by_label) labels_[*label].covered_ns += Length(Intersect(sync, Union(std::move(spans))));
}

GpuIdle GpuIdleSweep::Result(bool any_activity) && {
  GpuIdle g = std::move(g_);
  if (!any_activity) {
    GpuIdle none;
    none.steps = g.steps;
    none.step_ns = g.step_ns;
    const GpuTracing t = GpuTracingOf(process_, strings_);
    if (t.state == "unavailable") {
      none.why_not = "GPU tracing unavailable: " + (t.message.empty() ? "no reason recorded" : t.message);
    } else {
      none.why_not = t.any ? "no kernel, memcpy or memset recorded" : "no CUDA activity in this process";
    }
    return none;
  }
  g.recorded = true;

  // The synchronising call behind most of the sync idle time.
  Label* top = nullptr;
  for (auto& [label, stats] : labels_) {
    if (stats.covered_ns > g.sync_call_idle_ns) {
      g.sync_call_idle_ns = stats.covered_ns;
      g.sync_call = label;
      top = &stats;
    }
  }
  if (top != nullptr) {
    g.sync_calls = top->calls;
    std::vector<uint64_t>& bytes = top->dtoh_bytes;
    g.sync_after_dtoh = !bytes.empty() && 2 * bytes.size() >= top->calls;
    if (g.sync_after_dtoh) g.sync_copy_bytes = static_cast<uint64_t>(SummarizeSample(&bytes).median);
  }

  // Kernels and launches in the steps.
  g.kernels = kernel_durations_.count();
  const SampleStats kernel = kernel_durations_.Stats(), launch = launch_durations_.Stats();
  g.kernel_median_ns = kernel.median;
  g.launch_calls = launch.count;
  g.launch_median_ns = launch.median;
  g.medians_exact = kernel.exact && launch.exact;
  FinishGpuIdle(&g);
  return g;
}

void FinishGpuIdle(GpuIdle* g) {
  g->recorded = true;
  g->busy_percent = Percent(g->busy_ns, g->step_ns);
  g->idle_percent = Percent(g->idle_ns, g->step_ns);
  g->cause = IdleCause::kDataWait;  // the largest; ties go to the earlier cause
  for (size_t c = 1; c < kIdleCauses; ++c) {
    if (g->idle_by_cause[c] > g->idle(g->cause)) g->cause = static_cast<IdleCause>(c);
  }
  g->gpu_bound = g->idle_percent < kGpuIdlePercent;
  const double steps = static_cast<double>(g->steps);
  g->sync_calls_per_step = g->steps > 0 ? static_cast<double>(g->sync_calls) / steps : 0;
  g->kernels_per_step = g->steps > 0 ? static_cast<double>(g->kernels) / steps : 0;
  g->launch_bound = g->cause == IdleCause::kLaunch && g->idle_share(IdleCause::kLaunch) >= kLaunchBoundIdlePercent &&
                    g->kernels > 0 &&
                    (g->kernel_median_ns < static_cast<double>(kShortKernelNs) ||
                     (g->launch_calls > 0 && g->kernel_median_ns < g->launch_median_ns));
}

GpuIdle AnalyzeGpuIdle(const Process& p, const std::vector<Interval>& step_list, const IntervalSet& waits,
                       const StringPool& strings) {
  bool any_activity = false;
  std::vector<Correlated> correlated;
  std::vector<const CudaData*> records;
  for (const TraceImage& img : p.images) {
    any_activity = any_activity || img.cuda.any_activity();
    records.push_back(&img.cuda);
  }
  std::vector<const Correlated*> of;
  if (any_activity) {
    for (const TraceImage& img : p.images) correlated.push_back(CorrelateGpuRecords(img.cuda));
    for (const Correlated& c : correlated) of.push_back(&c);
  }
  GpuIdleSweep sweep(p, step_list, waits, strings, of);
  if (any_activity) sweep.Add(TimeWindow{}, records);
  return std::move(sweep).Result(any_activity);
}

}  // namespace trainprof::collector
