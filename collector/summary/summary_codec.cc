#include "collector/summary/summary_codec.h"

#include <cstring>
#include <map>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "collector/analysis/thread_phases.h"
#include "collector/summary/summary_codec_gpu.h"
#include "collector/summary/summary_fields.h"

namespace trainprof::collector {

using Json = nlohmann::json;

namespace {

// ---- writing ----

Json OptionalInt(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); }


Json InfoJson(const ProcessInfo& p) {
  Json threads = Json::array();
  for (const ThreadRow& t : p.threads) threads.push_back(Json::array({t.tid, t.name, t.events}));
  const NvtxMisuse& m = p.nvtx_misuse;
  const GpuTracing& g = p.gpu;
  return Json{
      {"pid", p.pid}, {"ppid", p.ppid}, {"host", p.host}, {"rank", OptionalInt(p.rank)},
      {"local_rank", OptionalInt(p.local_rank)}, {"world_size", OptionalInt(p.world_size)}, {"role", p.role},
      {"command", p.command}, {"executable", p.executable}, {"files", p.files}, {"recorded", p.recorded},
      {"unrecorded_exec", p.unrecorded_exec}, {"start_realtime_ns", p.start_realtime_ns}, {"start_ns", p.start_ns},
      {"start_known", p.start_known}, {"end_ns", p.end_ns}, {"wall_ns", p.wall_ns},
      {"capture_limited", p.capture_limited}, {"python_shim_off", p.python_shim_off}, {"exit_kind", p.exit_kind},
      {"exit_code", OptionalInt(p.exit_code)}, {"exit_text", p.exit_text}, {"exit_source", p.exit_source},
      {"kineto", p.kineto}, {"events", p.events}, {"unbalanced", p.unbalanced}, {"dropped", p.dropped},
      {"damaged", p.damaged}, {"truncated", p.truncated},
      {"nvtx_misuse", Json::array({m.null_names, m.names_cut, m.bad_attributes, m.other, m.domains_over_limit,
                                   m.undefined_names, m.undefined_domains})},
      {"threads", std::move(threads)},
      {"gpu", Json{{"state", g.state}, {"flushed", g.flushed},
                   {"cupti_result", g.cupti_result ? Json(*g.cupti_result) : Json(nullptr)},
                   {"cupti_version", g.cupti_version}, {"driver_version", g.driver_version}, {"message", g.message},
                   {"records_dropped", g.records_dropped}, {"invalid_timestamps", g.invalid_timestamps},
                   {"calls", g.calls}, {"unfinished_calls", g.unfinished_calls}, {"lost_exits", g.lost_exits},
                   {"unfinished_names", g.unfinished_names}, {"unmatched_exits", g.unmatched_exits},
                   {"api_errors", g.api_errors}, {"overhead_ns", g.overhead_ns},
                   {"capture_pauses", g.capture_pauses}, {"any", g.any}}},
  };
}

Json NvtxJson(const NvtxSummary& n, const StringPool& strings) {
  Json ranges = Json::array();
  for (const RangeSamples& r : n.ranges) {
    ranges.push_back(Json::array({std::string(strings.Get(r.key.domain)), std::string(strings.Get(r.key.name)),
                                  static_cast<int>(r.key.style), r.key.orphan, r.names, r.unbalanced, r.wall_ns,
                                  DurationsJson(r.durations)}));
  }
  Json marks = Json::array();
  for (const MarkCount& m : n.marks) {
    marks.push_back(Json::array({std::string(strings.Get(m.domain)), std::string(strings.Get(m.name)), m.count}));
  }
  return Json{{"ranges", std::move(ranges)}, {"marks", std::move(marks)}, {"unbalanced", n.unbalanced}};
}

Json DimsJson(const std::map<LaunchDim, uint64_t>& dims) {
  Json out = Json::array();
  for (const auto& [d, n] : dims) out.push_back(Json::array({d[0], d[1], d[2], n}));
  return out;
}

Json DigestJson(const CudaDigest& d, const StringPool& strings) {
  Json api = Json::array();
  for (const CudaApiSamples& r : d.api()) {
    api.push_back(Json::array({std::string(strings.Get(r.name)), static_cast<uint32_t>(r.api), DurationsJson(r.time),
                               r.errors, r.unfinished, r.exit_lost, r.first_unfinished_ns}));
  }
  Json kernels = Json::array();
  for (const KernelSamples& r : d.kernels()) {
    kernels.push_back(Json::array({std::string(strings.Get(r.name)), DurationsJson(r.time), DimsJson(r.grids),
                                   DimsJson(r.blocks)}));
  }
  Json memory = Json::array();
  for (const MemoryOpSamples& r : d.memory()) {
    memory.push_back(Json::array({r.memset, static_cast<uint32_t>(r.kind), DurationsJson(r.time), DurationsJson(r.size),
                                  r.pageable_count, r.pageable_bytes}));
  }
  return Json{{"api", std::move(api)}, {"kernels", std::move(kernels)}, {"memory", std::move(memory)},
              {"calls", d.calls()}, {"overhead_ns", d.overhead_ns()}};
}

Json HostOpsJson(const std::vector<HostOpStat>& stats, const StringPool& strings) {
  Json out = Json::array();
  for (const HostOpStat& s : stats) out.push_back(Json::array({std::string(strings.Get(s.name)), s.calls, s.self_ns, s.total_ns}));
  return out;
}

Json OptStrJson(const std::optional<std::string>& s) { return s ? Json(*s) : Json(nullptr); }

Json FrameJson(const SymbolFrame& f) {
  return Json::array({f.function, OptStrJson(f.file), f.line ? Json(*f.line) : Json(nullptr), OptStrJson(f.module), f.python});
}

Json FramesJson(const std::vector<SymbolFrame>& frames) {
  Json out = Json::array();
  for (const SymbolFrame& f : frames) out.push_back(FrameJson(f));
  return out;
}

Json ScopeJson(const FunctionScope& s) {
  Json functions = Json::array();
  for (const FunctionCount& c : s.functions) {
    Json lines = Json::array();
    for (const auto& [line, n] : c.lines) lines.push_back(Json::array({line, n}));
    functions.push_back(Json::array({c.function, c.self, c.total, std::move(lines)}));
  }
  return Json{{"samples", s.samples}, {"functions", std::move(functions)}};
}

Json FunctionsJson(const FunctionCounts& c) {
  Json phases = Json::object();
  for (const auto& [phase, scope] : c.phases) phases[phase] = ScopeJson(scope);
  return Json{{"functions", FramesJson(c.functions)}, {"process", ScopeJson(c.process)}, {"phases", std::move(phases)},
              {"samples", c.samples}, {"python_missed_samples", c.python_missed_samples}};
}

Json CallSitesJson(const std::vector<CallSiteGroup>& groups) {
  Json out = Json::array();
  for (const CallSiteGroup& g : groups) {
    Json callers = Json::array();
    for (const CallerStack& c : g.callers) callers.push_back(Json::array({FramesJson(c.frames), c.calls, c.total_ns}));
    out.push_back(Json::array({static_cast<int>(g.kind), g.name, g.known, g.known ? FrameJson(g.site) : Json(nullptr),
                               g.calls, g.total_ns, g.best, FramesJson(g.frames), std::move(callers), g.callers_cut}));
  }
  return out;
}

// Only what the other sections do not hold: the rest of the facts (identity, lifetime, capture,
// shim, CUDA) is the info's and the capture's, made again on reading (ReadFacts).
Json FactsJson(const ProcessFacts& f) {
  return Json{{"ddp_backend", OptStrJson(f.ddp_backend)}, {"recorded_from_delay", f.recorded_from_delay},
              {"spawned", f.spawned}, {"python", f.python}};
}

Json PhasesJson(const ProcessPhases& phases, const StringPool& strings) {
  Json threads = Json::array();
  for (const PhaseThread& t : phases.threads) {
    Json ranges = Json::array();
    for (const PhaseRange& r : t.ranges) {
      ranges.push_back(Json::array({r.begin_ns, r.end_ns, static_cast<uint32_t>(r.phase), std::string(strings.Get(r.name)),
                                    r.eval_tag}));
    }
    Json marks = Json::array();
    for (const LoaderMark& m : t.loader_marks) {
      marks.push_back(Json::array({m.time_ns, std::string(strings.Get(m.name)), static_cast<uint32_t>(m.phase)}));
    }
    threads.push_back(Json{{"image", t.image}, {"thread", t.thread}, {"tid", t.tid}, {"ranges", std::move(ranges)},
                           {"data_end_marks", t.data_end_marks}, {"loader_marks", std::move(marks)}});
  }
  return threads;
}

// ---- reading: each field checked, an error naming it ----



ProcessInfo ReadInfo(const Json& j) {
  const std::string w = "info";
  auto f = [&](const char* key) -> const Json& { return Field(j, key, w); };
  auto at = [&](const char* key) { return w + "." + key; };
  ProcessInfo p;
  p.pid = I32(f("pid"), at("pid"));
  p.ppid = I32(f("ppid"), at("ppid"));
  p.host = Str(f("host"), at("host"));
  p.rank = OptI64(f("rank"), at("rank"));
  p.local_rank = OptI64(f("local_rank"), at("local_rank"));
  if ((p.rank && *p.rank < 0) || (p.local_rank && *p.local_rank < 0)) Fail("info.rank", "a negative rank");
  p.world_size = OptI64(f("world_size"), at("world_size"));
  p.role = Str(f("role"), at("role"));
  p.command = Str(f("command"), at("command"));
  p.executable = Str(f("executable"), at("executable"));
  p.files = Strings(f("files"), at("files"));
  p.recorded = Str(f("recorded"), at("recorded"));
  p.unrecorded_exec = Str(f("unrecorded_exec"), at("unrecorded_exec"));
  p.start_realtime_ns = U64(f("start_realtime_ns"), at("start_realtime_ns"));
  p.start_ns = U64(f("start_ns"), at("start_ns"));
  p.start_known = Bool(f("start_known"), at("start_known"));
  p.end_ns = U64(f("end_ns"), at("end_ns"));
  p.wall_ns = U64(f("wall_ns"), at("wall_ns"));
  p.capture_limited = Bool(f("capture_limited"), at("capture_limited"));
  p.python_shim_off = Str(f("python_shim_off"), at("python_shim_off"));
  p.exit_kind = Str(f("exit_kind"), at("exit_kind"));
  p.exit_code = OptI64(f("exit_code"), at("exit_code"));
  p.exit_text = Str(f("exit_text"), at("exit_text"));
  p.exit_source = Str(f("exit_source"), at("exit_source"));
  p.kineto = Bool(f("kineto"), at("kineto"));
  p.events = U64(f("events"), at("events"));
  p.unbalanced = U64(f("unbalanced"), at("unbalanced"));
  p.dropped = U64(f("dropped"), at("dropped"));
  p.damaged = Bool(f("damaged"), at("damaged"));
  p.truncated = Bool(f("truncated"), at("truncated"));
  const Json& m = Array(f("nvtx_misuse"), at("nvtx_misuse"), 7);
  const std::string mw = at("nvtx_misuse");
  p.nvtx_misuse = {U64(m[0], mw), U64(m[1], mw), U64(m[2], mw), U64(m[3], mw),
                   U64(m[4], mw), U64(m[5], mw), U64(m[6], mw)};
  const Json& threads = Array(f("threads"), at("threads"));
  for (size_t i = 0; i < threads.size(); ++i) {
    const std::string tw = at("threads") + "[" + std::to_string(i) + "]";
    const Json& t = Array(threads[i], tw, 3);
    p.threads.push_back({U32(t[0], tw + ".tid"), Str(t[1], tw + ".name"), U64(t[2], tw + ".events")});
  }
  const Json& g = f("gpu");
  const std::string gw = at("gpu");
  auto gf = [&](const char* key) -> const Json& { return Field(g, key, gw); };
  auto gat = [&](const char* key) { return gw + "." + key; };
  GpuTracing& t = p.gpu;
  t.state = Str(gf("state"), gat("state"));
  t.flushed = Bool(gf("flushed"), gat("flushed"));
  if (!gf("cupti_result").is_null()) t.cupti_result = U64(gf("cupti_result"), gat("cupti_result"));
  t.cupti_version = U64(gf("cupti_version"), gat("cupti_version"));
  t.driver_version = U64(gf("driver_version"), gat("driver_version"));
  t.message = Str(gf("message"), gat("message"));
  t.records_dropped = U64(gf("records_dropped"), gat("records_dropped"));
  t.invalid_timestamps = U64(gf("invalid_timestamps"), gat("invalid_timestamps"));
  t.calls = U64(gf("calls"), gat("calls"));
  t.unfinished_calls = U64(gf("unfinished_calls"), gat("unfinished_calls"));
  t.lost_exits = U64(gf("lost_exits"), gat("lost_exits"));
  t.unfinished_names = Strings(gf("unfinished_names"), gat("unfinished_names"));
  t.unmatched_exits = U64(gf("unmatched_exits"), gat("unmatched_exits"));
  t.api_errors = U64(gf("api_errors"), gat("api_errors"));
  t.overhead_ns = U64(gf("overhead_ns"), gat("overhead_ns"));
  t.capture_pauses = U64(gf("capture_pauses"), gat("capture_pauses"));
  t.any = Bool(gf("any"), gat("any"));
  return p;
}

std::optional<Loss> LossByKey(std::string_view key) {
  for (size_t i = 0; i < kLossKinds; ++i) {
    if (kLossCatalogue[i].key == key) return static_cast<Loss>(i);
  }
  return std::nullopt;
}

std::map<LaunchDim, uint64_t> ReadDims(const Json& v, const std::string& where) {
  std::map<LaunchDim, uint64_t> out;
  for (const Json& d : Array(v, where)) {
    Array(d, where, 4);
    out[{U32(d[0], where), U32(d[1], where), U32(d[2], where)}] += U64(d[3], where);
  }
  return out;
}

CudaDigest ReadDigest(const Json& j, const std::string& w, StringPool* strings) {
  std::vector<CudaApiSamples> api;
  const Json& api_rows = Array(Field(j, "api", w), w + ".api");
  for (size_t i = 0; i < api_rows.size(); ++i) {
    const std::string rw = w + ".api[" + std::to_string(i) + "]";
    const Json& r = Array(api_rows[i], rw, 7);
    CudaApiSamples s;
    s.name = strings->Intern(Str(r[0], rw + ".name"));
    s.api = static_cast<format::CudaApi>(U32(r[1], rw + ".api"));
    s.time = ReadDurations(r[2], rw + ".time");
    s.errors = U64(r[3], rw + ".errors");
    s.unfinished = U64(r[4], rw + ".unfinished");
    s.exit_lost = U64(r[5], rw + ".exit_lost");
    s.first_unfinished_ns = U64(r[6], rw + ".first_unfinished_ns");
    api.push_back(std::move(s));
  }
  std::vector<KernelSamples> kernels;
  const Json& kernel_rows = Array(Field(j, "kernels", w), w + ".kernels");
  for (size_t i = 0; i < kernel_rows.size(); ++i) {
    const std::string rw = w + ".kernels[" + std::to_string(i) + "]";
    const Json& r = Array(kernel_rows[i], rw, 4);
    KernelSamples s;
    s.name = strings->Intern(Str(r[0], rw + ".name"));
    s.time = ReadDurations(r[1], rw + ".time");
    s.grids = ReadDims(r[2], rw + ".grids");
    s.blocks = ReadDims(r[3], rw + ".blocks");
    kernels.push_back(std::move(s));
  }
  std::vector<MemoryOpSamples> memory;
  const Json& memory_rows = Array(Field(j, "memory", w), w + ".memory");
  for (size_t i = 0; i < memory_rows.size(); ++i) {
    const std::string rw = w + ".memory[" + std::to_string(i) + "]";
    const Json& r = Array(memory_rows[i], rw, 6);
    MemoryOpSamples s;
    s.memset = Bool(r[0], rw + ".memset");
    s.kind = static_cast<format::MemcpyKind>(U32(r[1], rw + ".kind"));
    s.time = ReadDurations(r[2], rw + ".time");
    s.size = ReadDurations(r[3], rw + ".size");
    s.pageable_count = U64(r[4], rw + ".pageable_count");
    s.pageable_bytes = U64(r[5], rw + ".pageable_bytes");
    memory.push_back(std::move(s));
  }
  return CudaDigest::FromRows(std::move(api), std::move(kernels), std::move(memory),
                              U64(Field(j, "calls", w), w + ".calls"), U64(Field(j, "overhead_ns", w), w + ".overhead_ns"));
}

std::vector<HostOpStat> ReadHostOps(const Json& v, const std::string& w, StringPool* strings) {
  std::vector<HostOpStat> out;
  for (size_t i = 0; i < Array(v, w).size(); ++i) {
    const std::string rw = w + "[" + std::to_string(i) + "]";
    const Json& r = Array(v[i], rw, 4);
    HostOpStat s{strings->Intern(Str(r[0], rw + ".name")), U64(r[1], rw + ".calls"), U64(r[2], rw + ".self_ns"),
                 U64(r[3], rw + ".total_ns")};
    if (s.self_ns > s.total_ns) Fail(rw, "self time above total time");
    out.push_back(s);
  }
  return out;
}


SymbolFrame ReadFrame(const Json& v, const std::string& w) {
  Array(v, w, 5);
  SymbolFrame f;
  f.function = Str(v[0], w + ".function");
  f.file = OptStr(v[1], w + ".file");
  if (!v[2].is_null()) f.line = U32(v[2], w + ".line");
  f.module = OptStr(v[3], w + ".module");
  f.python = Bool(v[4], w + ".python");
  return f;
}

std::vector<SymbolFrame> ReadFrames(const Json& v, const std::string& w) {
  std::vector<SymbolFrame> out;
  for (size_t i = 0; i < Array(v, w).size(); ++i) out.push_back(ReadFrame(v[i], w + "[" + std::to_string(i) + "]"));
  return out;
}

FunctionScope ReadScope(const Json& v, const std::string& w, size_t functions) {
  FunctionScope s;
  s.samples = U64(Field(v, "samples", w), w + ".samples");
  const Json& rows = Array(Field(v, "functions", w), w + ".functions");
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string rw = w + ".functions[" + std::to_string(i) + "]";
    const Json& r = Array(rows[i], rw, 4);
    FunctionCount c{U32(r[0], rw + ".function"), U64(r[1], rw + ".self"), U64(r[2], rw + ".total"), {}};
    if (c.function >= functions) Fail(rw + ".function", "no such function");
    if (c.self > c.total || c.total > s.samples) Fail(rw, "more samples than its scope has");
    for (const Json& l : Array(r[3], rw + ".lines")) {
      Array(l, rw + ".lines", 2);
      c.lines[U32(l[0], rw + ".lines")] += U64(l[1], rw + ".lines");
    }
    s.functions.push_back(std::move(c));
  }
  return s;
}

FunctionCounts ReadFunctions(const Json& j) {
  const std::string w = "functions";
  FunctionCounts c;
  c.functions = ReadFrames(Field(j, "functions", w), w + ".functions");
  c.process = ReadScope(Field(j, "process", w), w + ".process", c.functions.size());
  const Json& phases = Field(j, "phases", w);
  if (!phases.is_object()) Fail(w + ".phases", "expected a map");
  for (const auto& [phase, scope] : phases.items()) {
    const std::string pw = w + ".phases." + phase;
    if (phase != "other" && (phase.empty() || PhaseLabelRank(phase) == PhaseLabelRank(""))) Fail(pw, "not a phase label");
    c.phases[phase] = ReadScope(scope, pw, c.functions.size());
    if (c.phases[phase].samples > U64(Field(j, "samples", w), w + ".samples")) Fail(pw, "more samples than the process has");
  }
  c.samples = U64(Field(j, "samples", w), w + ".samples");
  c.python_missed_samples = U64(Field(j, "python_missed_samples", w), w + ".python_missed_samples");
  if (c.process.samples != c.samples || c.python_missed_samples > c.samples) Fail(w, "sample counts that do not agree");
  return c;
}

std::vector<CallSiteGroup> ReadCallSites(const Json& v) {
  std::vector<CallSiteGroup> out;
  for (size_t i = 0; i < Array(v, "callsites").size(); ++i) {
    const std::string w = "callsites[" + std::to_string(i) + "]";
    const Json& r = Array(v[i], w, 10);
    CallSiteGroup g;
    const uint64_t kind = U64(r[0], w + ".kind");
    if (kind > static_cast<uint64_t>(StackedKind::kCuda)) Fail(w + ".kind", "not a kind of stacked event");
    g.kind = static_cast<StackedKind>(kind);
    g.name = Str(r[1], w + ".name");
    g.known = Bool(r[2], w + ".known");
    if (g.known) g.site = ReadFrame(r[3], w + ".site");
    g.calls = U64(r[4], w + ".calls");
    g.total_ns = U64(r[5], w + ".total_ns");
    g.best = U64(r[6], w + ".best");
    g.frames = ReadFrames(r[7], w + ".frames");
    for (size_t k = 0; k < Array(r[8], w + ".callers").size(); ++k) {
      const std::string wc = w + ".callers[" + std::to_string(k) + "]";
      const Json& c = Array(r[8][k], wc, 3);
      g.callers.push_back({ReadFrames(c[0], wc + ".frames"), U64(c[1], wc + ".calls"), U64(c[2], wc + ".total_ns")});
    }
    if (g.callers.size() > kCallerStacks) Fail(w + ".callers", "more than " + std::to_string(kCallerStacks));
    g.callers_cut = Bool(r[9], w + ".callers_cut");
    out.push_back(std::move(g));
  }
  return out;
}

// The facts of a summary: its own four fields, the rest from the info and the capture (as
// FactsOf makes them from the same process).
ProcessFacts ReadFacts(const Json& j, const ProcessInfo& info, const std::optional<CaptureSummary>& capture) {
  const std::string w = "facts";
  auto f = [&](const char* key) -> const Json& { return Field(j, key, w); };
  auto at = [&](const char* key) { return w + "." + key; };
  ProcessFacts p;
  p.pid = info.pid;
  p.host = info.host;
  p.rank = info.rank;
  p.role = info.role;
  p.start_ns = info.start_ns;
  p.end_ns = info.end_ns;
  p.start_realtime_ns = info.start_realtime_ns;
  if (capture) p.captured = capture->intervals;
  p.kineto = info.kineto;
  p.python_shim_off = info.python_shim_off;
  p.cuda = info.gpu.any;
  p.ddp_backend = OptStr(f("ddp_backend"), at("ddp_backend"));
  p.recorded_from_delay = Bool(f("recorded_from_delay"), at("recorded_from_delay"));
  p.spawned = Bool(f("spawned"), at("spawned"));
  p.python = Bool(f("python"), at("python"));
  return p;
}

Phase ReadPhase(const Json& v, const std::string& w) {
  const uint32_t phase = U32(v, w);
  if (phase == 0 || phase >= kPhaseSlots) Fail(w, "not a training phase");
  return static_cast<Phase>(phase);
}

ProcessPhases ReadPhases(const Json& v, StringPool* strings) {
  ProcessPhases out;
  for (size_t i = 0; i < Array(v, "phases").size(); ++i) {
    const std::string w = "phases[" + std::to_string(i) + "]";
    const Json& j = v[i];
    PhaseThread t;
    t.image = U32(Field(j, "image", w), w + ".image");
    t.thread = U32(Field(j, "thread", w), w + ".thread");
    t.tid = U32(Field(j, "tid", w), w + ".tid");
    const Json& ranges = Array(Field(j, "ranges", w), w + ".ranges");
    for (size_t k = 0; k < ranges.size(); ++k) {
      const std::string rw = w + ".ranges[" + std::to_string(k) + "]";
      const Json& r = Array(ranges[k], rw, 5);
      PhaseRange range{U64(r[0], rw + ".begin_ns"), U64(r[1], rw + ".end_ns"), ReadPhase(r[2], rw + ".phase"),
                       strings->Intern(Str(r[3], rw + ".name")), Bool(r[4], rw + ".eval_tag")};
      if (range.end_ns < range.begin_ns) Fail(rw, "a range that ends before it begins");
      t.ranges.push_back(range);
    }
    for (const Json& m : Array(Field(j, "data_end_marks", w), w + ".data_end_marks")) {
      t.data_end_marks.push_back(U64(m, w + ".data_end_marks"));
    }
    const Json& marks = Array(Field(j, "loader_marks", w), w + ".loader_marks");
    for (size_t k = 0; k < marks.size(); ++k) {
      const std::string mw = w + ".loader_marks[" + std::to_string(k) + "]";
      const Json& m = Array(marks[k], mw, 3);
      t.loader_marks.push_back({U64(m[0], mw + ".time_ns"), strings->Intern(Str(m[1], mw + ".name")),
                                ReadPhase(m[2], mw + ".phase")});
    }
    FinishPhaseThread(&t);
    out.threads.push_back(std::move(t));
  }
  return out;
}

NvtxSummary ReadNvtx(const Json& j, StringPool* strings) {
  NvtxSummary n;
  n.unbalanced = U64(Field(j, "unbalanced", "nvtx"), "nvtx.unbalanced");
  const Json& ranges = Array(Field(j, "ranges", "nvtx"), "nvtx.ranges");
  for (size_t i = 0; i < ranges.size(); ++i) {
    const std::string w = "nvtx.ranges[" + std::to_string(i) + "]";
    const Json& r = Array(ranges[i], w, 8);
    RangeSamples s;
    s.key.domain = strings->Intern(Str(r[0], w + ".domain"));
    s.key.name = strings->Intern(Str(r[1], w + ".name"));
    const uint64_t style = U64(r[2], w + ".style");
    if (style > static_cast<uint64_t>(RangeStyle::kStartEnd)) Fail(w + ".style", "not a range style");
    s.key.style = static_cast<RangeStyle>(style);
    s.key.orphan = Bool(r[3], w + ".orphan");
    s.names = U32(r[4], w + ".names");
    s.unbalanced = U64(r[5], w + ".unbalanced");
    s.wall_ns = U64(r[6], w + ".wall_ns");
    s.durations = ReadDurations(r[7], w + ".durations");
    if (s.names == 0) Fail(w + ".names", "a row of no name");
    for (const RangeSamples& other : n.ranges) {
      if (other.key == s.key) Fail(w, "a second row of the same domain, name, style and orphan");
    }
    n.ranges.push_back(std::move(s));
  }
  const Json& marks = Array(Field(j, "marks", "nvtx"), "nvtx.marks");
  for (size_t i = 0; i < marks.size(); ++i) {
    const std::string w = "nvtx.marks[" + std::to_string(i) + "]";
    const Json& m = Array(marks[i], w, 3);
    n.marks.push_back({strings->Intern(Str(m[0], w + ".domain")), strings->Intern(Str(m[1], w + ".name")),
                       U64(m[2], w + ".count")});
  }
  return n;
}


// A clock reading no trace holds (read/trace_decoder.h kMaxClockNs: a header's is refused past it).
constexpr uint64_t kMaxSummaryClockNs = uint64_t{1} << 62;

Json KeyJson(const ProcessKey& k) { return Json::array({k.host, k.boot_id, k.pid_namespace, k.pid, k.start_ns}); }

Json PlaceJson(const ProcessPlace& p, const StringPool& strings) {
  Json instants = Json::array();
  for (const SharedInstant& i : p.instants) {
    instants.push_back(Json::array({i.end_ns, static_cast<uint8_t>(i.kind), std::string(strings.Get(i.name))}));
  }
  return Json{{"key", KeyJson(p.key)},
              {"parent", p.parent ? KeyJson(*p.parent) : Json(nullptr)},
              {"file_start_realtime_ns", p.file_start_realtime_ns},
              {"instants", std::move(instants)},
              {"run_ids", p.run_ids},
              {"recorded_role", p.recorded_role},
              {"rank_strength", p.rank_strength},
              {"forked_child", p.forked_child}};
}

ProcessKey ReadKey(const Json& v, const std::string& w) {
  const Json& k = Array(v, w, 5);
  return {Str(k[0], w + ".host"), Str(k[1], w + ".boot_id"), U64(k[2], w + ".pid_namespace"), I32(k[3], w + ".pid"),
          U64(k[4], w + ".start_ns")};
}

ProcessPlace ReadPlace(const Json& j, const ProcessInfo& info, StringPool* strings) {
  ProcessPlace p;
  p.key = ReadKey(Field(j, "key", "place"), "place.key");
  if (p.key.host != info.host || p.key.pid != info.pid) Fail("place.key", "not the process of `info`");
  const Json& parent = Field(j, "parent", "place");
  if (!parent.is_null()) p.parent = ReadKey(parent, "place.parent");
  p.file_start_realtime_ns = U64(Field(j, "file_start_realtime_ns", "place"), "place.file_start_realtime_ns");
  if (p.file_start_realtime_ns >= kMaxSummaryClockNs) Fail("place.file_start_realtime_ns", "past any clock (2^62 ns)");
  const Json& instants = Array(Field(j, "instants", "place"), "place.instants");
  for (size_t i = 0; i < instants.size(); ++i) {
    const std::string w = "place.instants[" + std::to_string(i) + "]";
    const Json& v = Array(instants[i], w, 3);
    const uint32_t kind = U32(v[1], w + ".kind");
    if (kind >= kSharedInstantKinds) Fail(w + ".kind", "not a kind of shared instant");
    const std::string name = Str(v[2], w + ".name");
    SharedInstant s{U64(v[0], w + ".end_ns"), static_cast<SharedInstant::Kind>(kind), name.empty() ? 0 : strings->Intern(name)};
    if (!p.instants.empty() && s.end_ns < p.instants.back().end_ns) Fail(w, "out of time order");
    p.instants.push_back(s);
  }
  if (!p.instants.empty() && !info.rank) Fail("place.instants", "shared instants of a process without a rank");
  p.run_ids = Strings(Field(j, "run_ids", "place"), "place.run_ids");
  if (p.run_ids.size() != info.files.size()) Fail("place.run_ids", "not one per file of `info`");
  p.recorded_role = Str(Field(j, "recorded_role", "place"), "place.recorded_role");
  p.rank_strength = static_cast<int>(U32(Field(j, "rank_strength", "place"), "place.rank_strength"));
  if (p.rank_strength > 2 || (p.rank_strength > 0 && !info.rank)) {
    Fail("place.rank_strength", "not the strength of a rank variable it has");
  }
  p.forked_child = Bool(Field(j, "forked_child", "place"), "place.forked_child");
  return p;
}

}  // namespace

Json SummaryJson(const ProcessSummary& s, const StringPool& strings) {
  Json losses = Json::array();
  for (const LossNote& n : s.losses) {
    losses.push_back(Json::array({std::string(InfoOf(n.kind).key), n.n, n.detail, n.warn}));
  }
  Json j{{"info", InfoJson(s.info)},
         {"place", PlaceJson(s.place, strings)},
         {"recorded_ns", s.recorded_ns},
         {"losses", std::move(losses)},
         {"capture", nullptr},
         {"nvtx", NvtxJson(s.nvtx, strings)},
         {"cuda", Json::array()},
         {"host_ops", Json{{"operators", HostOpsJson(s.host_ops.operators, strings)},
                           {"python_functions", HostOpsJson(s.host_ops.python_functions, strings)}}},
         {"functions", FunctionsJson(s.functions)},
         {"callsites", CallSitesJson(s.callsites)},
         {"symbol_problems", Json::array()}};
  for (const Symbolizer::Problem& p : s.symbol_problems) j["symbol_problems"].push_back(Json::array({p.key, p.path, p.line}));
  j["facts"] = FactsJson(s.facts);
  j["phases"] = PhasesJson(s.phases, strings);
  j["devices"] = DevicesJson(s.devices);
  j["gpu_ops"] = GpuOpsJson(s.gpu_ops);
  j["steps_gpu"] = StepsGpuJson(s.steps_gpu);
  j["operator_phases"] = Json::array();
  for (const OperatorPhaseStat& o : s.operator_phases) {
    j["operator_phases"].push_back(Json::array({o.phase, std::string(strings.Get(o.name)), o.calls, o.self_ns, o.total_ns}));
  }
  for (const CudaDigest& d : s.cuda) j["cuda"].push_back(DigestJson(d, strings));
  if (s.capture) {
    Json intervals = Json::array();
    for (const CaptureInterval& i : s.capture->intervals) intervals.push_back(Json::array({i.start_ns, i.end_ns}));
    j["capture"] = Json{{"settings", s.capture->settings}, {"start_ns", s.capture->start_ns},
                        {"intervals", std::move(intervals)}};
  }
  return j;
}

ProcessSummary ReadSummary(const Json& j, StringPool* strings) {
  ProcessSummary s;
  s.info = ReadInfo(Field(j, "info", "summary"));
  s.place = ReadPlace(Field(j, "place", "summary"), s.info, strings);
  s.recorded_ns = U64(Field(j, "recorded_ns", "summary"), "recorded_ns");
  const Json& losses = Array(Field(j, "losses", "summary"), "losses");
  for (size_t i = 0; i < losses.size(); ++i) {
    const std::string w = "losses[" + std::to_string(i) + "]";
    const Json& l = Array(losses[i], w, 4);
    const std::string key = Str(l[0], w + ".kind");
    const std::optional<Loss> kind = LossByKey(key);
    if (!kind) Fail(w + ".kind", "unknown loss \"" + key + "\"");
    const LossInfo& info = InfoOf(*kind);
    // A process's own losses only: its capture note is the merge's (from `capture`), and the
    // unbalanced ranges are summed from the NVTX section.
    if (info.scope != LossScope::kProcess || *kind == Loss::capture_limited || *kind == Loss::unbalanced_ranges) {
      Fail(w + ".kind", "\"" + key + "\" is not a loss a process's summary holds");
    }
    LossNote note{*kind, U64(l[1], w + ".n"), Str(l[2], w + ".detail"), Bool(l[3], w + ".warn")};
    if (note.n == 0) Fail(w + ".n", "a loss of 0");
    if (note.warn != !info.warning.empty()) Fail(w + ".warn", "disagrees with the loss catalogue");
    s.losses.push_back(std::move(note));
  }
  const Json& capture = Field(j, "capture", "summary");
  if (!capture.is_null()) {
    CaptureSummary c;
    c.settings = Str(Field(capture, "settings", "capture"), "capture.settings");
    c.start_ns = U64(Field(capture, "start_ns", "capture"), "capture.start_ns");
    const Json& iv = Array(Field(capture, "intervals", "capture"), "capture.intervals");
    for (const Json& i : iv) {
      Array(i, "capture.intervals", 2);
      const uint64_t a = U64(i[0], "capture.intervals"), b = U64(i[1], "capture.intervals");
      if (b < a) Fail("capture.intervals", "an interval that ends before it starts");
      c.intervals.push_back({a, b});
    }
    s.capture = std::move(c);
  }
  s.nvtx = ReadNvtx(Field(j, "nvtx", "summary"), strings);
  const Json& cuda = Array(Field(j, "cuda", "summary"), "cuda");
  for (size_t i = 0; i < cuda.size(); ++i) s.cuda.push_back(ReadDigest(cuda[i], "cuda[" + std::to_string(i) + "]", strings));
  const Json& host_ops = Field(j, "host_ops", "summary");
  s.host_ops.operators = ReadHostOps(Field(host_ops, "operators", "host_ops"), "host_ops.operators", strings);
  s.host_ops.python_functions =
      ReadHostOps(Field(host_ops, "python_functions", "host_ops"), "host_ops.python_functions", strings);
  s.functions = ReadFunctions(Field(j, "functions", "summary"));
  s.callsites = ReadCallSites(Field(j, "callsites", "summary"));
  const Json& problems = Array(Field(j, "symbol_problems", "summary"), "symbol_problems");
  for (size_t i = 0; i < problems.size(); ++i) {
    const std::string w = "symbol_problems[" + std::to_string(i) + "]";
    const Json& p = Array(problems[i], w, 3);
    s.symbol_problems.push_back({Str(p[0], w + ".key"), Str(p[1], w + ".path"), Str(p[2], w + ".line")});
  }
  const Json& ops = Array(Field(j, "operator_phases", "summary"), "operator_phases");
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string w = "operator_phases[" + std::to_string(i) + "]";
    const Json& o = Array(ops[i], w, 5);
    OperatorPhaseStat st{Str(o[0], w + ".phase"), strings->Intern(Str(o[1], w + ".name")), U64(o[2], w + ".calls"),
                         U64(o[3], w + ".self_ns"), U64(o[4], w + ".total_ns")};
    if (!st.phase.empty() && PhaseLabelRank(st.phase) == PhaseLabelRank("")) Fail(w + ".phase", "not a phase label");
    if (st.self_ns > st.total_ns) Fail(w, "self time above total time");
    s.operator_phases.push_back(std::move(st));
  }
  s.facts = ReadFacts(Field(j, "facts", "summary"), s.info, s.capture);
  s.phases = ReadPhases(Field(j, "phases", "summary"), strings);
  s.devices = ReadDevices(Field(j, "devices", "summary"));
  s.gpu_ops = ReadGpuOps(Field(j, "gpu_ops", "summary"));
  s.steps_gpu = ReadStepsGpu(Field(j, "steps_gpu", "summary"));
  return s;
}

}  // namespace trainprof::collector
