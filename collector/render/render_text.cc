// Text report. Layout (docs/report.md):
//
//   title line
//   Warnings            one line each
//   Processes           the tree, indented by depth in the PID column
//   Bottleneck          steps per training process, verdict sentences, ranks, GPU placeholder
//   NVTX ranges         merged over all processes, like `nsys stats --report nvtx_sum`
//   NVTX marks          if any
//   GPU devices, CUDA API, GPU kernels, GPU memory operations   with CUDA data (render_text_cuda.cc)
//   per-process NVTX (and CUDA) tables with --by-process
//
// Names, commands, paths and roles come from programs: every table cell and every line of
// free text goes through EscapeControls, so a tab or newline in a name cannot break the layout.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "collector/render/render.h"
#include "collector/render/render_text_cuda.h"
#include "collector/base/text_safety.h"
#include "collector/render/table_render.h"
#include "collector/render/text_table.h"
#include "collector/report/rank_tables.h"
#include "collector/report/report_tables.h"
#include "collector/render/render_gpu_overlap.h"
#include "collector/render/render_host_ops.h"
#include "collector/base/units.h"

namespace trainprof::collector {
namespace {

constexpr size_t kCommandWidth = 60;

// "python3 train.py --lr 3e-4": the program's base name, then its arguments.
std::string DisplayCommand(const std::string& command) {
  std::string c = EscapeControls(command);
  size_t first_end = c.find(' ');
  std::string first = c.substr(0, first_end);
  if (!first.empty() && first[0] != '\'') {
    size_t slash = first.rfind('/');
    if (slash != std::string::npos && slash + 1 < first.size()) c = c.substr(slash + 1);
  }
  return Shorten(c, kCommandWidth);
}

// `title`, then a range table, streamed (table_render.h), and its notes; "none recorded" and false
// when `rows` is empty. `text` holds what is not written yet: it goes to `out` before the table.
bool RangeTableText(const std::string& title, const RangeRows& rows, size_t omitted, size_t top, std::string* text,
                    OutputSink* out) {
  *text += title;
  if (rows.empty()) {
    *text += "  none recorded\n";
    return false;
  }
  out->Write(*text);
  text->clear();
  TextTable(RangeTable(), RowsOf(rows, RangeCells), "  ", out);
  if (omitted > 0) out->Write("  ... " + Plural(omitted, "more row", "more rows") + " (--top " + std::to_string(top) + ")\n");
  out->Write(EstimatedMedianNote(rows.any_estimated(), "calls"));
  return true;
}

std::string ProcessLabel(const ProcessRow& p) {
  std::string label = "pid " + std::to_string(p.pid);
  if (!p.role.empty()) label += " (" + p.role + ")";
  std::string cmd = DisplayCommand(p.command);
  if (!cmd.empty()) label += ": " + cmd;
  return EscapeControls(label);
}

std::string Dur(double ns) { return FormatDuration(ns); }
std::string OptDur(const std::optional<double>& ns) { return ns ? FormatDuration(*ns) : "-"; }

// "Hosts": each host's wall clock against the reference host's (ranks on two or more hosts).
std::string HostsText(const Report& r) {
  for (const TableRows& t : r.tables) {
    if (t.def != &HostClockTable()) continue;
    std::vector<size_t> shown;
    const size_t host = t.def->Index("host");
    for (size_t i = 0; i < t.rows.size(); ++i) {
      if (!r.text_hosts || r.text_hosts->count(t.rows[i][host].s) > 0) shown.push_back(i);
    }
    std::string out = "\nHosts\n" + TextTable(HostClockTable(), RowsOf(shown, [&t](size_t i) { return t.rows[i]; }), "  ");
    if (shown.size() < t.rows.size()) {
      out += "  ... " + Plural(t.rows.size() - shown.size(), "more host", "more hosts") +
             " (the reference, hosts on their wall clock or unknown and the largest offsets and uncertainties are "
             "listed; --by-rank lists every host; JSON and CSV have them all)\n";
    }
    return out +
           "  Clock offset: the host's wall clock minus the reference's (the host of the lowest rank), from instants\n"
           "  the ranks share (the ends of barriers, blocking collectives or init_process_group); its processes'\n"
           "  times are shown on the reference's clock. Uncertainty: the median end skew of those instants.\n"
           "  wall_clock: no instant shared with the reference, so its wall clock is taken as it is; unknown: none\n"
           "  shared and no wall clock in its files, so its ranks are not compared; Clock offset \"-\": no wall clock\n"
           "  in its files, its monotonic clock aligned instead.\n";
  }
  return "";
}

// "... N more ranks (...)": the rows a report of many ranks leaves out of a text table.
std::string MoreRanks(size_t n) {
  return "... " + Plural(n, "more rank", "more ranks") + " (--by-rank lists every rank; JSON and CSV have them all)";
}

// "Across ranks": the spread of the ranks' figures, shown where their rows are left out.
std::string SpreadText(const Report& r) {
  const TableRows* spread = nullptr;
  for (const TableRows& t : r.tables) {
    if (t.def == &RankSpreadTable()) spread = &t;
  }
  if (spread == nullptr) return "";
  std::string without;
  const std::vector<int64_t>& idle = r.ranks_without_steps;
  if (!idle.empty()) {
    without = "; " + Plural(idle.size(), "rank has", "ranks have") + " none: ";
    for (size_t i = 0; i < idle.size() && i < kRanksListedWithoutSteps; ++i) {
      without += (i == 0 ? "" : ", ") + std::to_string(idle[i]);
    }
    if (idle.size() > kRanksListedWithoutSteps) without += ", ...";
  }
  std::string out = "\n  Across ranks (" + Plural(r.bottleneck.spread->ranks, "rank", "ranks") +
                    " with training steps" + without +
                    "; the tables show the lowest rank, the straggler, the outliers and ranks without steps)\n";
  out += TextTable(RankSpreadTable(), spread->source(), "  ");
  out += "  Outliers: ranks whose modified z-score, 0.6745 x (value - median) / MAD, is beyond 3.5 either way (MAD:\n"
         "  the median absolute deviation, at least 1% of the median, of the median step for lateness, or 0.5\n"
         "  points for shares); Rank: the lowest rank with the min or max value.\n";
  return out;
}

// The Bottleneck section (docs/analysis.md): a table of steps, the sentences behind the verdict.
std::string BottleneckText(const Report& r) {
  const Bottleneck& b = r.bottleneck;
  std::string out = "\nBottleneck\n";
  if (b.processes.empty()) return out + "  " + EscapeControls(b.message) + "\n";
  std::vector<Column> columns = {{"PID", false},       {"Rank", true},       {"Steps", true},     {"Mean", true},
                                 {"Median", true},     {"P90", true},        {"StdDev", true},    {"Data wait", true},
                                 {"Forward", true},    {"Backward", true},   {"Optimizer", true}, {"Collective", true},
                                 {"Other", true}};
  if (b.gpu.recorded) columns.push_back({"GPU busy", true});  // share of the step the GPU ran work (gpu_idle.h)
  columns.push_back({"Verdict", false});
  Table steps(std::move(columns));
  size_t ranks_left_out = 0;
  for (const TrainingProcess& t : b.processes) {
    if (!ShowsRank(r, t.rank)) {
      ++ranks_left_out;
      continue;
    }
    std::vector<std::string> row = {std::to_string(t.pid), t.rank ? std::to_string(*t.rank) : "-",
                                    std::to_string(t.steps)};
    if (t.step.count == 0) {
      for (int i = 0; i < (b.gpu.recorded ? 11 : 10); ++i) row.push_back("-");
    } else {
      for (double v : {t.step.mean, t.step.median, t.step.p90, t.step.std}) row.push_back(Dur(v));
      for (Part p :
           {Part::kDataWait, Part::kForward, Part::kBackward, Part::kOptimizer, Part::kCollective, Part::kOther}) {
        row.push_back(p == Part::kCollective && !t.collective.known() ? "unknown"
                                                                       : FormatPercent(t.part(p).percent) + "%");
      }
      if (b.gpu.recorded) row.push_back(t.gpu && t.gpu->recorded ? FormatPercent(t.gpu->busy_percent) + "%" : "-");
    }
    row.push_back(VerdictLabel(t.verdict));
    steps.Add(std::move(row));
  }
  out += steps.Render("  ");
  if (ranks_left_out > 0) out += "  " + MoreRanks(ranks_left_out) + "\n";
  const bool rhythm = std::any_of(b.processes.begin(), b.processes.end(),
                                  [](const TrainingProcess& t) { return t.steps_found_by == "loop_rhythm"; });
  const bool accumulates = std::any_of(b.processes.begin(), b.processes.end(),
                                       [](const TrainingProcess& t) { return t.micro_batches_max > 1; });
  // With gradient accumulation a step holds several waits: it is the optimizer step.
  const std::string from_waits = accumulates ? "Steps run from the first wait for a DataLoader batch of an optimizer step "
                                               "to the next optimizer step's (gradient accumulation: its micro-batches "
                                               "together)"
                                             : "Steps run from one wait for a DataLoader batch to the next";
  out += rhythm ? "  " + from_waits + ", or without a DataLoader, from one backward or optimizer step to the next (data "
                  "wait: the time between them before the forward); the parts are shares of the step time.\n"
                : "  " + from_waits + "; the parts are shares of the step time.\n";
  if (std::any_of(b.processes.begin(), b.processes.end(),
                  [](const TrainingProcess& t) { return t.steps_found_by == "profiler_step"; }))
    out += "  In torch.profiler traces, steps are its ProfilerStep#N spans (prof.step() to prof.step()).\n";
  if (b.gpu.recorded) out += "  GPU busy: share of the step in which the GPU ran a kernel, memcpy or memset of the process.\n";
  if (b.spread && r.text_ranks) out += SpreadText(r);
  for (const TrainingProcess& t : b.processes) {
    if (!ShowsRank(r, t.rank)) continue;
    out += "\n";
    for (size_t i = 0; i < t.text.size(); ++i) out += (i == 0 ? "  " : "    ") + EscapeControls(t.text[i]) + "\n";
  }
  if (b.ranks) {
    out += "\n  Ranks\n";
    // Ranks that do not meet inside a step are never late for one another, nor wait: their table
    // has no lateness columns (the sentence below says how far apart their steps run).
    const bool meet = b.ranks->synchronised;
    std::vector<Column> columns = {{"Rank", true},      {"PID", true},          {"Steps", true},
                                          {"Mean step", true}, {"Mean compute", true}, {"Data wait", true}};
    if (meet) {
      for (const char* c : {"Late (mean)", "Late (median)", "Last", "Waits for straggler"}) columns.push_back({c, true});
    }
    Table ranks(std::move(columns));
    size_t rows_left_out = 0;
    for (const RankRow& k : b.ranks->ranks) {
      if (!ShowsRank(r, k.rank)) {
        ++rows_left_out;
        continue;
      }
      std::vector<std::string> row = {std::to_string(k.rank),   std::to_string(k.pid),     std::to_string(k.steps),
                                      Dur(k.mean_step_ns),      Dur(k.mean_compute_ns),    Dur(k.mean_data_wait_ns)};
      if (meet) {
        for (std::string cell : {OptDur(k.mean_lateness_ns), OptDur(k.median_lateness_ns), std::to_string(k.last_steps),
                                 OptDur(k.wait_ns)}) {
          row.push_back(std::move(cell));
        }
      }
      ranks.Add(std::move(row));
    }
    out += ranks.Render("  ");
    if (rows_left_out > 0) out += "  " + MoreRanks(rows_left_out) + "\n";
    for (const std::string& line : b.rank_text) out += "  " + EscapeControls(line) + "\n";
  }
  if (!b.gpu.recorded) out += "\n  GPU activity: not recorded (no CUDA data in these traces)\n";
  return out;
}

// The Command cell, with the "(not recorded)" marker of a process that left no trace.
std::string RecordedCommand(const ProcessRow& p) {
  if (p.recorded == "no") return "(not recorded)";
  if (p.recorded == "until_exec") {
    std::string what = p.unrecorded_exec.empty() ? "exec" : "exec of " + DisplayCommand(p.unrecorded_exec);
    return "(not recorded after " + what + ") " + DisplayCommand(p.command);
  }
  return DisplayCommand(p.command);
}

}  // namespace

void RenderText(const Report& r, OutputSink* sink) {
  std::string out;
  // Title.
  out += "trainprof report: " + Plural(r.files.size(), "trace file", "trace files");
  if (r.damaged_files > 0) out += " (" + std::to_string(r.damaged_files) + " damaged)";
  out += ", " + Plural(r.processes.size(), "process", "processes") + " on " + Plural(r.hosts, "host", "hosts");
  if (!r.options.ranks.empty()) {  // cut to some ranks (--rank)
    std::string ranks;
    for (int64_t k : r.options.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(k);
    out += " (--rank " + ranks + ")";
  }
  if (!r.processes.empty()) {
    out += ", " + FormatDuration(static_cast<double>(r.span_ns)) +
           (r.start_realtime_ns != 0 ? " from " + FormatUtc(r.start_realtime_ns) : " (wall-clock start unknown)");
  }
  out += "\n";

  if (!r.warnings.empty()) {
    out += "\nWarnings\n";
    for (const std::string& w : r.warnings) out += "  " + EscapeControls(w) + "\n";
  }

  out += "\nProcesses\n";
  if (r.processes.empty()) {
    out += "  none\n";
  } else {
    std::vector<Column> columns = {{"PID", false},    {"PPID", true},       {"Rank", true},  {"Role", false},
                                   {"Command", false}, {"Start", true},       {"Wall", true},  {"Exit", false},
                                   {"Events", true},   {"Unbalanced", true}, {"Truncated", false}, {"Dropped", true}};
    if (r.has_cuda) {  // GPU tracing: state, GPU records dropped by CUPTI, invalid timestamps, calls never returned
      columns.insert(columns.end(), {{"GPU", false}, {"GPU dropped", true}, {"Bad times", true}, {"Unreturned", true}});
    }
    const bool hosts = r.hosts > 1;  // pids repeat across hosts: say whose
    if (hosts) columns.insert(columns.begin() + 2, {"Host", false});
    Table t(std::move(columns));
    size_t processes_left_out = 0, kineto_left_out = 0;
    std::set<int64_t> ranks_left_out;
    for (const ProcessRow& p : r.processes) {
      if (!ShowsRank(r, p.rank) && !UnusualProcess(p)) {
        ++processes_left_out;
        kineto_left_out += p.kineto ? 1 : 0;
        ranks_left_out.insert(*p.rank);
        continue;
      }
      std::vector<std::string> row = {
          std::string(2 * static_cast<size_t>(p.depth), ' ') + std::to_string(p.pid), std::to_string(p.ppid),
          p.rank ? std::to_string(*p.rank) : "-", p.role, RecordedCommand(p),
          p.start_known ? "+" + FormatDuration(static_cast<double>(p.offset_ns)) : "-",
          p.start_known ? FormatDuration(static_cast<double>(p.wall_ns)) : "-",
          p.exit_text, std::to_string(p.events), std::to_string(p.unbalanced), p.truncated ? "yes" : "no",
          std::to_string(p.dropped)};
      if (hosts) row.insert(row.begin() + 2, Shorten(EscapeControls(p.host), 24));
      if (r.has_cuda) {
        row.push_back(p.gpu.state == "none" ? "-" : p.gpu.state);
        row.push_back(std::to_string(p.gpu.records_dropped));
        row.push_back(std::to_string(p.gpu.invalid_timestamps));
        row.push_back(std::to_string(p.gpu.unfinished_calls));
      }
      t.Add(std::move(row));
    }
    out += t.Render("  ");
    if (processes_left_out > 0) {
      const size_t exited = processes_left_out - kineto_left_out;
      std::string how = exited == 0 ? "" : exited == processes_left_out ? "exit 0" : std::to_string(exited) + " exit 0";
      if (kineto_left_out > 0) {
        how += std::string(how.empty() ? "" : ", ") +
               (kineto_left_out == processes_left_out ? "" : std::to_string(kineto_left_out) + " ") +
               "torch.profiler traces (no exit recorded)";
      }
      out += "  ... " + Plural(processes_left_out, "more process", "more processes") + " of " +
             Plural(ranks_left_out.size(), "other rank", "other ranks") + ", each recorded (" + how +
             ") with no file damaged or truncated, nothing dropped or unbalanced (--by-rank lists them)\n";
    }
    if (std::any_of(r.processes.begin(), r.processes.end(),
                    [](const ProcessRow& p) { return p.exit_kind == "unknown" && !p.kineto; })) {
      out += "  Exit \"unknown\": no exit record (killed?)\n";
    }
    if (std::any_of(r.processes.begin(), r.processes.end(), [](const ProcessRow& p) { return p.kineto; })) {
      out += "  Exit \"unknown\" of a torch.profiler (Kineto) trace: such a trace records no exit.\n";
    }
    if (std::any_of(r.processes.begin(), r.processes.end(), [](const ProcessRow& p) { return p.recorded != "yes"; })) {
      out += "  \"(not recorded)\": no trace of the process (or of the program it exec'd): a setuid, setgid or\n"
             "  file-capability program (the loader drops LD_PRELOAD), statically linked, its exec failed, or\n"
             "  LD_PRELOAD or its environment cleared; or its trace file was not given to the report (the Warnings\n"
             "  say so where it lies beside its parent's); known from its parent's fork and wait records.\n";
      if (std::any_of(r.processes.begin(), r.processes.end(), [](const ProcessRow& p) { return !p.start_known; })) {
        out += "  Start and Wall \"-\": a child started by vfork or clone (Python's subprocess, system()),\n"
               "  known from its parent's wait alone.\n";
      }
    }
    if (r.has_cuda) {
      out += "  GPU: CUDA tracing on, unavailable (see Warnings) or - (no CUDA); GPU dropped: records CUPTI lost;\n"
             "  Bad times: GPU records with a zero or reversed timestamp (left out); Unreturned: CUDA calls never returned.\n";
    }
  }

  out += HostsText(r);
  out += BottleneckText(r);

  if (RangeTableText("\nNVTX ranges (all processes)\n", r.nvtx_ranges, r.nvtx_ranges_omitted, r.options.top, &out,
                     sink)) {
    if (std::any_of(r.nvtx_ranges.begin(), r.nvtx_ranges.end(), [](const RangeRow& row) { return row.grouped; })) {
      out += "  <N>: names that differ only in numbers, grouped (--no-group-names shows each name).\n";
    }
    out += r.nvtx_ranges_processes == 1
               ? "  Time (%) = total time / wall time of the process (" +
                     FormatDuration(static_cast<double>(r.nvtx_ranges_wall_ns)) + "); nested or concurrent ranges\n"
                     "  can add up to more than 100%.\n"
               : "  Time (%) = total time / summed wall time of the " + std::to_string(r.nvtx_ranges_processes) +
                     " processes with ranges (" + FormatDuration(static_cast<double>(r.nvtx_ranges_wall_ns)) +
                     "), one\n  denominator for every row; nested or concurrent ranges can add up to more than "
                     "100%.\n";
    if (std::any_of(r.processes.begin(), r.processes.end(), [](const ProcessRow& p) { return p.capture_limited; })) {
      out += "  For a process recorded only in capture ranges or a --delay/--duration window, its captured\n"
             "  time stands for its wall time.\n";
    }
  }

  if (!r.nvtx_marks.empty()) {
    out += "\nNVTX marks (all processes)\n";
    out += TextTable(MarkTable(), RowsOf(r.nvtx_marks, MarkCells), "  ");
    if (r.nvtx_marks_omitted > 0) {
      out += "  ... " + Plural(r.nvtx_marks_omitted, "more row", "more rows") + " (--top " + std::to_string(r.options.top) + ")\n";
    }
  }

  out += HostOpSectionsText(r);  // the host side (torch.profiler's operators) beside the NVTX tables
  out += CudaSectionsText(r);
  out += GpuOverlapText(r);
  for (const TableRows& t : r.tables) {
    if (!t.text) continue;
    out += "\n" + t.title + "\n";
    RowSource rows = t.source();
    // A table with a row per process (a rank column): the rows of the ranks the text shows.
    std::vector<size_t> kept;
    size_t other_ranks = 0;
    if (const size_t rank = t.def->Index("rank"); r.text_ranks && rank < t.def->columns.size()) {
      for (size_t i = 0; i < t.rows.size(); ++i) {
        const Cell& c = t.rows[i][rank];
        if (c.kind == Cell::Kind::kInt && r.text_ranks->count(c.i) == 0) {
          ++other_ranks;
        } else {
          kept.push_back(i);
        }
      }
      if (other_ranks > 0) rows = RowsOf(kept, [&t](size_t i) { return t.rows[i]; });
    }
    const size_t cut = t.text_rows > 0 && rows.size > t.text_rows ? rows.size - t.text_rows : 0;
    rows.size -= cut;
    out += t.rows.empty() ? "  none recorded\n" : TextTable(*t.def, rows, "  ") + EstimatedQuantilesNote(t.rows, "values");
    if (cut > 0) {
      out += "  ... " + Plural(cut, "more row", "more rows") + " (--top N shows N; JSON and CSV have them all)\n";
    }
    if (other_ranks > 0) {
      out += "  ... " + Plural(other_ranks, "more row", "more rows") +
             " of other ranks (--by-rank lists them; JSON and CSV have them all)\n";
    }
    if (t.omitted.value_or(0) > 0) {
      out += "  ... " + Plural(*t.omitted, "more row", "more rows") + " (--top " + std::to_string(r.options.top) + ")\n";
    }
  }

  if (r.options.by_process) {
    for (const ProcessRow& p : r.processes) {
      RangeTableText("\nNVTX ranges: " + ProcessLabel(p) + "\n", p.nvtx_ranges, p.nvtx_ranges_omitted, r.options.top,
                     &out, sink);
      out += ProcessCudaText(p, r.options);
      out += ProcessHostOpsText(p, r.options);
    }
    out += "\n  Per-process Time (%) = total time / the process's wall time.\n";
  }
  sink->Write(out);
}

std::string RenderText(const Report& report) {
  return WrittenText([&](OutputSink* out) { RenderText(report, out); });
}

}  // namespace trainprof::collector
