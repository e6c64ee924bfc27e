#include "collector/analysis/gpu_idle.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

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

// One call, classified; synchronising calls carry the label the verdict names them by. 40 bytes:
// a run has millions of calls, and the few distinct labels are kept once.
struct Call {
  const CudaCall* call;
  const std::string* name;   // display name (owned by the per-name cache)
  const std::string* label;  // kSync / kCopy only, else nullptr: the name, with a copy's kind
                             // ("(DtoH, pageable)"); owned by the label set
  const GpuMemcpy* copy;     // the copy it started, if any
  CallClass cls;
};

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

GpuIdle AnalyzeGpuIdle(const Process& p, const std::vector<Interval>& step_list, const IntervalSet& waits,
                       const StringPool& strings) {
  GpuIdle g;
  const IntervalSet steps = Union(step_list);
  g.steps = step_list.size();
  g.step_ns = Length(steps);
  bool any_activity = false;
  for (const TraceImage& img : p.images) any_activity = any_activity || img.cuda.any_activity();
  if (!any_activity) {
    const GpuTracing t = GpuTracingOf(p, strings);
    if (t.state == "unavailable") {
      g.why_not = "GPU tracing unavailable: " + (t.message.empty() ? "no reason recorded" : t.message);
    } else {
      g.why_not = t.any ? "no kernel, memcpy or memset recorded" : "no CUDA activity in this process";
    }
    return g;
  }
  g.recorded = true;

  // The calls of every image, classified; per image the thread's previous call tells what a
  // synchronisation followed.
  std::vector<Call> calls;  // pointers into it are kept: reserved once, never reallocated
  size_t total_calls = 0;
  for (const TraceImage& img : p.images) total_calls += img.cuda.calls.size();
  calls.reserve(total_calls);
  std::map<std::string, std::vector<Interval>> sync_by_label;
  std::vector<Interval> sync_all, launch_all;
  std::vector<uint64_t> launch_durations;
  // label → (call, the previous call on its thread), for the calls that begin in the steps
  std::map<std::string, std::vector<std::pair<const Call*, const Call*>>> sync_calls_in_steps;
  std::unordered_map<StringId, std::string> names;  // recorded name → display name (element addresses are stable)
  std::unordered_set<std::string> labels;           // the synchronising calls' labels (element addresses are stable)
  for (const TraceImage& img : p.images) {
    const Correlated corr = CorrelateGpuRecords(img.cuda);
    const size_t first = calls.size();
    for (const CudaCall& c : img.cuda.calls) {
      auto [it, inserted] = names.try_emplace(c.name);
      if (inserted) it->second = CudaApiDisplayName(strings.Get(c.name));
      const std::string& name = it->second;
      const GpuMemcpy* const* copy = corr.copies.Find(c.correlation);
      const GpuMemcpy* m = copy == nullptr ? nullptr : *copy;
      const CallClass cls = ClassifyCall(name, m, corr.kernels.Find(c.correlation) != nullptr);
      const std::string* label = nullptr;
      if (cls == CallClass::kSync || cls == CallClass::kCopy) {
        std::string text = name;
        if (cls == CallClass::kCopy && m != nullptr) {
          text += " (" + MemcpyKindName(m->kind) + (m->pageable() ? ", pageable)" : ")");
        }
        label = &*labels.insert(std::move(text)).first;
      }
      calls.push_back({&c, &name, label, m, cls});
    }
    std::unordered_map<uint32_t, const Call*> previous;  // thread → its latest call
    for (size_t i = first; i < calls.size(); ++i) {
      const Call& c = calls[i];
      // A call that never returned blocked until the process ended; one whose exit was lost to
      // damage has no known end: none is assumed.
      const uint64_t end = c.call->returned    ? c.call->end_ns
                           : c.call->exit_lost ? c.call->begin_ns
                                               : std::max(p.end_ns, c.call->begin_ns);
      const Interval span{c.call->begin_ns, end};
      const bool in_steps = Inside(steps, c.call->begin_ns);
      if (c.cls == CallClass::kSync || c.cls == CallClass::kCopy) {
        sync_by_label[*c.label].push_back(span);
        sync_all.push_back(span);
        if (in_steps) {
          auto prev = previous.find(c.call->thread);
          sync_calls_in_steps[*c.label].push_back({&c, prev == previous.end() ? nullptr : prev->second});
        }
      } else if (c.cls == CallClass::kLaunch) {
        launch_all.push_back(span);
        if (in_steps && c.call->returned) launch_durations.push_back(c.call->duration());
      }
      previous[c.call->thread] = &c;
    }
  }

  // Busy and idle time, then the idle time by what the host did.
  const IntervalSet busy = Intersect(ProcessGpuActivity(p), steps);
  const IntervalSet idle = Subtract(steps, busy);
  g.busy_ns = Length(busy);
  g.idle_ns = Length(idle);
  g.busy_percent = Percent(g.busy_ns, g.step_ns);
  g.idle_percent = Percent(g.idle_ns, g.step_ns);
  const IntervalSet data = Intersect(idle, waits);
  const IntervalSet after_data = Subtract(idle, data);
  const IntervalSet sync_set = Union(std::move(sync_all));
  const IntervalSet sync = Intersect(after_data, sync_set);
  const IntervalSet after_sync = Subtract(after_data, sync_set);
  const IntervalSet launch_set = Union(std::move(launch_all));
  const IntervalSet launch = Intersect(after_sync, launch_set);
  g.idle_by_cause[static_cast<size_t>(IdleCause::kDataWait)] = Length(data);
  g.idle_by_cause[static_cast<size_t>(IdleCause::kSync)] = Length(sync);
  g.idle_by_cause[static_cast<size_t>(IdleCause::kLaunch)] = Length(launch);
  g.idle_by_cause[static_cast<size_t>(IdleCause::kOther)] = Length(Subtract(after_sync, launch_set));
  g.cause = IdleCause::kDataWait;  // the largest; ties go to the earlier cause
  for (size_t c = 1; c < kIdleCauses; ++c) {
    if (g.idle_by_cause[c] > g.idle(g.cause)) g.cause = static_cast<IdleCause>(c);
  }
  g.gpu_bound = g.idle_percent < kGpuIdlePercent;

  // The synchronising call behind most of the sync idle time.
  for (auto& [label, spans] : sync_by_label) {
    const uint64_t covered = Length(Intersect(sync, Union(spans)));
    if (covered > g.sync_call_idle_ns) {
      g.sync_call_idle_ns = covered;
      g.sync_call = label;
    }
  }
  if (!g.sync_call.empty()) {
    const auto& list = sync_calls_in_steps[g.sync_call];
    g.sync_calls = list.size();
    g.sync_calls_per_step = g.steps > 0 ? static_cast<double>(g.sync_calls) / static_cast<double>(g.steps) : 0;
    std::vector<uint64_t> bytes;
    for (const auto& [call, prev] : list) {
      if (call->cls == CallClass::kCopy) {
        if (call->copy != nullptr && call->copy->kind == format::MemcpyKind::kDtoH) bytes.push_back(call->copy->bytes);
      } else if (prev != nullptr && prev->copy != nullptr && prev->copy->kind == format::MemcpyKind::kDtoH &&
                 IsCopyCall(*prev->name)) {
        bytes.push_back(prev->copy->bytes);
      }
    }
    g.sync_after_dtoh = !bytes.empty() && 2 * bytes.size() >= list.size();
    if (g.sync_after_dtoh) g.sync_copy_bytes = static_cast<uint64_t>(SummarizeSample(&bytes).median);
  }

  // Kernels and launches in the steps.
  std::vector<uint64_t> kernel_durations;
  for (const TraceImage& img : p.images) {
    for (const GpuKernel& k : img.cuda.kernels) {
      if (Inside(steps, k.start_ns)) kernel_durations.push_back(k.duration());
    }
  }
  g.kernels = kernel_durations.size();
  g.kernels_per_step = g.steps > 0 ? static_cast<double>(g.kernels) / static_cast<double>(g.steps) : 0;
  g.kernel_median_ns = SummarizeSample(&kernel_durations).median;
  g.launch_calls = launch_durations.size();
  g.launch_median_ns = SummarizeSample(&launch_durations).median;
  g.launch_bound = g.cause == IdleCause::kLaunch && g.idle_share(IdleCause::kLaunch) >= kLaunchBoundIdlePercent &&
                   g.kernels > 0 &&
                   (g.kernel_median_ns < static_cast<double>(kShortKernelNs) ||
                    (g.launch_calls > 0 && g.kernel_median_ns < g.launch_median_ns));
  return g;
}

}  // namespace trainprof::collector
