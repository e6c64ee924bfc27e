#include "collector/report/report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <map>
#include <set>
#include <span>
#include <system_error>

#include "collector/analysis/capture_note.h"
#include "collector/base/add_fields.h"
#include "collector/stats/nvtx_stats.h"
#include "collector/read/cuda_chunk_index.h"
#include "collector/read/process_tree.h"
#include "collector/analysis/python_shim_note.h"
#include "collector/analysis/sampling_note.h"
#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
#include "collector/report/warnings.h"
#include "collector/report/report_gpu_overlap.h"
#include "collector/report/callsite_tables.h"
#include "collector/report/function_tables.h"
#include "collector/report/operator_phase_table.h"
#include "collector/report/rank_tables.h"
#include "collector/report/gpu_idle_launch_tables.h"
#include "trainprof/trace_format.h"

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
  row.time = s.time;
  row.percent = s.percent;
  row.unbalanced = s.unbalanced;
  row.names = s.names;
  return row;
}

// Gives every range table of the report the names its entries use.
void AttachNames(Report* r, const std::shared_ptr<const StringPool>& names) {
  if (r->nvtx_ranges.data()) r->nvtx_ranges.data()->strings = names;
  for (ProcessRow& p : r->processes) {
    if (p.nvtx_ranges.data()) p.nvtx_ranges.data()->strings = names;
  }
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

const char* RecordedName(Process::Recorded r) {
  switch (r) {
    case Process::Recorded::kNotRecorded: return "no";
    case Process::Recorded::kExecNotRecorded: return "until_exec";
    default: return "yes";
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
        case format::MisuseKind::kTooManyDomains: ++m.domains_over_limit; break;
        default: ++m.other; break;
      }
    }
  }
  return m;
}

std::string Count(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Losses of one process (`index` in the report, `who` its name in warnings): the catalogue's
// per-process entries (model/losses.def), in any order (LossLog orders the lines).
void AddProcessLosses(LossLog* log, size_t index, const std::string& who, const Process& p, const ProcessRow& row,
                      const Trace& trace) {
  auto add = [&](Loss kind, uint64_t n, std::string detail = {}) { log->Add(kind, n, index, who, std::move(detail)); };
  // A Kineto trace records no exit: not a loss (the profiler stopped, the process went on).
  add(Loss::no_exit_record, p.exit.kind == EndKind::kNone && p.first().source != ImageSource::kKineto ? 1 : 0);
  add(Loss::records_dropped, p.dropped);
  uint64_t python_missed = 0;  // samples with Python frames the sampler could not read
  uint64_t samples_dropped = 0;
  uint64_t stacks_skipped = 0;
  uint64_t stacks_cut = 0;  // samples whose counted frames were cut at the library's limit
  for (const TraceImage& img : p.images) {
    samples_dropped += img.samples_dropped;
    stacks_skipped += img.stacks_skipped;
    const std::vector<Stack>& stacks = img.stacks.stacks;
    std::vector<bool> cut(stacks.size());  // by index in stacks: each stack looked at once
    for (size_t i = 0; i < stacks.size(); ++i) cut[i] = stacks[i].SampleCut();
    for (const Sample& s : img.stacks.samples) {
      python_missed += s.python_missed > 0 ? 1 : 0;
      const Stack* st = s.stack != 0 ? img.stacks.Find(s.stack) : nullptr;
      stacks_cut += st != nullptr && cut[static_cast<size_t>(st - stacks.data())] ? 1 : 0;
    }
  }
  add(Loss::threads_not_sampled, ThreadsNotSampled(p), DescribeThreadsNotSampled(p));
  add(Loss::samples_blocked_cpu_ms, BlockedCpuMs(p));
  add(Loss::samples_python_missed, python_missed);
  add(Loss::samples_stacks_cut, stacks_cut);
  add(Loss::samples_dropped, samples_dropped);
  add(Loss::stacks_skipped, stacks_skipped);
  const NvtxMisuse& m = row.nvtx_misuse;
  add(Loss::nvtx_null_names, m.null_names);
  add(Loss::nvtx_names_cut, m.names_cut);
  add(Loss::nvtx_bad_attributes, m.bad_attributes);
  add(Loss::nvtx_unknown_misuse, m.other);
  add(Loss::nvtx_domains_over_limit, m.domains_over_limit);
  add(Loss::nvtx_undefined_names, m.undefined_names);
  add(Loss::nvtx_undefined_domains, m.undefined_domains);
  if (std::string capture = DescribeCapture(p, row.offset_ns); !capture.empty()) add(Loss::capture_limited, 1, capture);
  if (!row.python_shim_off.empty()) add(Loss::python_shim_off, 1, DescribePythonShimOff(row.python_shim_off));
  for (const TraceImage& img : p.images) {  // once per process: the first image that names it
    if (img.python_unsupported.empty()) continue;
    add(Loss::python_frames_unsupported, 1, img.python_unsupported);
    break;
  }
  for (const TraceImage& img : p.images) {
    if ((img.flags & format::kFlagRecordingFailed) != 0) add(Loss::recording_failed, 1, trace.files[img.file].path);
  }
  const GpuTracing& g = row.gpu;
  if (g.state == "unavailable") {
    add(Loss::gpu_tracing_unavailable, 1,
        (g.message.empty() ? "no reason recorded" : g.message) + " (CUPTI result " +
            std::to_string(g.cupti_result.value_or(0)) + ")");
  }
  add(Loss::gpu_records_dropped, g.records_dropped);
  add(Loss::gpu_invalid_timestamps, g.invalid_timestamps);
  std::string names;
  for (const std::string& n : g.unfinished_names) names += (names.empty() ? "" : ", ") + n;
  add(Loss::cuda_unfinished_calls, g.unfinished_calls, names);
  add(Loss::cuda_lost_exits, g.lost_exits);
  add(Loss::cuda_unmatched_exits, g.unmatched_exits);
  add(Loss::gpu_not_flushed, g.state == "on" && !g.flushed && p.exit.kind == EndKind::kNone ? 1 : 0);
  log->Count(Loss::processes_not_recorded, p.recorded == Process::Recorded::kNotRecorded ? 1 : 0);
  log->Count(Loss::execs_not_recorded, p.recorded == Process::Recorded::kExecNotRecorded ? 1 : 0);
}

bool NeedsQuoting(const std::string& s) {
  if (s.empty()) return true;
  return s.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~!") != std::string::npos;
}

}  // namespace

const char* TrainprofVersion() { return TRAINPROF_VERSION; }

size_t CudaWindowRecords(uint64_t trace_bytes) {
  const size_t automatic = trace_bytes >= kAutoWindowTraceBytes ? kAutoWindowRecords : 0;
  const char* env = std::getenv("TRAINPROF_CUDA_WINDOW_RECORDS");
  if (env == nullptr || *env == 0) return automatic;
  uint64_t v = 0;
  const char* c = env;
  for (; *c >= '0' && *c <= '9' && v <= UINT32_MAX; ++c) v = v * 10 + static_cast<uint64_t>(*c - '0');
  return *c == 0 && v <= UINT32_MAX ? static_cast<size_t>(v) : automatic;
}

namespace {

// Reads with `load` as `trainprof report` does (LoadTraceForReport); `bytes`: the sizes of the
// trainprof files among them.
template <typename Load>
Trace LoadForReport(uint64_t bytes, Load load, std::atomic<uint64_t>* files_done = nullptr) {
  const size_t per_window = CudaWindowRecords(bytes);
  const bool windowed = per_window > 0;
  ReadOptions read{.keep = KeepNvtx::kPhases, .cuda_index = windowed, .files_done = files_done};
  if (windowed) read.keep_cuda = KeepCuda::kStackedCalls;
  Trace trace = load(read);
  if (windowed && !EveryCudaImageIndexed(trace)) {
    // One window then: a trainprof file's records are read again, kept (a Kineto file's are).
    bool dropped = false;
    for (const Process& p : trace.processes) {
      for (const TraceImage& img : p.images) dropped = dropped || (img.source == ImageSource::kTrainprof && img.cuda.any());
    }
    if (dropped) {
      read.keep_cuda = KeepCuda::kAll;
      if (files_done != nullptr) files_done->store(0);
      trace = load(read);
    }
  }
  trace.cuda_window_records = per_window;
  return trace;
}

// Whether `head` starts a trainprof trace file (format::kFileMagic).
bool TrainprofMagic(std::span<const uint8_t> head) {
  return head.size() >= sizeof format::kFileMagic && std::memcmp(head.data(), format::kFileMagic, sizeof format::kFileMagic) == 0;
}

}  // namespace

Trace LoadTraceForReport(const std::vector<std::string>& files, std::atomic<uint64_t>* files_done) {
  uint64_t bytes = 0;  // of the trainprof files: a Kineto file gets no windows
  for (const std::string& f : files) {
    const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) continue;  // the read says why
    struct stat sb {};
    uint8_t head[sizeof format::kFileMagic];
    if (::fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && ::pread(fd, head, sizeof head, 0) == sizeof head &&
        TrainprofMagic(head)) {
      bytes += static_cast<uint64_t>(sb.st_size);
    }
    ::close(fd);
  }
  return LoadForReport(bytes, [&](const ReadOptions& o) { return LoadTrace(files, o); }, files_done);
}

Trace LoadTraceBytesForReport(const std::vector<TraceBytes>& files) {
  uint64_t bytes = 0;
  for (const TraceBytes& f : files) bytes += TrainprofMagic(f.bytes) ? f.bytes.size() : 0;
  return LoadForReport(bytes, [&](const ReadOptions& o) { return LoadTraceBytes(files, o); });
}

bool ReadsCudaWindows(const Trace& trace) {
  if (trace.cuda_window_records == 0 || !EveryCudaImageIndexed(trace)) return false;
  for (const Process& p : trace.processes) {
    for (const TraceImage& img : p.images) {
      if (img.cuda.any()) return true;
    }
  }
  return false;
}

RangeRow RangeRows::operator[](size_t i) const {
  const RangeEntry& e = data_->entries[order_[i]];
  RangeRow row = ToRow(Summarize(e), *data_->strings);
  row.grouped = data_->groups != nullptr && data_->groups->NamesOf(e.key.name) > 0 && !e.key.orphan;
  return row;
}

size_t RangeRows::CutTo(size_t n) {
  if (n == 0 || order_.size() <= n) return 0;
  const size_t cut = order_.size() - n;
  order_.resize(n);
  order_.shrink_to_fit();
  return cut;
}

bool RangeRows::any_estimated() const {
  for (uint32_t i : order_) {
    const DurationSummary& d = data_->entries[i].durations;
    if (d.count() > 0 && !d.exact()) return true;
  }
  return false;
}

NvtxMisuse& NvtxMisuse::operator+=(const NvtxMisuse& o) {
  using M = NvtxMisuse;
  AddFields(this, o, &M::null_names, &M::names_cut, &M::bad_attributes, &M::other, &M::domains_over_limit,
            &M::undefined_names, &M::undefined_domains);
  return *this;
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

namespace {

// Windows read again (not whole()): every windowed analysis fed in one pass over the windows,
// each window of each process decoded once (on every core, ForEachCudaWindow): the device rows
// (merged, and of each process with GPU tracing), the bottleneck analysis (its collectives and GPU
// idle), the GPU overlap rows (over its steps) and the GPU idle-by-kind and kernel-launch tables,
// returned for their place in Report::tables. Needs r->processes; sets r->bottleneck.
std::vector<TableRows> OnePassOverWindows(const Trace& trace, const ReportOptions& options, const CudaWindows& windows,
                                          Report* r) {
  const size_t n = trace.processes.size();
  std::vector<const Process*> all;
  for (const Process& p : trace.processes) all.push_back(&p);
  std::vector<std::unique_ptr<DeviceWindowSweep>> own(n);  // of each process with GPU tracing
  for (size_t i = 0; i < n; ++i) {
    if (r->processes[i].gpu.any) own[i] = std::make_unique<DeviceWindowSweep>(std::vector{all[i]}, trace.strings,
                                                                             /*merged=*/false, /*whole=*/false);
  }
  // The merged rows: those of the processes' own sweeps where no device is shared (one process per
  // GPU) and every process with a device has one; else a sweep of their own.
  bool from_own = !DevicesShared(all);
  for (size_t i = 0; i < n && from_own; ++i) from_own = own[i] != nullptr || DevicesUsed(*all[i]).empty();
  std::optional<DeviceWindowSweep> merged;
  if (!from_own) merged.emplace(all, trace.strings, /*merged=*/true, /*whole=*/false);
  GpuIdleLaunchSweep idle_launch(trace);
  BottleneckSweeps bottleneck(trace);  // the steps now, the GPU parts from the windows
  GpuOverlapWindows overlap(trace, bottleneck.partial(), /*whole=*/false);
  // The reads on every core but this one's, which visits and, while it waits, reads too
  // (docs/performance.md, "Reads shared by every core").
  ForEachCudaWindow(windows, all, ReportThreads() - 1, [&](size_t k, const std::vector<const CudaWindowData*>& data) {
    const TimeWindow& w = windows.window(k);
    if (merged) merged->Add(w, data);
    for (size_t i = 0; i < n; ++i) {
      if (own[i]) own[i]->Add(w, {data[i]});
    }
    idle_launch.Add(w, data);
    bottleneck.Add(w, data);
    overlap.Add(w, data);
  });
  r->bottleneck = std::move(bottleneck).Result();
  std::vector<DeviceRow> own_rows;
  for (size_t i = 0; i < n; ++i) {
    if (!own[i]) continue;
    r->processes[i].cuda.devices = std::move(*own[i]).Rows();
    own_rows.insert(own_rows.end(), r->processes[i].cuda.devices.begin(), r->processes[i].cuda.devices.end());
  }
  r->cuda.devices = merged ? std::move(*merged).Rows() : MergedFromProcessRows(std::move(own_rows));
  std::move(overlap).AddTo(r);
  return std::move(idle_launch).Tables(options, r->has_cuda);
}

// The report; `nvtx` are the processes' NVTX summaries (consumed), `names` the pool the range
// tables use (group patterns are interned into it); the caller attaches it to the tables.
Report AnalyzeWith(const Trace& trace, const ReportOptions& options, std::vector<NvtxProcessData> nvtx,
                   StringPool* names);

}  // namespace

Report Analyze(const Trace& trace, const ReportOptions& options) {
  std::vector<NvtxProcessData> nvtx;
  for (const Process& p : trace.processes) nvtx.push_back(CollectNvtx(p));
  auto names = std::make_shared<StringPool>();
  for (size_t i = 1; i < trace.strings.size(); ++i) names->Intern(trace.strings.Get(static_cast<StringId>(i)));
  Report r = AnalyzeWith(trace, options, std::move(nvtx), names.get());
  AttachNames(&r, names);
  return r;
}

Report Analyze(Trace&& trace, const ReportOptions& options) {
  std::vector<NvtxProcessData> nvtx;
  for (Process& p : trace.processes) nvtx.push_back(TakeNvtx(&p));
  Report r = AnalyzeWith(trace, options, std::move(nvtx), &trace.strings);
  AttachNames(&r, std::make_shared<StringPool>(std::move(trace.strings)));
  return r;
}

namespace {

Report AnalyzeWith(const Trace& trace, const ReportOptions& options, std::vector<NvtxProcessData> nvtx,
                   StringPool* names) {
  Report r;
  r.trainprof_version = TrainprofVersion();
  r.format_version = format::kFormatVersion;
  r.options = options;
  r.files = trace.files;
  LossLog losses;
  for (size_t i = 0; i < trace.files.size(); ++i) {
    const FileStatus& f = trace.files[i];
    if (f.usable) ++r.usable_files;
    if (f.damaged()) ++r.damaged_files;
    losses.Add(Loss::damaged_files, f.damaged() ? 1 : 0, i, f.path, f.damaged() ? DescribeDamage(f) : "");
    losses.Count(Loss::unusable_files, f.usable ? 0 : 1);
    losses.Count(Loss::truncated_files, f.truncated ? 1 : 0);
    for (size_t k = 0; k < kLossKinds; ++k) losses.Count(static_cast<Loss>(k), f.losses[static_cast<Loss>(k)]);
  }

  // A directory with the files of several `trainprof run`s (one -o directory used twice, or by two
  // runs at once): say so, per directory (runs on several hosts are reported together on purpose).
  std::map<std::string, std::map<std::string, size_t>> runs;  // directory → run id → files
  for (const Process& p : trace.processes) {
    for (const TraceImage& img : p.images) {
      if (img.file == kNoFile || img.run_id.empty()) continue;
      const std::string& path = trace.files[img.file].path;
      size_t slash = path.rfind('/');
      ++runs[slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash)][img.run_id];
    }
  }
  for (const auto& [dir, ids] : runs) {
    if (ids.size() < 2) continue;
    std::string list;
    for (const auto& [id, files] : ids) list += (list.empty() ? "" : ", ") + id.substr(0, 8) + ": " + Count(files, "file", "files");
    losses.Add(Loss::mixed_run_directories, 1, 0, "",
               dir + " holds the trace files of " + std::to_string(ids.size()) + " runs of `trainprof run` (run ids " +
                   list + ")");
  }

  losses.Add(Loss::children_not_shown, trace.not_recorded_omitted, 0, "", std::to_string(kMaxNotRecorded));

  const StringPool& strings = trace.strings;
  const size_t n = trace.processes.size();
  std::vector<uint64_t> walls(n);
  for (size_t i = 0; i < n; ++i) walls[i] = RecordedTime(trace.processes[i]);
  // Range tables: each process's entries (its summaries, moved), names grouped by one decision
  // over every table, then the merged table (the process's own when there is one process).
  std::vector<std::shared_ptr<RangeTableData>> tables(n);
  std::vector<std::vector<RangeEntry>> entries(n);
  for (size_t i = 0; i < n; ++i) entries[i] = ProcessEntries(&nvtx[i], walls[i]);
  std::shared_ptr<const NameGroups> groups;
  if (options.group_names) {
    std::vector<const std::vector<RangeEntry>*> all_tables;
    for (const auto& e : entries) all_tables.push_back(&e);
    auto g = std::make_shared<NameGroups>(all_tables, names);
    for (auto& e : entries) g->Apply(&e, *names);
    groups = std::move(g);
  }
  // One denominator for the merged table (docs/report.md, "Time (%)"): the processes with ranges.
  for (size_t i = 0; i < n; ++i) {
    if (entries[i].empty()) continue;
    r.nvtx_ranges_wall_ns += walls[i];
    ++r.nvtx_ranges_processes;
  }
  std::shared_ptr<RangeTableData> merged;
  if (n == 1) {
    merged = std::make_shared<RangeTableData>();
    merged->entries = std::move(entries[0]);
    merged->groups = groups;
    tables[0] = merged;
  } else {
    merged = std::make_shared<RangeTableData>();
    merged->entries = MergedEntries(entries, groups.get(), r.nvtx_ranges_wall_ns);
    merged->groups = groups;
    for (size_t i = 0; i < n; ++i) {
      tables[i] = std::make_shared<RangeTableData>();
      tables[i]->entries = std::move(entries[i]);
      tables[i]->groups = groups;
    }
  }
  entries = {};
  const std::vector<uint32_t> merged_order = DisplayOrder(merged->entries, *names);
  r.nvtx_ranges = RangeRows(merged, merged_order);
  r.nvtx_ranges_omitted = r.nvtx_ranges.CutTo(options.top);
  for (const MarkCount& m : MergedMarks(nvtx, strings)) {
    r.nvtx_marks.push_back({MarkDisplayName(m, strings), std::string(strings.Get(m.domain)), m.count});
  }
  r.nvtx_marks_omitted = CutToTop(&r.nvtx_marks, options.top);

  std::vector<const Process*> all;
  for (const Process& p : trace.processes) {
    all.push_back(&p);
    for (const TraceImage& img : p.images) r.has_cuda = r.has_cuda || img.cuda.any();
  }
  // The GPU analyses read the CUDA records window by window (model/cuda_window.h): one window
  // over the records kept, unless the trace was read for windows (Trace::cuda_window_records: a
  // large trace, or TRAINPROF_CUDA_WINDOW_RECORDS), read again in one pass (the same report
  // either way).
  std::unique_ptr<const CudaWindows> windows;
  // Where a file got no chunk index, the reader kept every record (LoadTraceForReport): one window.
  if (ReadsCudaWindows(trace)) {
    windows = std::make_unique<const CudaWindows>(trace.processes, trace.cuda_window_records, ChunkIndexWindowReader(),
                                                  ChunkIndexStartCounter());
  }
  // With windows read again, the device rows are made in the one pass over them (below).
  if (r.has_cuda) r.cuda = BuildCudaTables(all, strings, options.full_names, options.top, /*merged=*/true, !windows);
  // The GPU idle-by-kind and kernel-launch tables read only the trace: with CUDA records and a
  // second thread they are made there, beside the per-process tables this thread makes next
  // (with the merged CUDA tables above, the largest parts of a CUDA report's analysis). Not
  // beside the merged tables: the two working sets together raised the peak RSS by 9%
  // (docs/performance.md). Without a thread, made below in turn.
  std::future<std::vector<TableRows>> idle_launch;
  if (r.has_cuda && !windows && ReportThreads() > 1) {
    try {
      idle_launch = std::async(std::launch::async, [&trace, &options] {
        return GpuIdleLaunchTables(trace, options, true);
      });
    } catch (const std::system_error&) {  // no thread to be had: made below
    }
  }
  r.host_ops = BuildHostOpTables(all, walls, strings, options.top);

  std::set<std::string> hosts;
  // The span on the wall clock, over the processes whose start it knows (0: a damaged header
  // with no other process of its host to place it); with none, on CLOCK_MONOTONIC.
  uint64_t first_start = UINT64_MAX, last_end = 0, mono_first = UINT64_MAX, mono_last = 0;
  for (const Process& p : trace.processes) {
    if (p.start_realtime_ns != 0) {
      first_start = std::min(first_start, p.start_realtime_ns);
      last_end = std::max(last_end, p.start_realtime_ns + p.wall_ns);
    }
    mono_first = std::min(mono_first, p.start_ns);
    mono_last = std::max(mono_last, p.start_ns + p.wall_ns);
    hosts.insert(p.host);
  }
  r.hosts = hosts.size();
  if (first_start == UINT64_MAX) {
    r.start_realtime_ns = 0;
    r.span_ns = n > 0 && mono_last > mono_first ? mono_last - mono_first : 0;
  } else {
    r.start_realtime_ns = first_start;
    r.span_ns = last_end > first_start ? last_end - first_start : 0;
  }

  uint64_t unbalanced_total = 0;
  size_t unbalanced_processes = 0;
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
    for (const TraceImage& img : p.images)
      if (img.file != kNoFile) row.files.push_back(trace.files[img.file].path);
    row.recorded = RecordedName(p.recorded);
    if (p.recorded == Process::Recorded::kExecNotRecorded) {
      const ProcessEvent* exec = nullptr;
      for (const ProcessEvent& e : p.last().process_events)
        if (e.kind == ProcessEventKind::kExec && (exec == nullptr || e.time_ns >= exec->time_ns)) exec = &e;
      if (exec != nullptr && exec->text != 0) row.unrecorded_exec = std::string(trace.strings.Get(exec->text));
    }
    row.start_realtime_ns = p.start_realtime_ns;
    row.start_ns = p.start_ns;
    row.start_known = p.start_known;
    row.end_ns = p.end_ns;
    row.wall_ns = p.wall_ns;
    row.capture_limited = CaptureLimited(p);
    row.python_shim_off = PythonShimOff(p);
    row.offset_ns = p.start_realtime_ns > r.start_realtime_ns ? p.start_realtime_ns - r.start_realtime_ns : 0;
    row.exit_kind = ExitKindName(p.exit.kind);
    row.kineto = p.first().source == ImageSource::kKineto;
    if (p.exit.kind != EndKind::kNone) row.exit_code = p.exit.code;
    row.exit_text = DescribeExit(p.exit);
    row.exit_source = SourceName(p.exit.source);
    row.events = p.records;
    row.unbalanced = nvtx[i].unbalanced;
    row.dropped = p.dropped;
    row.truncated = p.truncated;
    for (const TraceImage& img : p.images) {
      if (img.file < trace.files.size() && trace.files[img.file].damaged()) row.damaged = true;
    }
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
    // One process: its table is the merged one (same entries, same order, sorted once).
    row.nvtx_ranges = n == 1 ? RangeRows(tables[0], merged_order) : RangeRows(tables[i], DisplayOrder(tables[i]->entries, *names));
    row.nvtx_ranges_omitted = row.nvtx_ranges.CutTo(options.top);

    if (row.unbalanced > 0) {
      unbalanced_total += row.unbalanced;
      ++unbalanced_processes;
    }
    row.gpu = GpuTracingOf(p, strings);
    if (row.gpu.any) {
      row.cuda = BuildCudaTables({&p}, strings, options.full_names, options.top, /*merged=*/false, !windows);
    }
    if (r.host_ops.any()) row.host_ops = BuildHostOpTables({&p}, {walls[i]}, strings, options.top);
    const std::string who = "pid " + std::to_string(p.pid) + (p.host.empty() || r.hosts < 2 ? "" : " on " + p.host);
    AddProcessLosses(&losses, i, who, p, row, trace);
    r.processes.push_back(std::move(row));
  }
  losses.Add(Loss::unbalanced_ranges, unbalanced_total, 0, "", Count(unbalanced_processes, "process", "processes"));
  r.warnings = losses.Warnings();
  r.stats = losses.totals();
  if (windows) {
    for (TableRows& t : OnePassOverWindows(trace, options, *windows, &r)) r.tables.push_back(std::move(t));
  } else {
    for (TableRows& t : idle_launch.valid() ? idle_launch.get() : GpuIdleLaunchTables(trace, options, r.has_cuda)) {
      r.tables.push_back(std::move(t));
    }
  }
  Symbolizer symbols(trace.strings);  // one for every table of stacks: each file opened once
  AddCallSiteTable(trace, options, &symbols, &r);
  AddFunctionTables(trace, options, &symbols, &r);
  AddOperatorPhaseTable(trace, options, &r);
  if (!windows) r.bottleneck = AnalyzeBottleneck(trace);
  AddCallSiteClauses(trace, &symbols, &r.bottleneck);
  AddHostClockTable(trace, &r);
  AddRankSpreadTable(&r);
  ChooseTextRanks(trace, &r);
  for (std::string& w : symbols.Problems()) r.warnings.push_back(std::move(w));
  if (!windows) AddGpuOverlap(trace, &r);
  if (windows) {  // a file changed since it was read: what the report did not keep is missing
    for (const std::string& e : windows->Errors()) {
      r.warnings.push_back(e + " (the GPU analyses leave out its CUDA records that the report did not keep)");
    }
  }
  return r;
}

}  // namespace

}  // namespace trainprof::collector
