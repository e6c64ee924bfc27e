#include "collector/report/report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <set>
#include <span>
#include <system_error>

#include "collector/analysis/capture_note.h"
#include "collector/base/add_fields.h"
#include "collector/base/units.h"
#include "collector/stats/nvtx_stats.h"
#include "collector/read/cuda_chunk_index.h"
#include "collector/read/process_tree.h"
#include "collector/analysis/host_clocks.h"
#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
#include "collector/report/warnings.h"
#include "collector/report/file_losses.h"
#include "collector/report/process_rows.h"
#include "collector/report/range_tables.h"
#include "collector/report/report_gpu_overlap.h"
#include "collector/report/callsite_tables.h"
#include "collector/report/function_tables.h"
#include "collector/report/operator_phase_table.h"
#include "collector/report/rank_tables.h"
#include "collector/report/run_places.h"
#include "collector/report/gpu_idle_launch_tables.h"
#include "collector/summary/gpu_ops.h"
#include "collector/summary/summarize.h"
#include "collector/summary/summary_file.h"
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

namespace {

// How a process's warnings name it: "pid 123", with " on HOST" when the run has several hosts.
std::string WarningSubject(const ProcessInfo& info, size_t hosts) {
  return "pid " + std::to_string(info.pid) + (info.host.empty() || hosts < 2 ? "" : " on " + info.host);
}

// TRAINPROF_SUMMARY_ROUNDTRIP=1: each summary written as a summary file's bytes and read back before
// the merge, which must give the same report (the golden test golden_summaries checks it).
bool SummariesThroughFiles() {
  const char* env = std::getenv("TRAINPROF_SUMMARY_ROUNDTRIP");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

// The parts of each process's summary made from its CUDA records after the rest: its device uses
// (stats/gpu_devices.h), its GPU ops (summary/gpu_ops.h) and what they give over its steps
// (analysis/steps_gpu.h).
struct PerProcessGpu {
  std::vector<std::vector<DeviceUse>> devices;
  std::vector<GpuOpsSummary> ops;
  std::vector<StepsGpu> steps;
  // Each process's steps as split for the sweeps, kept for the bottleneck analysis
  // (RunView::splits) rather than split again from the phases: about 170 bytes a step, beside the
  // phases' ~240 the report holds anyway, against 12% of the time (256 ranks × 200 steps,
  // windowed: 0.43 s and 90 MiB kept, 0.49 s and 85 MiB split again).
  std::vector<StepSplit> splits;
};

// Windows read again (not whole()): every windowed analysis fed in one pass over the windows,
// each window of each process decoded once (on every core, ForEachCudaWindow): each process's GPU
// parts, returned for its summary. Needs run's facts and phases; `shared`: per process, the devices
// it keeps its activity on (else only its span).
PerProcessGpu OnePassOverWindows(const Trace& trace, const RunView& run, const CudaWindows& windows,
                                 const std::vector<std::set<uint32_t>>& shared) {
  const size_t n = trace.processes.size();
  std::vector<const Process*> all;
  for (const Process& p : trace.processes) all.push_back(&p);
  // Each process's own, its activity kept on the devices in `shared`.
  std::vector<std::vector<std::set<uint32_t>>> kept;
  for (size_t i = 0; i < n; ++i) kept.push_back({shared[i]});
  std::vector<DeviceWindowSweep> devices;
  devices.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    devices.emplace_back(std::vector{all[i]}, trace.strings, /*merged=*/false, /*whole=*/false, &kept[i]);
  }
  GpuOpsSweep gpu_ops(trace);
  StepsGpuSweep steps_gpu(trace, run, /*whole=*/false);
  // The reads on every core but this one's, which visits and, while it waits, reads too
  // (docs/performance.md, "Reads shared by every core").
  ForEachCudaWindow(windows, all, ReportThreads() - 1, [&](size_t k, const std::vector<const CudaWindowData*>& data) {
    const TimeWindow& w = windows.window(k);
    for (size_t i = 0; i < n; ++i) devices[i].Add(w, {data[i]});
    gpu_ops.Add(w, data);
    steps_gpu.Add(w, data);
  });
  PerProcessGpu out;
  for (DeviceWindowSweep& d : devices) out.devices.push_back(std::move(d).Uses());
  out.ops = std::move(gpu_ops).Summaries();
  out.steps = std::move(steps_gpu).Results(&out.splits);
  return out;
}

// What the reader summed per process that its summary takes over: copied from a const trace,
// moved out of one the report consumes.
struct ReadSums {
  NvtxProcessData nvtx;
  std::vector<CudaDigest> cuda;
};

// The summaries of `trace`'s processes; `sums`: each process's (consumed); `names`: the pool
// their names are ids of (the trace's, or a copy with the same ids), into which a summary read
// back (TRAINPROF_SUMMARY_ROUNDTRIP) interns its names.
RunSummaries SummarizeRun(const Trace& trace, std::vector<ReadSums> sums, StringPool* names, bool all_device_activity);

}  // namespace

RunSummaries SummarizeForReport(Trace&& trace, bool all_device_activity) {
  std::vector<ReadSums> sums;
  for (Process& p : trace.processes) sums.push_back({TakeNvtx(&p), TakeCudaDigests(&p)});
  // The names stay where they are until the summaries are made (the trace reads them), then move.
  RunSummaries run = SummarizeRun(trace, std::move(sums), &trace.strings, all_device_activity);
  *run.names = std::move(trace.strings);
  return run;
}

Report Analyze(const Trace& trace, const ReportOptions& options) {
  std::vector<ReadSums> sums;
  for (const Process& p : trace.processes) sums.push_back({CollectNvtx(p), CollectCudaDigests(p)});
  auto names = std::make_shared<StringPool>();
  for (size_t i = 1; i < trace.strings.size(); ++i) names->Intern(trace.strings.Get(static_cast<StringId>(i)));
  RunSummaries run = SummarizeRun(trace, std::move(sums), names.get(), false);
  run.names = std::move(names);
  return MergeSummaries(std::move(run), options);
}

Report Analyze(Trace&& trace, const ReportOptions& options) {
  return MergeSummaries(SummarizeForReport(std::move(trace)), options);
}

void AddSummaryFile(RunSummaries* run, SummaryFile file, const std::string& path) {
  run->sources.resize(run->processes.size());
  for (FileStatus& f : file.files) run->files.push_back(std::move(f));
  run->not_recorded_omitted += file.not_recorded_omitted;
  for (ProcessSummary& s : file.processes) {
    run->processes.push_back(std::move(s));
    run->sources.push_back(path);
  }
  run->splits.clear();  // not made for these: the analysis splits every process's steps
}

namespace {

RunSummaries SummarizeRun(const Trace& trace, std::vector<ReadSums> sums, StringPool* names_ptr,
                          bool all_device_activity) {
  RunSummaries run;
  run.files = trace.files;
  run.not_recorded_omitted = trace.not_recorded_omitted;
  const size_t n = trace.processes.size();
  const StringPool& names = *names_ptr;
  bool has_cuda = false;  // as the processes' facts say (ProcessFacts::cuda)
  for (const Process& p : trace.processes) {
    for (const TraceImage& img : p.images) has_cuda = has_cuda || img.cuda.any();
  }
  std::vector<const Process*> all;  // their CUDA records: the GPU parts
  for (const Process& p : trace.processes) all.push_back(&p);
  // The GPU parts read the CUDA records window by window (model/cuda_window.h): one window over
  // the records kept, unless the trace was read for windows (Trace::cuda_window_records: a large
  // trace, or TRAINPROF_CUDA_WINDOW_RECORDS), read again in one pass (the same summaries either way).
  std::unique_ptr<const CudaWindows> windows;
  // Where a file got no chunk index, the reader kept every record (LoadTraceForReport): one window.
  if (ReadsCudaWindows(trace)) {
    windows = std::make_unique<const CudaWindows>(trace.processes, trace.cuda_window_records, ChunkIndexWindowReader(),
                                                  ChunkIndexStartCounter());
  }
  // A process keeps its activity on the devices it shares with another process of this trace
  // (SharedDevices), or on all of them for a summary file merged later with others.
  // (DevicesUsed reads the reader's notes: the records themselves are not kept when windowed.)
  std::vector<std::set<uint32_t>> shared = SharedDevices(all);
  if (all_device_activity) {
    for (size_t i = 0; i < n; ++i) shared[i] = DevicesUsed(trace.processes[i]);
  }
  // The processes' device uses and GPU ops (stats/gpu_devices.h, summary/gpu_ops.h) read only the
  // trace: with CUDA records and a second thread they are made there, beside the rest of the
  // summaries this thread makes next. With windows, in the one pass over them after.
  auto summarize_gpu = [&trace, &shared] {
    PerProcessGpu out;
    for (size_t i = 0; i < trace.processes.size(); ++i) {
      out.devices.push_back(DeviceUsesOf(trace.processes[i], trace.strings, &shared[i]));
      out.ops.push_back(SummarizeGpuOps(trace.processes[i], trace.strings));
    }
    return out;
  };
  std::future<PerProcessGpu> gpu_made;
  if (has_cuda && !windows && ReportThreads() > 1) {
    try {
      gpu_made = std::async(std::launch::async, summarize_gpu);
    } catch (const std::system_error&) {  // no thread to be had: made below
    }
  }
  // The map step: each process's summary (summary/).
  run.processes.reserve(n);
  Symbolizer symbols(trace.strings);  // one for every process's stacks: each file opened once
  for (size_t i = 0; i < n; ++i) {
    run.processes.push_back(SummarizeProcess(trace, i, std::move(sums[i].nvtx), std::move(sums[i].cuda), &symbols));
  }
  sums = {};
  // What the GPU sweeps over the steps read of the processes: their facts (with the tree, which
  // the merge sets again) and phases.
  RunView view;
  for (size_t i = 0; i < n; ++i) {
    run.processes[i].facts.children = trace.processes[i].children;
    view.facts.push_back(&run.processes[i].facts);
    view.phases.push_back(&run.processes[i].phases);
  }
  view.strings = &names;
  PerProcessGpu gpu;
  if (windows) {
    gpu = OnePassOverWindows(trace, view, *windows, shared);
  } else {
    gpu = gpu_made.valid() ? gpu_made.get() : summarize_gpu();
    gpu.steps = SweepStepsGpu(trace, view, &gpu.splits);
  }
  for (size_t i = 0; i < n; ++i) {
    ProcessSummary& s = run.processes[i];
    s.facts.children.clear();  // the merge's
    s.devices = std::move(gpu.devices[i]);
    s.gpu_ops = std::move(gpu.ops[i]);
    s.steps_gpu = std::move(gpu.steps[i]);
    if (SummariesThroughFiles()) s = DecodeSummary(EncodeSummary(s, names), names_ptr);
  }
  run.splits = std::move(gpu.splits);
  if (windows) {  // a file changed since it was read: what the report did not keep is missing
    for (const std::string& e : windows->Errors()) {
      run.read_warnings.push_back(e + " (the GPU analyses leave out its CUDA records that the report did not keep)");
    }
  }
  return run;
}

// A training process whose trace file is damaged (cut, or records lost) has steps and a verdict
// of what could be read only: said right after its steps' sentence, with the file
// (TrainingProcess::damaged_files), so no verdict reads as the whole run's when it is not.
void AddDamageCaveats(const std::vector<FileStatus>& files, const std::vector<ProcessSummary>& summaries,
                      Bottleneck* b) {
  for (TrainingProcess& t : b->processes) {
    if (t.process < 0 || static_cast<size_t>(t.process) >= summaries.size()) continue;
    for (const std::string& path : summaries[static_cast<size_t>(t.process)].info.files) {
      auto f = std::find_if(files.begin(), files.end(), [&](const FileStatus& s) { return s.path == path; });
      if (f == files.end() || !f->damaged()) continue;
      t.damaged_files.push_back(path);
      const std::string sentence =
          f->truncated ? "Its trace file " + path + " is cut (" + DescribeDamage(*f) +
                             "): the steps above and the verdict are of what was recorded before the cut; the steps "
                             "after it are not in them."
                       : "Its trace file " + path + " is damaged (" + DescribeDamage(*f) +
                             "): the steps above and the verdict count only the records read from it; steps in what "
                             "was lost are not in them.";
      t.text.insert(t.text.begin() + (t.text.empty() ? 0 : 1), sentence);
    }
  }
}

}  // namespace

Report MergeSummaries(RunSummaries in, const ReportOptions& options) {
  StringPool* names = in.names.get();
  const StringPool& strings = *names;
  // The processes in their places: linked into one tree, on one clock, cut to --rank.
  RunPlaces placed = PlaceRun(&in, options.ranks);
  std::vector<ProcessSummary>& summaries = placed.summaries;  // in report order
  const std::vector<StepSplit>& splits = placed.splits;
  const bool have_splits = !splits.empty();
  const std::vector<FileStatus>& files = placed.files;
  HostClockEstimate& clocks = placed.clocks;
  const std::vector<std::string>& twice = placed.warnings;
  const size_t n = summaries.size();

  Report r;
  r.trainprof_version = TrainprofVersion();
  r.format_version = format::kFormatVersion;
  r.options = options;
  r.files = files;
  LossLog losses;
  std::vector<std::pair<std::string, std::string>> file_runs;
  for (const ProcessSummary& s : summaries) {
    for (size_t f = 0; f < s.info.files.size() && f < s.place.run_ids.size(); ++f) file_runs.push_back({s.info.files[f], s.place.run_ids[f]});
  }
  AddFileLosses(files, file_runs, in.not_recorded_omitted, &losses, &r);

  // The view the bottleneck analyses read.
  RunView run;
  for (size_t i = 0; i < n; ++i) {
    run.facts.push_back(&summaries[i].facts);
    run.phases.push_back(&summaries[i].phases);
    run.gpu.push_back(&summaries[i].steps_gpu);
    if (have_splits) run.splits.push_back(&splits[i]);
  }
  run.strings = names;
  run.host_clocks = &clocks.clocks;
  run.clock_reference = &clocks.reference;
  std::vector<uint64_t> walls(n);
  for (size_t i = 0; i < n; ++i) walls[i] = summaries[i].recorded_ns;
  std::vector<RangeRows> own_ranges = BuildRangeTables(options, &summaries, names, &r);

  for (const ProcessSummary& s : summaries) r.has_cuda = r.has_cuda || s.facts.cuda;
  std::vector<const CudaDigest*> digests;  // every image's, in process and image order
  for (const ProcessSummary& s : summaries) {
    for (const CudaDigest& d : s.cuda) digests.push_back(&d);
  }
  if (r.has_cuda) {
    r.cuda = BuildCudaTables(digests, {}, strings, options.full_names, options.top, /*merged=*/true, /*devices=*/false);
  }
  std::vector<const HostOpTotals*> host_ops;
  for (const ProcessSummary& s : summaries) host_ops.push_back(&s.host_ops);
  r.host_ops = BuildHostOpTables(host_ops, walls, strings, options.top);

  SetRunSpan(summaries, &r);

  uint64_t unbalanced_total = 0;
  size_t unbalanced_processes = 0;
  std::vector<ProcessDeviceUses> device_uses;
  for (size_t i = 0; i < n; ++i) {
    const ProcessSummary& s = summaries[i];
    ProcessRow row = ProcessRowOf(s.info, placed.parent[i], placed.depth[i], r);
    r.nvtx_misuse += row.nvtx_misuse;
    row.nvtx_ranges = std::move(own_ranges[i]);
    row.nvtx_ranges_omitted = row.nvtx_ranges.CutTo(options.top);

    if (row.unbalanced > 0) {
      unbalanced_total += row.unbalanced;
      ++unbalanced_processes;
    }
    device_uses.push_back({s.info.host, s.info.pid, {s.info.start_ns, s.info.end_ns}, &s.devices});
    if (row.gpu.any) {
      std::vector<const CudaDigest*> own;
      for (const CudaDigest& d : s.cuda) own.push_back(&d);
      row.cuda = BuildCudaTables(own, {}, strings, options.full_names, options.top, /*merged=*/false, /*devices=*/false);
      row.cuda.devices = ProcessDeviceRows(device_uses.back());
    }
    if (r.host_ops.any()) row.host_ops = BuildHostOpTables({&s.host_ops}, {walls[i]}, strings, options.top);
    const std::string who = WarningSubject(s.info, r.hosts);
    AddProcessLosses(&losses, i, who, s, row.offset_ns);
    r.processes.push_back(std::move(row));
  }
  losses.Add(Loss::unbalanced_ranges, unbalanced_total, 0, "", Plural(unbalanced_processes, "process", "processes"));
  r.cuda.devices = MergedDeviceRows(device_uses);
  for (TableRows& t : GpuIdleLaunchTables(summaries, digests, strings, options, r.has_cuda)) r.tables.push_back(std::move(t));
  // Only where the process recorded CUDA calls: without any (CUDA API tracing off, a torch.profiler
  // trace of GPU activity alone) no op's call could be there.
  for (size_t i = 0; i < n; ++i) {
    const ProcessInfo& info = summaries[i].info;
    const UnlaunchedOps& unlaunched = summaries[i].gpu_ops.unlaunched;
    if (info.gpu.calls == 0 || unlaunched.ops == 0) continue;
    const std::string who = WarningSubject(info, r.hosts);
    losses.Add(Loss::gpu_ops_without_launch, unlaunched.ops, i, who,
               FormatDuration(static_cast<double>(unlaunched.ns)) + " of GPU time");
  }
  r.warnings = losses.Warnings();
  r.warnings.insert(r.warnings.begin(), twice.begin(), twice.end());
  r.stats = losses.totals();
  AddCallSiteTable(summaries, options, &r);
  AddFunctionTables(summaries, options, &r);
  AddOperatorPhaseTable(summaries, *names, options, &r);
  r.bottleneck = AnalyzeBottleneck(run);
  AddCallSiteClauses(summaries, &r.bottleneck);
  AddDamageCaveats(files, summaries, &r.bottleneck);
  AddHostClockTable(clocks.clocks, &r);
  AddRankSpreadTable(&r);
  ChooseTextRanks(clocks.clocks, &r);
  std::vector<Symbolizer::Problem> problems;
  for (const ProcessSummary& s : summaries) problems.insert(problems.end(), s.symbol_problems.begin(), s.symbol_problems.end());
  for (std::string& w : Symbolizer::ProblemLines(std::move(problems))) r.warnings.push_back(std::move(w));
  AddGpuOverlap(summaries, &r);
  for (std::string& w : in.read_warnings) r.warnings.push_back(std::move(w));
  AttachNames(&r, in.names);
  return r;
}

}  // namespace trainprof::collector
