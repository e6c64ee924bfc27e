#include "collector/report.h"

#include <algorithm>
#include <map>
#include <set>

#include "collector/capture_note.h"
#include "collector/nvtx_stats.h"
#include "collector/process_tree.h"
#include "collector/python_shim_note.h"
#include "collector/trace_reader.h"

#ifndef TRAINPROF_VERSION
#define TRAINPROF_VERSION "0.0.0"
#endif

namespace trainprof::collector {
namespace {

RangeRow ToRow(const RangeStats& s, const StringPool& strings) {
  RangeRow row;
  row.name = RangeDisplayName(s.key, strings);
  row.domain = std::string(strings.Get(s.key.domain));
  row.style = RangeStyleName(s.key.style);
  row.calls = s.calls;
  row.total_ns = s.total_ns;
  row.percent = s.percent;
  row.mean_ns = s.mean_ns;
  row.std_ns = s.std_ns;
  row.min_ns = s.min_ns;
  row.median_ns = s.median_ns;
  row.median_exact = s.median_exact;
  row.max_ns = s.max_ns;
  row.unbalanced = s.unbalanced;
  return row;
}

template <typename T>
size_t CutToTop(std::vector<T>* rows, size_t top) {
  if (top == 0 || rows->size() <= top) return 0;
  size_t omitted = rows->size() - top;
  rows->resize(top);
  return omitted;
}

const char* SourceName(ExitInfo::Source s) {
  switch (s) {
    case ExitInfo::Source::kHeader: return "header";
    case ExitInfo::Source::kProcessEnd: return "process_end";
    case ExitInfo::Source::kParentWait: return "parent_wait";
    default: return "";
  }
}

NvtxMisuse MisuseOf(const Process& p) {
  NvtxMisuse m;
  for (const TraceImage& img : p.images) {
    m.undefined_names += img.undefined_names;
    m.undefined_domains += img.undefined_domains;
    for (const ProcessEvent& e : img.process_events) {
      if (e.kind != ProcessEventKind::kMisuse) continue;
      switch (static_cast<format::MisuseKind>(e.what)) {
        case format::MisuseKind::kNullName: ++m.null_names; break;
        case format::MisuseKind::kNameTruncated: ++m.names_cut; break;
        case format::MisuseKind::kBadAttributes: ++m.bad_attributes; break;
        default: ++m.other; break;
      }
    }
  }
  return m;
}

std::string Count(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Warnings about GPU tracing of one process (docs/report.md, "Warnings").
std::vector<std::string> GpuNotes(const GpuTracing& g, const Process& p) {
  std::vector<std::string> out;
  if (g.state == "unavailable") {
    std::string why = g.message.empty() ? "no reason recorded" : g.message;
    out.push_back("GPU tracing unavailable: " + why + " (CUPTI result " + std::to_string(g.cupti_result.value_or(0)) +
                  "); NVTX ranges and Python phases were still recorded");
  }
  if (g.records_dropped > 0) {
    out.push_back(Count(g.records_dropped, "GPU activity record", "GPU activity records") +
                  " dropped by CUPTI (buffers full): GPU statistics are incomplete");
  }
  if (g.invalid_timestamps > 0) {
    out.push_back(Count(g.invalid_timestamps, "GPU record", "GPU records") +
                  " with an invalid timestamp (zero, or end before start): left out of every statistic");
  }
  if (g.unfinished_calls > 0) {
    std::string names;
    for (const std::string& n : g.unfinished_names) names += (names.empty() ? "" : ", ") + n;
    out.push_back(Count(g.unfinished_calls, "CUDA call", "CUDA calls") + " never returned (" + names +
                  "): the process ended inside; not in the durations");
  }
  if (g.unmatched_exits > 0) {
    out.push_back(Count(g.unmatched_exits, "CUDA call exit", "CUDA call exits") + " without their enter (not counted)");
  }
  if (g.state == "on" && !g.flushed && p.exit.kind == EndKind::kNone) {
    out.push_back("GPU activity not flushed at the end (killed?): its last GPU records may be missing");
  }
  return out;
}

bool NeedsQuoting(const std::string& s) {
  if (s.empty()) return true;
  return s.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~!") != std::string::npos;
}

}  // namespace

const char* TrainprofVersion() { return TRAINPROF_VERSION; }

NvtxMisuse& NvtxMisuse::operator+=(const NvtxMisuse& o) {
  null_names += o.null_names;
  names_cut += o.names_cut;
  bad_attributes += o.bad_attributes;
  other += o.other;
  undefined_names += o.undefined_names;
  undefined_domains += o.undefined_domains;
  return *this;
}

std::string DescribeMisuse(const NvtxMisuse& m) {
  const std::string max = std::to_string(format::kMaxStringBytes);
  std::vector<std::string> parts;
  if (m.null_names) parts.push_back(Count(m.null_names, "NULL name", "NULL names"));
  if (m.names_cut) parts.push_back(Count(m.names_cut, "name cut at " + max + " bytes", "names cut at " + max + " bytes"));
  if (m.bad_attributes) {
    parts.push_back(Count(m.bad_attributes, "call with bad event attributes or string handle",
                          "calls with bad event attributes or string handles"));
  }
  if (m.other) parts.push_back(Count(m.other, "misuse of an unknown kind", "misuses of an unknown kind"));
  if (m.undefined_names) parts.push_back(Count(m.undefined_names, "undefined name id", "undefined name ids"));
  if (m.undefined_domains) parts.push_back(Count(m.undefined_domains, "undefined domain id", "undefined domain ids"));
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out;
}

std::string JoinCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    if (!NeedsQuoting(a)) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

Report Analyze(const Trace& trace, const ReportOptions& options) {
  Report r;
  r.trainprof_version = TrainprofVersion();
  r.format_version = format::kFormatVersion;
  r.options = options;
  r.files = trace.files;
  for (const FileStatus& f : trace.files) {
    if (f.usable) ++r.usable_files;
    if (f.damaged()) {
      ++r.damaged_files;
      r.warnings.push_back(f.path + ": " + DescribeDamage(f));
    }
  }

  const StringPool& strings = trace.strings;
  const size_t n = trace.processes.size();
  std::vector<NvtxProcessData> nvtx(n);
  std::vector<uint64_t> walls(n);
  for (size_t i = 0; i < n; ++i) {
    nvtx[i] = CollectNvtx(trace.processes[i]);
    walls[i] = RecordedTime(trace.processes[i]);
  }
  for (const RangeStats& s : MergedRangeTable(nvtx, walls, strings)) r.nvtx_ranges.push_back(ToRow(s, strings));
  r.nvtx_ranges_omitted = CutToTop(&r.nvtx_ranges, options.top);
  for (const MarkCount& m : MergedMarks(nvtx, strings)) {
    r.nvtx_marks.push_back({MarkDisplayName(m, strings), std::string(strings.Get(m.domain)), m.count});
  }
  r.nvtx_marks_omitted = CutToTop(&r.nvtx_marks, options.top);

  std::vector<const Process*> all;
  for (const Process& p : trace.processes) {
    all.push_back(&p);
    for (const TraceImage& img : p.images) r.has_cuda = r.has_cuda || img.cuda.any();
  }
  if (r.has_cuda) r.cuda = BuildCudaTables(all, strings, options.full_names, options.top, /*merged=*/true);

  std::set<std::string> hosts;
  uint64_t first_start = UINT64_MAX, last_end = 0;
  for (const Process& p : trace.processes) {
    first_start = std::min(first_start, p.start_realtime_ns);
    last_end = std::max(last_end, p.start_realtime_ns + p.wall_ns);
    hosts.insert(p.host);
  }
  r.hosts = hosts.size();
  r.start_realtime_ns = n > 0 ? first_start : 0;
  r.span_ns = n > 0 && last_end > first_start ? last_end - first_start : 0;

  uint64_t unbalanced_total = 0;
  size_t unbalanced_processes = 0;
  std::vector<std::string> notes;
  for (size_t i = 0; i < n; ++i) {
    const Process& p = trace.processes[i];
    ProcessRow row;
    row.pid = p.pid;
    row.ppid = p.ppid;
    row.parent = p.parent;
    row.depth = p.depth;
    row.host = p.host;
    row.rank = p.rank;
    row.local_rank = p.local_rank;
    row.world_size = p.world_size;
    row.role = p.role;
    row.command = JoinCommand(p.last().argv);
    row.executable = p.last().executable;
    if (row.command.empty()) row.command = row.executable;
    for (const TraceImage& img : p.images) row.files.push_back(trace.files[img.file].path);
    row.start_realtime_ns = p.start_realtime_ns;
    row.start_ns = p.start_ns;
    row.end_ns = p.end_ns;
    row.wall_ns = p.wall_ns;
    row.capture_limited = CaptureLimited(p);
    row.python_shim_off = PythonShimOff(p);
    row.offset_ns = p.start_realtime_ns - r.start_realtime_ns;
    row.exit_kind = ExitKindName(p.exit.kind);
    if (p.exit.kind != EndKind::kNone) row.exit_code = p.exit.code;
    row.exit_text = DescribeExit(p.exit);
    row.exit_source = SourceName(p.exit.source);
    row.events = p.records;
    row.unbalanced = nvtx[i].unbalanced;
    row.dropped = p.dropped;
    row.truncated = p.truncated;
    row.nvtx_misuse = MisuseOf(p);
    r.nvtx_misuse += row.nvtx_misuse;
    std::map<uint32_t, size_t> thread_row;
    for (const TraceImage& img : p.images) {
      for (const ThreadInfo& t : img.threads) {
        auto [it, inserted] = thread_row.try_emplace(t.tid, row.threads.size());
        if (inserted) row.threads.push_back({t.tid, "", 0});
        ThreadRow& tr = row.threads[it->second];
        tr.events += t.events;
        if (t.name != 0) tr.name = std::string(strings.Get(t.name));
      }
    }
    for (const RangeStats& s : RangeTable(&nvtx[i], walls[i], strings)) row.nvtx_ranges.push_back(ToRow(s, strings));
    row.nvtx_ranges_omitted = CutToTop(&row.nvtx_ranges, options.top);

    if (row.unbalanced > 0) {
      unbalanced_total += row.unbalanced;
      ++unbalanced_processes;
    }
    const std::string who = "pid " + std::to_string(p.pid) + (p.host.empty() || r.hosts < 2 ? "" : " on " + p.host);
    if (p.exit.kind == EndKind::kNone) notes.push_back(who + ": no exit record (killed?)");
    if (p.dropped > 0) {
      notes.push_back(who + ": " + Count(p.dropped, "record", "records") + " dropped (not in the trace)");
    }
    if (row.nvtx_misuse.total() > 0) notes.push_back(who + ": NVTX misuse: " + DescribeMisuse(row.nvtx_misuse));
    if (std::string capture = DescribeCapture(p, row.offset_ns); !capture.empty()) notes.push_back(who + ": " + capture);
    if (!row.python_shim_off.empty()) notes.push_back(who + ": " + DescribePythonShimOff(row.python_shim_off));
    for (const TraceImage& img : p.images) {
      if ((img.flags & format::kFlagRecordingFailed) == 0) continue;
      notes.push_back(who + ": recording stopped early (no space or I/O error): " + trace.files[img.file].path +
                      " holds what was recorded until then");
    }
    row.gpu = GpuTracingOf(p, strings);
    if (row.gpu.any) row.cuda = BuildCudaTables({&p}, strings, options.full_names, options.top, /*merged=*/false);
    for (std::string& note : GpuNotes(row.gpu, p)) notes.push_back(who + ": " + note);
    r.processes.push_back(std::move(row));
  }
  if (unbalanced_total > 0) {
    r.warnings.push_back(std::to_string(unbalanced_total) + " unbalanced NVTX range" + (unbalanced_total == 1 ? "" : "s") +
                         " in " + std::to_string(unbalanced_processes) + " process" +
                         (unbalanced_processes == 1 ? "" : "es") +
                         " (pop without push, end without start, or open at the end of the trace): not in the durations");
  }
  r.warnings.insert(r.warnings.end(), notes.begin(), notes.end());
  r.bottleneck = AnalyzeBottleneck(trace);
  return r;
}

}  // namespace trainprof::collector
