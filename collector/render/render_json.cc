// JSON report: the schema is docs/report-schema.md. Integers are ns or bytes; mean_ns, std_ns,
// median_ns and percent are derived and may be fractional.
#include "collector/render/render.h"
#include "collector/render/render_json_cuda.h"
#include "collector/render/table_render.h"
#include "collector/report/report_tables.h"
#include "collector/render/render_gpu_overlap.h"
#include "collector/render/render_host_ops.h"

#include <algorithm>

namespace trainprof::collector {
namespace {

using Json = nlohmann::ordered_json;


// Pretty JSON exactly as nlohmann's dump(2) writes it, streamed: big arrays (range tables, the
// processes) one element at a time, so that the document never exists whole in memory.
class JsonWriter {
 public:
  explicit JsonWriter(OutputSink* out) : out_(out) {}
  // A value at nesting `depth`: its lines after the first indented by 2 * depth.
  void Value(const Json& v, int depth) {
    std::string text = v.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    if (depth == 0 || text.find('\n') == std::string::npos) {
      out_->Write(text);
      return;
    }
    const std::string pad(2 * static_cast<size_t>(depth), ' ');
    size_t from = 0;
    for (size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
      out_->Write(std::string_view(text).substr(from, nl + 1 - from));
      out_->Write(pad);
    }
    out_->Write(std::string_view(text).substr(from));
  }
  /// An object at nesting `depth` (0: the document); its members are at depth + 1.
  void BeginObject(int depth) {
    open_.push_back({true, depth});
    out_->Write("{");
  }
  void Key(std::string_view key) {
    Open& o = open_.back();
    out_->Write(o.first ? "\n" : ",\n");
    o.first = false;
    Pad(o.depth + 1);
    out_->Write(Json(std::string(key)).dump());
    out_->Write(": ");
  }
  void Member(std::string_view key, const Json& v) {
    Key(key);
    Value(v, open_.back().depth + 1);
  }
  /// Every member of `object`, in order.
  void Members(const Json& object) {
    for (const auto& [k, v] : object.items()) Member(k, v);
  }
  void EndObject() {
    const Open o = open_.back();
    open_.pop_back();
    if (!o.first) {
      out_->Write("\n");
      Pad(o.depth);
    }
    out_->Write("}");
  }
  /// An array member of n elements; element(i, depth) writes element i at nesting `depth`.
  template <typename F>
  void ArrayMember(std::string_view key, size_t n, F element) {
    Key(key);
    if (n == 0) {
      out_->Write("[]");
      return;
    }
    out_->Write("[");
    const int depth = open_.back().depth + 2;
    for (size_t i = 0; i < n; ++i) {
      out_->Write(i == 0 ? "\n" : ",\n");
      Pad(depth);
      element(i, depth);
    }
    out_->Write("\n");
    Pad(depth - 1);
    out_->Write("]");
  }
  void RangeArray(std::string_view key, const RangeRows& rows) {
    ArrayMember(key, rows.size(), [&](size_t i, int depth) { Value(RowJson(RangeTable(), RangeCells(rows[i])), depth); });
  }

 private:
  struct Open {
    bool first;
    int depth;
  };
  void Pad(int depth) {
    static const std::string spaces(256, ' ');
    size_t n = 2 * static_cast<size_t>(depth);
    while (n > 0) {
      const size_t k = std::min(n, spaces.size());
      out_->Write(std::string_view(spaces).substr(0, k));
      n -= k;
    }
  }
  OutputSink* out_;
  std::vector<Open> open_;
};

/// The "frames" of each "callsites" row as an array of {function, file, line, module}, innermost
/// first (the table's generic cell holds them as one string).
void AddCallSiteFrames(const Report& r, Json* doc) {
  auto it = doc->find("callsites");
  if (it == doc->end() || !it->is_array()) return;
  for (size_t i = 0; i < it->size() && i < r.callsites.size(); ++i) {
    Json frames = Json::array();
    for (const SymbolFrame& f : r.callsites[i].frames) {
      Json j = {{"function", f.function}, {"file", nullptr}, {"line", nullptr}, {"module", nullptr}};
      if (f.file) j["file"] = *f.file;
      if (f.line) j["line"] = *f.line;
      if (f.module) j["module"] = *f.module;
      frames.push_back(std::move(j));
    }
    (*it)[i]["frames"] = std::move(frames);
  }
}

Json MisuseJson(const NvtxMisuse& m) {
  return {{"null_names", m.null_names},
          {"names_cut", m.names_cut},
          {"bad_attributes", m.bad_attributes},
          {"other", m.other},
          {"domains_over_limit", m.domains_over_limit},
          {"undefined_names", m.undefined_names},
          {"undefined_domains", m.undefined_domains},
          {"total", m.total()}};
}

// The catalogue's counters (model/losses.def), summed over the trace, every key, zeros too.
Json StatsJson(const LossCounts& counts) {
  Json out = Json::object();
  for (size_t k = 0; k < kLossKinds; ++k) out[std::string(kLossCatalogue[k].key)] = counts[static_cast<Loss>(k)];
  return out;
}

Json StepStatsJson(const SampleStats& s) {
  return {{"count", s.count},   {"total_ns", s.total}, {"mean_ns", s.mean}, {"median_ns", s.median},
          {"p90_ns", s.p90}, {"std_ns", s.std},     {"min_ns", s.min},   {"max_ns", s.max}};
}

Json FetchJson(const FetchStats& f) {
  return {{"count", f.fetches},
          {"total_ns", f.fetch_ns},
          {"mean_ns", f.mean_ns()},
          {"getitem_ns", f.getitem_ns},
          {"collate_ns", f.collate_ns},
          {"other_ns", f.other_ns()},
          {"getitem_percent", f.getitem_percent()},
          {"collate_percent", f.collate_percent()},
          {"other_percent", f.other_percent()},
          {"getitem_calls", f.getitem_calls},
          {"getitem_mean_ns", f.getitem_mean_ns()},
          {"items_per_batch", f.items_per_batch()}};
}

Json LoadersJson(const InputPipeline& in) {
  Json loaders = Json::array();
  for (const LoaderStats& l : in.loaders) {
    const LoaderDescription& d = l.description;
    loaders.push_back({{"id", OrNull(d.id)},
                       {"dataset", d.dataset.empty() ? Json(nullptr) : Json(d.dataset)},
                       {"batch_size", OrNull(d.batch_size)},
                       {"num_workers", OrNull(d.num_workers)},
                       {"persistent_workers", OrNull(d.persistent_workers)},
                       {"pin_memory", OrNull(d.pin_memory)},
                       {"feeds_training", l.feeds_training},
                       {"waits", l.waits},
                       {"training_waits", l.training_waits},
                       {"wait_ns", l.wait_ns},
                       {"mean_wait_ns", l.mean_wait_ns()},
                       {"worker_processes", l.worker_processes},
                       {"concurrent_workers", l.concurrent_workers},
                       {"fetch", FetchJson(l.fetch)}});
  }
  return loaders;
}

Json InputJson(const InputPipeline& in) {
  Json workers = Json::array();
  for (const WorkerStats& w : in.workers) {
    workers.push_back({{"pid", w.pid},
                       {"start_ns", w.start_ns},
                       {"end_ns", w.end_ns},
                       {"fetches", w.fetch.fetches},
                       {"fetch_ns", w.fetch.fetch_ns},
                       {"startup_ns", w.startup_ns},
                       {"init_fn_calls", w.init_fn_calls},
                       {"init_fn_ns", w.init_fn_ns},
                       {"window_ns", w.window_ns},
                       {"busy_ns", w.busy_ns},
                       {"busy_percent", OrNull(w.busy_percent)},
                       {"lifetime_busy_percent", OrNull(w.lifetime_busy_percent)}});
  }
  return {{"loading", LoadingName(in.loading)},
          {"worker_processes", in.worker_processes},
          {"other_workers", in.other_workers},
          {"concurrent_workers", in.concurrent_workers},
          {"workers_recreated", in.workers_recreated()},
          {"busy_percent", OrNull(in.busy_percent)},
          {"window_ns", in.window_ns},
          {"busy_ns", in.busy_ns},
          {"fetch", FetchJson(in.fetch)},
          {"startup", {{"total_ns", in.startup_ns},
                       {"init_fn_calls", in.init_fn_calls},
                       {"init_fn_ns", in.init_fn_ns},
                       {"wait_ns", in.startup_wait_ns}}},
          {"workers", std::move(workers)},
          {"loaders", LoadersJson(in)}};
}

Json AdviceJson(const InputAdvice& a) {
  return {{"cause", a.cause == InputCause::kNone ? Json(nullptr) : Json(InputCauseName(a.cause))},
          {"batch_ns", a.batch_ns},
          {"compute_ns", a.compute_ns},
          {"batches_per_step", a.batches_per_step},
          {"delivery_ns", OrNull(a.delivery_ns)},
          {"workers_needed", OrNull(a.workers_needed)},
          {"startup_significant", a.startup_significant},
          {"startup_step_percent", a.startup_step_percent}};
}

Json LateStepsJson(const std::vector<LateStep>& list) {
  Json out = Json::array();
  for (const LateStep& l : list) out.push_back({{"train_step", l.train_step}, {"lateness_ns", l.lateness_ns}});
  return out;
}

Json SlowStepsJson(const SlowSteps& sl) {
  Json out = Json::array();
  for (const SlowStep& x : sl.listed) {
    out.push_back({{"step", x.step}, {"train_step", x.train_step}, {"duration_ns", x.duration_ns},
                   {"times_median", x.times_median}});
  }
  return out;
}

Json RanksJson(const RankSync& rs, const std::vector<std::string>& text) {
  Json ranks = Json::array();
  for (const RankRow& r : rs.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"pid", r.pid},
                     {"host", r.host},
                     {"steps", r.steps},
                     {"mean_step_ns", r.mean_step_ns},
                     {"mean_compute_ns", r.mean_compute_ns},
                     {"mean_data_wait_ns", r.mean_data_wait_ns},
                     {"arrival", r.arrival.empty() ? Json(nullptr) : Json(r.arrival)},
                     {"mean_lateness_ns", OrNull(r.mean_lateness_ns)},
                     {"median_lateness_ns", OrNull(r.median_lateness_ns)},
                     {"last_steps", r.last_steps},
                     {"last_share", OrNull(r.last_share)},
                     {"late_steps", r.late_steps},
                     {"late_step_list", LateStepsJson(r.late_step_list)},
                     {"wait_ns", OrNull(r.wait_ns)}});
  }
  Json straggler = nullptr;
  if (rs.straggler) {
    const RankRow& s = rs.ranks[rs.latest];
    straggler = {{"rank", s.rank},
                 {"pid", s.pid},
                 {"mean_lateness_ns", OrNull(s.mean_lateness_ns)},
                 {"median_lateness_ns", OrNull(s.median_lateness_ns)},
                 {"step_percent", rs.mean_step_ns > 0 ? *s.mean_lateness_ns * 100.0 / rs.mean_step_ns : 0.0},
                 {"last_steps", s.last_steps},
                 {"last_percent",
                  rs.matched_steps ? static_cast<double>(s.last_steps) * 100.0 / rs.matched_steps : 0.0}};
  }
  return {{"clock", rs.clock},
          {"matched_steps", rs.matched_steps},
          {"warmup_skipped", rs.warmup_skipped},
          {"mean_step_ns", rs.mean_step_ns},
          {"late_threshold_ns", rs.matched_steps ? Json(rs.late_threshold_ns) : Json(nullptr)},
          {"latest_rank", rs.latest >= 0 ? Json(rs.ranks[rs.latest].rank) : Json(nullptr)},
          {"straggler", std::move(straggler)},
          {"duplicate_ranks", rs.duplicate_ranks},
          {"unplaced_ranks", rs.unplaced_ranks},
          {"clock_uncertainty_ns", rs.clock_uncertainty_ns},
          {"clocks_too_uncertain", rs.clocks_too_uncertain},
          {"synchronised", rs.synchronised},
          {"drift", rs.drift},
          {"ranks", std::move(ranks)},
          {"text", text}};
}

Json GpuIdleJson(const GpuIdle& g) {
  Json idle = Json::object();
  for (size_t c = 0; c < kIdleCauses; ++c) {
    const auto cause = static_cast<IdleCause>(c);
    idle[IdleCauseName(cause)] = {{"ns", g.idle(cause)}, {"percent", g.idle_share(cause)}};
  }
  Json sync = nullptr;
  if (!g.sync_call.empty()) {
    sync = {{"call", g.sync_call},
            {"idle_ns", g.sync_call_idle_ns},
            {"calls", g.sync_calls},
            {"calls_per_step", g.sync_calls_per_step},
            {"after_dtoh_copy", g.sync_after_dtoh},
            {"copy_bytes", g.sync_after_dtoh ? Json(g.sync_copy_bytes) : Json(nullptr)}};
  }
  return {{"recorded", g.recorded},
          {"why_not", g.recorded ? Json(nullptr) : Json(g.why_not)},
          {"steps", g.steps},
          {"step_ns", g.step_ns},
          {"busy_ns", g.busy_ns},
          {"idle_ns", g.idle_ns},
          {"busy_percent", g.busy_percent},
          {"idle_percent", g.idle_percent},
          {"gpu_bound", g.gpu_bound},
          {"cause", g.recorded && g.idle_ns > 0 ? Json(IdleCauseName(g.cause)) : Json(nullptr)},
          {"idle", std::move(idle)},
          {"sync", std::move(sync)},
          {"launch",
           {{"kernels", g.kernels},
            {"kernels_per_step", g.kernels_per_step},
            {"kernel_median_ns", g.kernel_median_ns},
            {"launch_calls", g.launch_calls},
            {"launch_median_ns", g.launch_median_ns},
            {"medians_exact", g.medians_exact},
            {"launch_bound", g.launch_bound}}}};
}

Json CoverageJson(const Coverage& c) {
  Json uncovered = Json::array();
  for (const UncoveredPart& u : c.uncovered) uncovered.push_back({{"kind", u.kind}, {"ns", u.ns}, {"percent", u.percent}});
  return {{"wall_ns", c.wall_ns}, {"steps_ns", c.steps_ns}, {"percent", c.percent}, {"uncovered", std::move(uncovered)}};
}

Json BottleneckJson(const Bottleneck& b) {
  Json procs = Json::array();
  for (const TrainingProcess& t : b.processes) {
    Json parts = Json::object();
    for (size_t i = 0; i < kPartCount; ++i) {
      const PartShare& p = t.parts[i];
      parts[PartName(static_cast<Part>(i))] = {
          {"total_ns", p.total_ns}, {"mean_ns", p.mean_ns}, {"percent", p.percent}};
    }
    if (!t.collective.known()) parts[PartName(Part::kCollective)]["percent"] = nullptr;  // DDP: unknown
    const CollectiveInfo& c = t.collective;
    Json collective = {{"source", c.source},
                       {"ddp", c.ddp},
                       {"backend", OrNull(c.backend)},
                       {"nccl_kernels", c.nccl_kernels},
                       {"gpu_ns_per_step", OrNull(c.gpu_ns_per_step)},
                       {"gpu_percent", OrNull(c.gpu_percent)}};
    const bool has_steps = t.step.count > 0;
    procs.push_back({{"pid", t.pid},
                     {"host", t.host},
                     {"rank", OrNull(t.rank)},
                     {"role", t.role},
                     {"verdict", VerdictName(t.verdict)},
                     {"steps", t.steps},
                     {"steps_in_statistics", t.step.count},
                     {"warmup_skipped", t.warmup_skipped},
                     {"eval_steps", t.eval_steps},
                     {"evaluation", t.verdict == Verdict::kEvaluationOnly
                                        ? Json{{"mean_ns", t.eval_step.mean},
                                               {"median_ns", t.eval_step.median},
                                               {"data_wait_percent", t.eval_data_wait_percent}}
                                        : Json(nullptr)},
                     {"dropped_steps", t.dropped_steps},
                     {"data_waits", t.data_waits},
                     {"epoch_ends", t.epoch_ends},
                     {"micro_batches", t.steps == 0 ? Json(nullptr)
                                                    : Json{{"min", t.micro_batches_min}, {"max", t.micro_batches_max}}},
                     {"passes", t.passes},
                     {"damaged_files", t.damaged_files},
                     {"passes_in_optimizer_step", t.passes_in_optimizer},
                     {"steps_found_by", t.steps_found_by},
                     {"coverage", CoverageJson(t.coverage)},
                     {"step", StepStatsJson(t.step)},
                     {"parts", std::move(parts)},
                     {"compute_mean_ns", t.compute_mean_ns},
                     {"largest_phase", has_steps ? Json(PartName(t.largest)) : Json(nullptr)},
                     {"largest_phase_percent", has_steps ? Json(t.part(t.largest).percent) : Json(nullptr)},
                     {"input", t.input ? InputJson(*t.input) : Json(nullptr)},
                     {"advice", AdviceJson(t.advice)},
                     {"gpu", t.gpu ? GpuIdleJson(*t.gpu) : Json(nullptr)},
                     {"slow_steps", SlowStepsJson(t.slow)},
                     {"slow_step_count", t.slow.count},
                     {"steps_over_slow_threshold", t.slow.over_threshold},
                     {"collective", std::move(collective)},
                     {"waits_for_straggler",
                      t.waits_for_rank ? Json{{"rank", *t.waits_for_rank},
                                              {"wait_ns", t.straggler_wait_ns},
                                              {"step_percent", Percent(t.straggler_wait_ns, t.step.mean)}}
                                       : Json(nullptr)},
                     {"text", t.text}});
  }
  return {{"status", b.status},
          {"message", b.message},
          {"thresholds", {{"input_bound_percent", kInputBoundPercent},
                          {"partly_input_bound_percent", kPartlyInputBoundPercent},
                          {"workers_busy_percent", kWorkersBusyPercent},
                          {"warmup_min_steps", kWarmupMinSteps},
                          {"straggler_step_percent", kStragglerStepPercent},
                          {"straggler_min_ns", kStragglerMinNs},
                          {"straggler_last_share", kStragglerLastShare},
                          {"slow_step_times_median", kSlowStepTimesMedian},
                          {"slow_step_min_excess_ns", kSlowStepMinExcessNs},
                          {"slow_step_gap", kSlowStepGap},
                          {"startup_step_percent", kStartupStepPercent},
                          {"gpu_idle_percent", kGpuIdlePercent},
                          {"short_kernel_ns", kShortKernelNs},
                          {"launch_bound_idle_percent", kLaunchBoundIdlePercent}}},
          {"processes", std::move(procs)},
          {"ranks", b.ranks ? RanksJson(*b.ranks, b.rank_text) : Json(nullptr)},
          {"gpu", {{"recorded", b.gpu.recorded}}}};
}

}  // namespace

void RenderJson(const Report& r, OutputSink* out) {
  JsonWriter w(out);
  w.BeginObject(0);
  Json doc;
  doc["trainprof_version"] = r.trainprof_version;
  doc["format_version"] = r.format_version;
  doc["summary"] = {{"trace_files", r.files.size()},
                    {"usable_files", r.usable_files},
                    {"damaged_files", r.damaged_files},
                    {"processes", r.processes.size()},
                    {"hosts", r.hosts},
                    {"start_realtime_ns", r.start_realtime_ns},
                    {"span_ns", r.span_ns},
                    {"top", r.options.top},
                    {"full_names", r.options.full_names},
                    {"ranks", r.options.ranks.empty() ? Json(nullptr) : Json(r.options.ranks)},
                    {"cuda_recorded", r.has_cuda},
                    {"nvtx_misuse", MisuseJson(r.nvtx_misuse)}};

  Json files = Json::array();
  for (const FileStatus& f : r.files) {
    files.push_back({{"path", f.path},
                     {"format", f.format == ImageSource::kKineto ? "kineto" : "trainprof"},
                     {"pid", OrNull(f.pid)},
                     {"bytes", f.bytes},
                     {"bytes_read", f.bytes_read},
                     {"truncated", f.truncated},
                     {"usable", f.usable},
                     {"errors", f.errors}});
  }
  doc["files"] = std::move(files);
  w.Members(doc);

  w.ArrayMember("processes", r.processes.size(), [&](size_t index, int depth) {
    const ProcessRow& p = r.processes[index];
    Json threads = Json::array();
    for (const ThreadRow& t : p.threads) threads.push_back({{"tid", t.tid}, {"name", t.name}, {"events", t.events}});
    Json exit = {{"kind", p.exit_kind},
                 {"code", OrNull(p.exit_code)},
                 {"source", p.exit_source.empty() ? Json(nullptr) : Json(p.exit_source)}};
    Json proc = {{"pid", p.pid},
                     {"ppid", p.ppid},
                     {"parent_pid", p.parent >= 0 ? Json(r.processes[p.parent].pid) : Json(nullptr)},
                     {"host", p.host},
                     {"rank", OrNull(p.rank)},
                     {"local_rank", OrNull(p.local_rank)},
                     {"world_size", OrNull(p.world_size)},
                     {"role", p.role},
                     {"command", p.command},
                     {"executable", p.executable},
                     {"files", p.files},
                     {"recorded", p.recorded},
                     {"unrecorded_exec", p.unrecorded_exec.empty() ? Json(nullptr) : Json(p.unrecorded_exec)},
                     {"start_realtime_ns", p.start_realtime_ns},
                     {"start_ns", p.start_ns},
                     {"end_ns", p.end_ns},
                     {"start_known", p.start_known},
                     {"wall_ns", p.start_known ? Json(p.wall_ns) : Json(nullptr)},
                     {"capture_limited", p.capture_limited},
                     {"python_shim_off", p.python_shim_off.empty() ? Json(nullptr) : Json(p.python_shim_off)},
                     {"exit", std::move(exit)},
                     {"events", p.events},
                     {"unbalanced_ranges", p.unbalanced},
                     {"dropped_records", p.dropped},
                     {"truncated", p.truncated},
                     {"nvtx_misuse", MisuseJson(p.nvtx_misuse)},
                     {"threads", std::move(threads)}};
    Json after = {{"nvtx_ranges_omitted", p.nvtx_ranges_omitted}, {"gpu", GpuTracingJson(p.gpu)}};
    AddCudaTables(p.cuda, &after);
    AddHostOpsJson(p.host_ops, r.host_ops.any(), &after);
    w.BeginObject(depth);
    w.Members(proc);
    w.RangeArray("nvtx_ranges", p.nvtx_ranges);
    w.Members(after);
    w.EndObject();
  });
  w.RangeArray("nvtx_ranges", r.nvtx_ranges);
  doc = Json::object();
  doc["nvtx_ranges_omitted"] = r.nvtx_ranges_omitted;
  doc["nvtx_marks"] = TableJson(MarkTable(), RowsOf(r.nvtx_marks, MarkCells));
  doc["nvtx_marks_omitted"] = r.nvtx_marks_omitted;
  AddCudaTables(r.cuda, &doc);
  AddHostOpsJson(r.host_ops, true, &doc);  // always: a stable schema ([] without host ops)
  AddGpuOverlapJson(r, &doc);
  for (const TableRows& t : r.tables) {
    doc[t.def->name] = TableJson(*t.def, t.source());
    if (t.omitted) doc[std::string(t.def->name) + "_omitted"] = *t.omitted;
  }
  AddCallSiteFrames(r, &doc);
  doc["bottleneck"] = BottleneckJson(r.bottleneck);
  doc["stats"] = StatsJson(r.stats);
  doc["warnings"] = r.warnings;
  w.Members(doc);
  w.EndObject();
  out->Write("\n");
}

std::string RenderJson(const Report& report) {
  return WrittenText([&](OutputSink* out) { RenderJson(report, out); });
}

}  // namespace trainprof::collector
