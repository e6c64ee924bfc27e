// CSV report: one table per file, a header row, RFC 4180 (CRLF, fields quoted when they hold a
// comma, quote, CR or LF), valid UTF-8 (invalid bytes replaced by U+FFFD, as in the JSON report).
// Times in ns and sizes in bytes, as in the JSON report.
#include <charconv>
#include <memory>
#include <optional>

#include "collector/render/render.h"
#include "collector/base/text_safety.h"
#include "collector/render/table_render.h"
#include "collector/report/report_tables.h"
#include "collector/render/render_gpu_overlap.h"
#include "collector/report/host_ops_tables.h"

namespace trainprof::collector {
namespace {

// Plain decimal notation (spreadsheets and humans read "122000000", not "1.22e+08"), as short as
// round-trips.
std::string Num(double v) { return CsvNumber(v); }
template <typename T>
std::string Num(T v) {
  return std::to_string(v);
}
template <typename T>
std::string Opt(const std::optional<T>& v) {
  return v ? Num(*v) : "";
}

// One table being written: rows go straight to its sink.
class Csv {
 public:
  Csv(const std::function<OutputSink*(const std::string&)>& open, const char* name) : out_(open(name)) {}
  Csv& Row(const std::vector<std::string>& fields) {
    line_.clear();
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) line_ += ',';
      line_ += CsvField(fields[i]);
    }
    line_ += "\r\n";
    if (out_ != nullptr) out_->Write(line_);
    return *this;
  }
  /// Whether rows go anywhere (open() gave a sink): big tables are not made for nothing.
  bool on() const { return out_ != nullptr; }

 private:
  OutputSink* out_;
  std::string line_;
};

// A plain decimal number as Num writes it ("-5", "0.25"): a number, never a formula.
bool IsNumber(std::string_view s) {
  size_t i = s.size() > 1 && s[0] == '-' ? 1 : 0;
  bool digits = false, dot = false;
  for (; i < s.size(); ++i) {
    if (s[i] >= '0' && s[i] <= '9') {
      digits = true;
    } else if (s[i] == '.' && !dot && digits) {
      dot = true;
    } else {
      return false;
    }
  }
  return digits && s.back() != '.';
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A declared table (report_tables.h): its header, then its rows, one at a time; with
// `per_process`, every process's rows prefixed by pid and host.
template <typename RowsOfProcess, typename F>
void DeclaredCsv(const std::function<OutputSink*(const std::string&)>& open, const std::string& name,
                 const TableDef& def, const Report& r, bool per_process, RowsOfProcess rows_of, F cells) {
  Csv t(open, name.c_str());
  if (!per_process) {
    t.Row(CsvHeader(def));
    if (!t.on()) return;
    for (const auto& row : rows_of(nullptr)) t.Row(CsvFields(def, cells(row)));
    return;
  }
  t.Row(Concat({"pid", "host"}, CsvHeader(def)));
  for (const ProcessRow& p : r.processes) {
    if (!t.on()) break;
    for (const auto& row : rows_of(&p)) t.Row(Concat({Num(p.pid), p.host}, CsvFields(def, cells(row))));
  }
}

}  // namespace

std::string CsvField(std::string_view raw) {
  // Names come from traced programs: invalid UTF-8 replaced as the JSON report does, control
  // characters escaped as the text report does; a cell a spreadsheet would take for a formula
  // gets a leading ' (numbers excepted).
  std::string s = EscapeControls(raw);
  if (!raw.empty() && std::string_view("=+-@\t\r").find(raw[0]) != std::string_view::npos && !IsNumber(raw)) {
    s.insert(s.begin(), '\'');
  }
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::vector<CsvTable> RenderCsv(const Report& r) {
  std::vector<CsvTable> out;
  std::unique_ptr<StringSink> sink;
  auto close = [&] {
    if (sink) sink->Close();
  };
  RenderCsv(r, [&](const std::string& name) -> OutputSink* {
    close();
    out.push_back({name, ""});
    sink = std::make_unique<StringSink>(&out.back().text);
    return sink.get();
  });
  close();
  return out;
}

void RenderCsv(const Report& r, const std::function<OutputSink*(const std::string& name)>& open) {

  Csv files(open, "files.csv");
  files.Row({"path", "pid", "bytes", "bytes_read", "truncated", "usable", "errors"});
  for (const FileStatus& f : r.files) {
    std::string errors;
    for (const std::string& e : f.errors) errors += (errors.empty() ? "" : "; ") + e;
    files.Row({f.path, Opt(f.pid), Num(f.bytes), Num(f.bytes_read), f.truncated ? "true" : "false",
               f.usable ? "true" : "false", errors});
  }

  Csv procs(open, "processes.csv");
  procs.Row({"pid", "ppid", "parent_pid", "host", "rank", "local_rank", "world_size", "role", "command", "executable",
             "start_realtime_ns", "start_ns", "end_ns", "wall_ns", "exit_kind", "exit_code", "events",
             "unbalanced_ranges", "dropped_records", "truncated", "nvtx_misuse_null_names", "nvtx_misuse_names_cut",
             "nvtx_misuse_bad_attributes", "nvtx_misuse_other", "nvtx_misuse_undefined_names",
             "nvtx_misuse_undefined_domains", "gpu_state", "gpu_cupti_result", "gpu_message", "gpu_records_dropped",
             "gpu_invalid_timestamps", "cuda_calls", "cuda_calls_unfinished", "capture_limited", "recorded"});
  for (const ProcessRow& p : r.processes) {
    const NvtxMisuse& m = p.nvtx_misuse;
    procs.Row({Num(p.pid), Num(p.ppid), p.parent >= 0 ? Num(r.processes[p.parent].pid) : "", p.host, Opt(p.rank),
               Opt(p.local_rank), Opt(p.world_size), p.role, p.command, p.executable, Num(p.start_realtime_ns),
               Num(p.start_ns), Num(p.end_ns), p.start_known ? Num(p.wall_ns) : "", p.exit_kind, Opt(p.exit_code), Num(p.events),
               Num(p.unbalanced), Num(p.dropped), p.truncated ? "true" : "false", Num(m.null_names),
               Num(m.names_cut), Num(m.bad_attributes), Num(m.other + m.domains_over_limit), Num(m.undefined_names),
               Num(m.undefined_domains), p.gpu.state, Opt(p.gpu.cupti_result), p.gpu.message,
               Num(p.gpu.records_dropped), Num(p.gpu.invalid_timestamps), Num(p.gpu.calls),
               Num(p.gpu.unfinished_calls), p.capture_limited ? "true" : "false", p.recorded});
  }

  Csv threads(open, "threads.csv");
  threads.Row({"pid", "host", "tid", "name", "events"});
  for (const ProcessRow& p : r.processes) {
    for (const ThreadRow& t : p.threads) threads.Row({Num(p.pid), p.host, Num(t.tid), t.name, Num(t.events)});
  }

  // The range rows one at a time (a table of a million names never exists whole).
  auto ranges = [&](const ProcessRow* p) -> const RangeRows& { return p ? p->nvtx_ranges : r.nvtx_ranges; };
  DeclaredCsv(open, "nvtx_ranges.csv", RangeTable(), r, false, ranges, RangeCells);
  DeclaredCsv(open, "nvtx_marks.csv", MarkTable(), r, false, [&](const ProcessRow*) -> const auto& { return r.nvtx_marks; },
              MarkCells);

  const Bottleneck& b = r.bottleneck;
  Csv summary(open, "bottleneck.csv");
  std::vector<std::string> header = {"pid", "host", "rank", "role", "verdict", "steps", "steps_in_statistics",
                                     "warmup_skipped", "eval_steps", "mean_step_ns", "median_step_ns", "p90_step_ns",
                                     "std_step_ns"};
  for (size_t i = 0; i < kPartCount; ++i) header.push_back(std::string(PartName(static_cast<Part>(i))) + "_percent");
  for (const char* h : {"largest_phase", "input_cause", "workers", "worker_processes", "workers_busy_percent",
                        "fetch_mean_ns", "getitem_percent", "collate_percent", "workers_needed", "startup_wait_ns",
                        "gpu_busy_percent", "gpu_idle_percent", "gpu_idle_cause", "gpu_idle_data_wait_percent",
                        "gpu_idle_sync_percent", "gpu_idle_launch_percent", "gpu_idle_other_percent", "gpu_sync_call",
                        "gpu_sync_calls_per_step", "gpu_launch_bound"}) {
    header.push_back(h);
  }
  summary.Row(header);
  for (const TrainingProcess& t : b.processes) {
    const bool has = t.step.count > 0;
    std::vector<std::string> row = {Num(t.pid), t.host, Opt(t.rank), t.role, VerdictName(t.verdict), Num(t.steps),
                                    Num(t.step.count), t.warmup_skipped ? "true" : "false", Num(t.eval_steps),
                                    Num(t.step.mean), Num(t.step.median), Num(t.step.p90), Num(t.step.std)};
    for (size_t i = 0; i < kPartCount; ++i) {  // DDP's unknown collective share: empty, not 0
      const bool unknown = static_cast<Part>(i) == Part::kCollective && !t.collective.known();
      row.push_back(unknown ? "" : Num(t.parts[i].percent));
    }
    row.push_back(has ? PartName(t.largest) : "");
    row.push_back(InputCauseName(t.advice.cause));
    const InputPipeline* in = t.input ? &*t.input : nullptr;
    const double fetch = in ? static_cast<double>(in->fetch.fetch_ns) : 0;
    row.push_back(in ? Num(in->concurrent_workers) : "");
    row.push_back(in ? Num(in->worker_processes) : "");
    row.push_back(in && in->busy_percent ? Num(*in->busy_percent) : "");
    row.push_back(in && in->fetch.fetches ? Num(in->fetch_mean_ns()) : "");
    row.push_back(in && fetch > 0 ? Num(in->fetch.getitem_percent()) : "");
    row.push_back(in && fetch > 0 ? Num(in->fetch.collate_percent()) : "");
    row.push_back(Opt(t.advice.workers_needed));
    row.push_back(in ? Num(in->startup_wait_ns) : "");
    const GpuIdle* g = t.gpu && t.gpu->recorded ? &*t.gpu : nullptr;
    row.push_back(g ? Num(g->busy_percent) : "");
    row.push_back(g ? Num(g->idle_percent) : "");
    row.push_back(g && g->idle_ns > 0 ? IdleCauseName(g->cause) : "");
    for (IdleCause c : {IdleCause::kDataWait, IdleCause::kSync, IdleCause::kLaunch, IdleCause::kOther}) {
      row.push_back(g ? Num(g->idle_share(c)) : "");
    }
    row.push_back(g ? g->sync_call : "");
    row.push_back(g && !g->sync_call.empty() ? Num(g->sync_calls_per_step) : "");
    row.push_back(g ? (g->launch_bound ? "true" : "false") : "");
    summary.Row(row);
  }

  Csv steps(open, "steps.csv");
  header = {"pid", "host", "rank", "step", "train_step", "kind", "in_statistics", "epoch", "tid", "data_waits",
            "micro_batches", "passes", "start_ns", "end_ns", "duration_ns"};
  for (size_t i = 0; i < kPartCount; ++i) header.push_back(std::string(PartName(static_cast<Part>(i))) + "_ns");
  for (const char* h : {"arrival", "arrival_ns", "lateness_ns"}) header.push_back(h);
  steps.Row(header);
  for (const TrainingProcess& t : b.processes) {
    if (!steps.on()) break;
    for (const StepRow& s : t.step_rows) {
      std::vector<std::string> row = {Num(t.pid), t.host, Opt(t.rank), Num(s.step), Opt(s.train_step),
                                      s.eval ? "eval" : "train", s.in_statistics ? "true" : "false", Num(s.epoch),
                                      Num(s.tid), Num(s.data_waits), Num(s.micro_batches), Num(s.passes), Num(s.start_ns), Num(s.end_ns),
                                      Num(s.end_ns - s.start_ns)};
      for (uint64_t v : s.parts) row.push_back(Num(v));
      row.push_back(s.arrival == Arrival::kNone ? "" : ArrivalName(s.arrival));
      row.push_back(Opt(s.arrival_ns));
      row.push_back(Opt(s.lateness_ns));
      steps.Row(row);
    }
  }

  Csv workers(open, "dataloader_workers.csv");
  workers.Row({"training_pid", "host", "pid", "start_ns", "end_ns", "fetches", "fetch_ns", "getitem_ns", "collate_ns",
               "startup_ns", "init_fn_calls", "init_fn_ns", "window_ns", "busy_ns", "busy_percent",
               "lifetime_busy_percent"});
  for (const TrainingProcess& t : b.processes) {
    if (!t.input) continue;
    for (const WorkerStats& w : t.input->workers) {
      workers.Row({Num(t.pid), t.host, Num(w.pid), Num(w.start_ns), Num(w.end_ns), Num(w.fetch.fetches),
                   Num(w.fetch.fetch_ns), Num(w.fetch.getitem_ns), Num(w.fetch.collate_ns), Num(w.startup_ns),
                   Num(w.init_fn_calls), Num(w.init_fn_ns), Num(w.window_ns), Num(w.busy_ns), Opt(w.busy_percent),
                   Opt(w.lifetime_busy_percent)});
    }
  }

  Csv ranks(open, "ranks.csv");
  ranks.Row({"rank", "pid", "host", "steps", "mean_step_ns", "mean_compute_ns", "mean_data_wait_ns", "arrival",
             "mean_lateness_ns", "median_lateness_ns", "last_steps", "wait_ns", "straggler", "last_share", "late_steps"});
  if (b.ranks) {
    for (size_t i = 0; i < b.ranks->ranks.size(); ++i) {
      const RankRow& k = b.ranks->ranks[i];
      ranks.Row({Num(k.rank), Num(k.pid), k.host, Num(k.steps), Num(k.mean_step_ns), Num(k.mean_compute_ns),
                 Num(k.mean_data_wait_ns), k.arrival, Opt(k.mean_lateness_ns), Opt(k.median_lateness_ns),
                 Num(k.last_steps), Opt(k.wait_ns),
                 b.ranks->straggler && static_cast<int>(i) == b.ranks->latest ? "true" : "false",
                 Opt(k.last_share), Num(k.late_steps)});
    }
  }

  auto api = [&](const ProcessRow* p) -> const auto& { return (p ? p->cuda : r.cuda).api; };
  auto kernels = [&](const ProcessRow* p) -> const auto& { return (p ? p->cuda : r.cuda).kernels; };
  auto memory = [&](const ProcessRow* p) -> const auto& { return (p ? p->cuda : r.cuda).memory; };
  DeclaredCsv(open, "cuda_api.csv", CudaApiTableDef(), r, false, api, CudaApiCells);
  DeclaredCsv(open, "gpu_kernels.csv", KernelTableDef(), r, false, kernels, KernelCells);
  DeclaredCsv(open, "memory_ops.csv", MemoryTableDef(), r, false, memory, MemoryCells);

  Csv devices(open, "gpu_devices.csv");
  devices.Row(CsvHeader(DeviceTable()));
  auto device_row = [&](const DeviceRow& d) { devices.Row(CsvFields(DeviceTable(), DeviceCells(d))); };
  for (const DeviceRow& d : r.cuda.devices) device_row(d);  // merged: pid empty
  for (const ProcessRow& p : r.processes) {
    for (const DeviceRow& d : p.cuda.devices) device_row(d);
  }

  for (const CsvRows& t : GpuOverlapCsv(r)) {
    Csv csv(open, t.file);
    for (const std::vector<std::string>& fields : t.rows) csv.Row(fields);
  }

  for (const TableRows& t : r.tables) {
    DeclaredCsv(open, t.def->csv, *t.def, r, false, [&](const ProcessRow*) -> const auto& { return t.rows; },
                [](const Cells& c) { return c; });
  }

  if (r.host_ops.any()) {  // operators.csv, python_functions.csv: only for traces with them
    auto ops = [&](const ProcessRow* p) -> const auto& { return (p ? p->host_ops : r.host_ops).operators; };
    auto pyfuncs = [&](const ProcessRow* p) -> const auto& { return (p ? p->host_ops : r.host_ops).python_functions; };
    DeclaredCsv(open, "operators.csv", OperatorTableDef(), r, false, ops, HostOpCells);
    DeclaredCsv(open, "python_functions.csv", PythonFunctionTableDef(), r, false, pyfuncs, HostOpCells);
    if (r.options.by_process) {
      DeclaredCsv(open, "operators_by_process.csv", OperatorTableDef(), r, true, ops, HostOpCells);
      DeclaredCsv(open, "python_functions_by_process.csv", PythonFunctionTableDef(), r, true, pyfuncs, HostOpCells);
    }
  }

  if (r.options.by_process) {
    DeclaredCsv(open, "nvtx_ranges_by_process.csv", RangeTable(), r, true, ranges, RangeCells);
    // CUDA tables per process: pid and host, then the columns of the merged table.
    DeclaredCsv(open, "cuda_api_by_process.csv", CudaApiTableDef(), r, true, api, CudaApiCells);
    DeclaredCsv(open, "gpu_kernels_by_process.csv", KernelTableDef(), r, true, kernels, KernelCells);
    DeclaredCsv(open, "memory_ops_by_process.csv", MemoryTableDef(), r, true, memory, MemoryCells);
  }

  Csv stats(open, "stats.csv");  // the catalogue of losses (model/losses.def), summed over the trace
  stats.Row({"key", "severity", "scope", "value"});
  for (size_t k = 0; k < kLossKinds; ++k) {
    const LossInfo& info = kLossCatalogue[k];
    stats.Row({std::string(info.key), std::string(SeverityName(info.severity)), std::string(ScopeName(info.scope)),
               Num(r.stats[static_cast<Loss>(k)])});
  }
}

}  // namespace trainprof::collector
