// summary_codec_gpu.h: the GPU sections of a summary, written and read with their checks.
#include "collector/summary/summary_codec_gpu.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "collector/summary/summary_fields.h"

namespace trainprof::collector {

using Json = nlohmann::json;

Json GpuOpsJson(const GpuOpsSummary& g) {
  Json idle = Json::array(), launches = Json::array();
  for (const StreamIdleKinds& k : g.idle_kinds) {
    idle.push_back(Json::array({k.device, k.stream, k.ops, k.host_wait_ns, k.kernel_wait_ns, k.other_ns}));
  }
  for (const LaunchSamples& l : g.launches) {
    launches.push_back(Json::array({l.memory, l.name, DurationsJson(l.cpu), DurationsJson(l.delay), l.shorter,
                                    l.long_launches, l.long_delays}));
  }
  return Json{{"idle_kinds", std::move(idle)},
              {"unlaunched", Json::array({g.unlaunched.ops, g.unlaunched.ns})},
              {"launches", std::move(launches)}};
}

Json DevicesJson(const std::vector<DeviceUse>& uses) {
  Json out = Json::array();
  for (const DeviceUse& u : uses) {
    // The activity as [begin, length, gap, length, ...]: small numbers after the first.
    Json activity = Json::array();
    uint64_t last_end = 0;
    for (const Interval& i : u.activity) {
      activity.push_back(activity.empty() ? i.begin : i.begin - last_end);
      activity.push_back(i.end - i.begin);
      last_end = i.end;
    }
    const bool active = u.active_begin != UINT64_MAX;
    out.push_back(Json::array({u.device, u.name, u.kernels, u.kernel_ns, u.memcpys, u.memsets, u.memory_ns, u.busy_ns,
                               u.active_ns, active ? Json(u.active_begin) : Json(nullptr),
                               active ? Json(u.active_end) : Json(nullptr), DurationsJson(u.latency),
                               std::move(activity), u.filled_ns}));
  }
  return out;
}

Json StepsGpuJson(const StepsGpu& g) {
  Json j{{"nccl", Json::array({g.nccl.any, g.nccl.kernels, g.nccl.in_steps_ns})}, {"idle", nullptr}, {"overlap", nullptr}};
  if (g.idle) {
    const GpuIdle& i = *g.idle;
    j["idle"] = Json{{"recorded", i.recorded},
                     {"why_not", i.why_not},
                     {"steps", i.steps},
                     {"step_ns", i.step_ns},
                     {"busy_ns", i.busy_ns},
                     {"idle_ns", i.idle_ns},
                     {"idle_by_cause", i.idle_by_cause},
                     {"sync_call", i.sync_call},
                     {"sync_call_idle_ns", i.sync_call_idle_ns},
                     {"sync_calls", i.sync_calls},
                     {"sync_after_dtoh", i.sync_after_dtoh},
                     {"sync_copy_bytes", i.sync_copy_bytes},
                     {"kernels", i.kernels},
                     {"kernel_median_ns", i.kernel_median_ns},
                     {"launch_calls", i.launch_calls},
                     {"launch_median_ns", i.launch_median_ns},
                     {"medians_exact", i.medians_exact}};
  }
  if (g.overlap) {
    const TemporalBreakdown& t = g.overlap->temporal;
    const KernelCategoryBreakdown& c = g.overlap->categories;
    Json steps = Json::array();
    for (const StepCommunication& s : g.overlap->steps) steps.push_back(Json::array({s.step, s.communication_ns, s.hidden_ns}));
    j["overlap"] = Json{
        {"temporal", Json::array({t.active_span_ns, t.idle_ns, t.compute_ns, t.non_compute_ns})},
        {"categories", Json::array({c.computation_ns, c.communication_ns, c.memory_ns,
                                    c.computation_overlapping_communication_ns, c.communication_overlapping_memory_ns,
                                    c.computation_overlapping_memory_ns,
                                    c.computation_overlapping_communication_overlapping_memory_ns,
                                    c.communication_total_ns, c.communication_hidden_ns})},
        {"steps", std::move(steps)}};
  }
  return j;
}

GpuOpsSummary ReadGpuOps(const Json& j) {
  GpuOpsSummary g;
  const Json& idle = Array(Field(j, "idle_kinds", "gpu_ops"), "gpu_ops.idle_kinds");
  uint64_t ops = 0;
  for (size_t i = 0; i < idle.size(); ++i) {
    const std::string w = "gpu_ops.idle_kinds[" + std::to_string(i) + "]";
    const Json& r = Array(idle[i], w, 6);
    StreamIdleKinds k;
    k.device = U32(r[0], w + ".device");
    k.stream = U32(r[1], w + ".stream");
    k.ops = U64(r[2], w + ".ops");
    k.host_wait_ns = U64(r[3], w + ".host_wait_ns");
    k.kernel_wait_ns = U64(r[4], w + ".kernel_wait_ns");
    k.other_ns = U64(r[5], w + ".other_ns");
    if (k.ops == 0) Fail(w + ".ops", "a stream without GPU ops");
    if (!g.idle_kinds.empty() && std::pair(g.idle_kinds.back().device, g.idle_kinds.back().stream) >=
                                     std::pair(k.device, k.stream)) {
      Fail(w, "streams not in (device, stream) order, or one twice");
    }
    SetIdleTotals(&k);
    if (k.idle_ns < k.other_ns || k.idle_ns - k.other_ns < k.kernel_wait_ns) Fail(w, "idle time past 2^64 ns");
    ops += k.ops;
    g.idle_kinds.push_back(k);
  }
  const Json& unlaunched = Array(Field(j, "unlaunched", "gpu_ops"), "gpu_ops.unlaunched", 2);
  g.unlaunched = {U64(unlaunched[0], "gpu_ops.unlaunched.ops"), U64(unlaunched[1], "gpu_ops.unlaunched.ns")};
  if (g.unlaunched.ops > ops) Fail("gpu_ops.unlaunched.ops", "more ops than the streams have");
  const Json& launches = Array(Field(j, "launches", "gpu_ops"), "gpu_ops.launches");
  for (size_t i = 0; i < launches.size(); ++i) {
    const std::string w = "gpu_ops.launches[" + std::to_string(i) + "]";
    const Json& r = Array(launches[i], w, 7);
    LaunchSamples l;
    l.memory = Bool(r[0], w + ".memory");
    l.name = Str(r[1], w + ".name");
    if (l.memory && l.name != "memset" && l.name.rfind("memcpy ", 0) != 0) Fail(w + ".name", "not a memcpy or memset");
    if (!g.launches.empty() && std::pair(g.launches.back().memory, g.launches.back().name) >= std::pair(l.memory, l.name)) {
      Fail(w, "names not in order (kernels, then memory operations), or one twice");
    }
    l.cpu = ReadDurations(r[2], w + ".cpu");
    l.delay = ReadDurations(r[3], w + ".delay");
    l.shorter = U64(r[4], w + ".shorter");
    l.long_launches = U64(r[5], w + ".long_launches");
    l.long_delays = U64(r[6], w + ".long_delays");
    const uint64_t n = l.cpu.count();
    if (n == 0 || l.delay.count() != n) Fail(w, "launch calls and delays disagree, or none");
    if (l.shorter > n || l.long_launches > n || l.long_delays > n) Fail(w, "more outliers than launches");
    g.launches.push_back(std::move(l));
  }
  return g;
}

std::vector<DeviceUse> ReadDevices(const Json& j) {
  std::vector<DeviceUse> out;
  Array(j, "devices");
  for (size_t k = 0; k < j.size(); ++k) {
    const std::string w = "devices[" + std::to_string(k) + "]";
    const Json& r = Array(j[k], w, 14);
    DeviceUse u;
    u.device = U32(r[0], w + ".device");
    if (!out.empty() && out.back().device >= u.device) Fail(w + ".device", "devices not in order, or one twice");
    u.name = Str(r[1], w + ".name");
    u.kernels = U64(r[2], w + ".kernels");
    u.kernel_ns = U64(r[3], w + ".kernel_ns");
    u.memcpys = U64(r[4], w + ".memcpys");
    u.memsets = U64(r[5], w + ".memsets");
    u.memory_ns = U64(r[6], w + ".memory_ns");
    u.busy_ns = U64(r[7], w + ".busy_ns");
    u.active_ns = U64(r[8], w + ".active_ns");
    if (!r[9].is_null() || !r[10].is_null()) {
      u.active_begin = U64(r[9], w + ".active_begin");
      u.active_end = U64(r[10], w + ".active_end");
    }
    u.latency = ReadDurations(r[11], w + ".latency");
    const Json& activity = Array(r[12], w + ".activity");
    if (activity.size() % 2 != 0) Fail(w + ".activity", "expected pairs");
    if (activity.size() / 2 > kMaxActivityIntervals) Fail(w + ".activity", "more intervals than a summary keeps");
    uint64_t at = 0, length = 0;
    for (size_t i = 0; i < activity.size(); i += 2) {
      const uint64_t gap = U64(activity[i], w + ".activity"), len = U64(activity[i + 1], w + ".activity");
      if ((i > 0 && gap == 0) || len == 0 || gap > UINT64_MAX - at || len > UINT64_MAX - at - gap) {
        Fail(w + ".activity", "intervals that are empty, touch or pass 2^64 ns");
      }
      u.activity.push_back({at + gap, at + gap + len});
      at += gap + len;
      length += len;
    }
    u.filled_ns = U64(r[13], w + ".filled_ns");
    if (u.filled_ns > length || length - u.filled_ns != u.active_ns) {
      Fail(w + ".activity", "its length is not the active time and what was filled");
    }
    const bool active = u.active_begin != UINT64_MAX;
    if (active != !u.activity.empty() ||
        (active && (u.active_begin != u.activity.front().begin || u.active_end != u.activity.back().end))) {
      Fail(w, "the active window is not the activity's span");
    }
    if (u.busy_ns > u.active_ns) Fail(w + ".busy_ns", "above the active time");
    if (u.latency.count() > u.kernels) Fail(w + ".latency", "more launch latencies than kernels");
    out.push_back(std::move(u));
  }
  return out;
}

StepsGpu ReadStepsGpu(const Json& j) {
  const std::string w = "steps_gpu";
  StepsGpu g;
  const Json& nccl = Array(Field(j, "nccl", w), w + ".nccl", 3);
  g.nccl = {Bool(nccl[0], w + ".nccl.any"), U64(nccl[1], w + ".nccl.kernels"), U64(nccl[2], w + ".nccl.in_steps_ns")};
  if (!g.nccl.any && (g.nccl.kernels > 0 || g.nccl.in_steps_ns > 0)) Fail(w + ".nccl", "NCCL kernels counted without any");
  const Json& idle = Field(j, "idle", w);
  if (!idle.is_null()) {
    const std::string iw = w + ".idle";
    auto f = [&](const char* key) -> const Json& { return Field(idle, key, iw); };
    auto at = [&](const char* key) { return iw + "." + key; };
    GpuIdle i;
    i.recorded = Bool(f("recorded"), at("recorded"));
    i.why_not = Str(f("why_not"), at("why_not"));
    i.steps = U64(f("steps"), at("steps"));
    i.step_ns = U64(f("step_ns"), at("step_ns"));
    i.busy_ns = U64(f("busy_ns"), at("busy_ns"));
    i.idle_ns = U64(f("idle_ns"), at("idle_ns"));
    const Json& causes = Array(f("idle_by_cause"), at("idle_by_cause"), kIdleCauses);
    uint64_t caused = 0;
    for (size_t c = 0; c < kIdleCauses; ++c) {
      i.idle_by_cause[c] = U64(causes[c], at("idle_by_cause"));
      caused += i.idle_by_cause[c];
    }
    i.sync_call = Str(f("sync_call"), at("sync_call"));
    i.sync_call_idle_ns = U64(f("sync_call_idle_ns"), at("sync_call_idle_ns"));
    i.sync_calls = U64(f("sync_calls"), at("sync_calls"));
    i.sync_after_dtoh = Bool(f("sync_after_dtoh"), at("sync_after_dtoh"));
    i.sync_copy_bytes = U64(f("sync_copy_bytes"), at("sync_copy_bytes"));
    i.kernels = U64(f("kernels"), at("kernels"));
    i.kernel_median_ns = F64(f("kernel_median_ns"), at("kernel_median_ns"));
    i.launch_calls = U64(f("launch_calls"), at("launch_calls"));
    i.launch_median_ns = F64(f("launch_median_ns"), at("launch_median_ns"));
    i.medians_exact = Bool(f("medians_exact"), at("medians_exact"));
    if (i.recorded) {
      if (!i.why_not.empty()) Fail(at("why_not"), "a reason for no GPU records where there are some");
      if (i.busy_ns > i.step_ns || i.idle_ns != i.step_ns - i.busy_ns) Fail(iw, "busy and idle time do not make the steps' time");
      if (caused != i.idle_ns) Fail(at("idle_by_cause"), "the causes do not add up to the idle time");
      if (i.sync_call_idle_ns > i.idle(IdleCause::kSync)) Fail(at("sync_call_idle_ns"), "above the sync idle time");
      FinishGpuIdle(&i);
    } else if (i.busy_ns > 0 || i.idle_ns > 0 || caused > 0 || i.kernels > 0 || i.launch_calls > 0 || !i.sync_call.empty()) {
      Fail(iw, "GPU figures where no GPU activity was recorded");
    }
    g.idle = std::move(i);
  }
  const Json& overlap = Field(j, "overlap", w);
  if (!overlap.is_null()) {
    const std::string ow = w + ".overlap";
    GpuOverlap o;
    const Json& t = Array(Field(overlap, "temporal", ow), ow + ".temporal", 4);
    o.temporal.active_span_ns = U64(t[0], ow + ".temporal");
    o.temporal.idle_ns = U64(t[1], ow + ".temporal");
    o.temporal.compute_ns = U64(t[2], ow + ".temporal");
    o.temporal.non_compute_ns = U64(t[3], ow + ".temporal");
    const TemporalBreakdown& tb = o.temporal;
    if (tb.idle_ns > tb.active_span_ns || tb.compute_ns > tb.active_span_ns - tb.idle_ns ||
        tb.non_compute_ns != tb.active_span_ns - tb.idle_ns - tb.compute_ns) {
      Fail(ow + ".temporal", "idle, compute and non-compute time do not make the active span");
    }
    SetShares(&o.temporal);
    const Json& c = Array(Field(overlap, "categories", ow), ow + ".categories", 9);
    KernelCategoryBreakdown& k = o.categories;
    uint64_t* parts[] = {&k.computation_ns, &k.communication_ns, &k.memory_ns,
                         &k.computation_overlapping_communication_ns, &k.communication_overlapping_memory_ns,
                         &k.computation_overlapping_memory_ns,
                         &k.computation_overlapping_communication_overlapping_memory_ns, &k.communication_total_ns,
                         &k.communication_hidden_ns};
    for (size_t i = 0; i < 9; ++i) *parts[i] = U64(c[i], ow + ".categories");
    if (k.communication_hidden_ns > k.communication_total_ns) Fail(ow + ".categories", "more communication hidden than run");
    SetShares(&k);
    const Json& steps = Array(Field(overlap, "steps", ow), ow + ".steps");
    for (size_t i = 0; i < steps.size(); ++i) {
      const std::string sw = ow + ".steps[" + std::to_string(i) + "]";
      const Json& s = Array(steps[i], sw, 3);
      StepCommunication st{.step = U64(s[0], sw + ".step"), .communication_ns = U64(s[1], sw + ".communication_ns"),
                           .hidden_ns = U64(s[2], sw + ".hidden_ns")};
      if (st.hidden_ns > st.communication_ns) Fail(sw, "more communication hidden than run");
      SetShares(&st);
      o.steps.push_back(st);
    }
    g.overlap = std::move(o);
  }
  return g;
}

}  // namespace trainprof::collector
