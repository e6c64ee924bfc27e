#include "collector/report/report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <span>
#include <system_error>

#include "collector/analysis/capture_note.h"
#include "collector/base/add_fields.h"
#include "collector/base/units.h"
#include "collector/stats/nvtx_stats.h"
#include "collector/read/cuda_chunk_index.h"
#include "collector/read/process_tree.h"
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
#include "collector/report/gpu_idle_launch_tables.h"
#include "collector/summary/gpu_ops.h"
#include "collector/summary/summarize.h"
#include "collector/summary/summary_codec.h"
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
// parts, returned for its summary. Needs run's facts and phases.
PerProcessGpu OnePassOverWindows(const Trace& trace, const RunView& run, const CudaWindows& windows) {
  const size_t n = trace.processes.size();
  std::vector<const Process*> all;
  for (const Process& p : trace.processes) all.push_back(&p);
  // Each process's own, its activity kept on the devices it shares (SharedDevices): the other
  // processes are in this report.
  const std::vector<std::set<uint32_t>> shared = SharedDevices(all);
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

// The report; `sums`: each process's (consumed), `names` the pool the range
// tables use (group patterns are interned into it); the caller attaches it to the tables.
Report AnalyzeWith(const Trace& trace, const ReportOptions& options, std::vector<ReadSums> sums,
                   StringPool* names);

}  // namespace

Report Analyze(const Trace& trace, const ReportOptions& options) {
  std::vector<ReadSums> sums;
  for (const Process& p : trace.processes) sums.push_back({CollectNvtx(p), CollectCudaDigests(p)});
  auto names = std::make_shared<StringPool>();
  for (size_t i = 1; i < trace.strings.size(); ++i) names->Intern(trace.strings.Get(static_cast<StringId>(i)));
  Report r = AnalyzeWith(trace, options, std::move(sums), names.get());
  AttachNames(&r, names);
  return r;
}

Report Analyze(Trace&& trace, const ReportOptions& options) {
  std::vector<ReadSums> sums;
  for (Process& p : trace.processes) sums.push_back({TakeNvtx(&p), TakeCudaDigests(&p)});
  Report r = AnalyzeWith(trace, options, std::move(sums), &trace.strings);
  AttachNames(&r, std::make_shared<StringPool>(std::move(trace.strings)));
  return r;
}

namespace {

Report AnalyzeWith(const Trace& trace, const ReportOptions& options, std::vector<ReadSums> sums,
                   StringPool* names) {
  Report r;
  r.trainprof_version = TrainprofVersion();
  r.format_version = format::kFormatVersion;
  r.options = options;
  r.files = trace.files;
  LossLog losses;
  AddFileLosses(trace, &losses, &r);

  const StringPool& strings = *names;  // the summaries' names (the trace's, or a copy with the same ids)
  const size_t n = trace.processes.size();
  // The map step: each process's summary (summary/), of which the parts below are merged.
  std::vector<ProcessSummary> summaries;
  summaries.reserve(n);
  Symbolizer symbols(trace.strings);  // one for every process's stacks: each file opened once
  for (size_t i = 0; i < n; ++i) {
    summaries.push_back(SummarizeProcess(trace, i, std::move(sums[i].nvtx), std::move(sums[i].cuda), &symbols));
  }
  sums = {};
  if (SummariesThroughFiles()) {
    for (ProcessSummary& s : summaries) s = DecodeSummary(EncodeSummary(s, *names), names);
  }
  // The merge's part of the summaries: the process tree (read/process_tree.h, made as the trace was
  // read), and the view the bottleneck analyses read.
  RunView run;
  for (size_t i = 0; i < n; ++i) {
    summaries[i].facts.children = trace.processes[i].children;
    run.facts.push_back(&summaries[i].facts);
    run.phases.push_back(&summaries[i].phases);
  }
  run.strings = names;
  run.host_clocks = &trace.host_clocks;
  run.clock_reference = &trace.clock_reference;
  std::vector<uint64_t> walls(n);
  for (size_t i = 0; i < n; ++i) walls[i] = summaries[i].recorded_ns;
  std::vector<RangeRows> own_ranges = BuildRangeTables(options, &summaries, names, &r);

  std::vector<const Process*> all;  // their CUDA records: the GPU analyses
  for (const Process& p : trace.processes) all.push_back(&p);
  for (const ProcessSummary& s : summaries) r.has_cuda = r.has_cuda || s.facts.cuda;
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
  std::vector<const CudaDigest*> digests;  // every image's, in process and image order
  for (const ProcessSummary& s : summaries) {
    for (const CudaDigest& d : s.cuda) digests.push_back(&d);
  }
  if (r.has_cuda) {
    r.cuda = BuildCudaTables(digests, {}, strings, options.full_names, options.top, /*merged=*/true, /*devices=*/false);
  }
  // The processes' device uses and GPU ops (stats/gpu_devices.h, summary/gpu_ops.h: the device,
  // GPU idle-by-kind and kernel-launch tables' parts of their summaries) read only the trace: with
  // CUDA records and a second thread they are made there, beside the per-process tables this
  // thread makes next (with the merged CUDA tables above, the largest parts of a CUDA report's
  // analysis). Not beside the merged tables: the two working sets together raised the peak RSS by
  // 9% (docs/performance.md). Without a thread, made below in turn; with windows, in the one pass
  // over them. A process's device uses keep its activity on the devices it shares (SharedDevices:
  // the other processes are in this report), elsewhere only the span a merge needs.
  auto summarize_gpu = [&trace, &all] {
    PerProcessGpu out;
    const std::vector<std::set<uint32_t>> shared = SharedDevices(all);
    for (size_t i = 0; i < trace.processes.size(); ++i) {
      out.devices.push_back(DeviceUsesOf(trace.processes[i], trace.strings, &shared[i]));
      out.ops.push_back(SummarizeGpuOps(trace.processes[i], trace.strings));
    }
    return out;
  };
  std::future<PerProcessGpu> gpu_made;
  if (r.has_cuda && !windows && ReportThreads() > 1) {
    try {
      gpu_made = std::async(std::launch::async, summarize_gpu);
    } catch (const std::system_error&) {  // no thread to be had: made below
    }
  }
  std::vector<const HostOpTotals*> host_ops;
  for (const ProcessSummary& s : summaries) host_ops.push_back(&s.host_ops);
  r.host_ops = BuildHostOpTables(host_ops, walls, strings, options.top);

  SetRunSpan(summaries, &r);

  uint64_t unbalanced_total = 0;
  size_t unbalanced_processes = 0;
  for (size_t i = 0; i < n; ++i) {
    ProcessRow row = ProcessRowOf(trace, i, summaries[i].info, r);
    r.nvtx_misuse += row.nvtx_misuse;
    row.nvtx_ranges = std::move(own_ranges[i]);
    row.nvtx_ranges_omitted = row.nvtx_ranges.CutTo(options.top);

    if (row.unbalanced > 0) {
      unbalanced_total += row.unbalanced;
      ++unbalanced_processes;
    }
    if (row.gpu.any) {
      std::vector<const CudaDigest*> own;
      for (const CudaDigest& d : summaries[i].cuda) own.push_back(&d);
      row.cuda = BuildCudaTables(own, {}, strings, options.full_names, options.top, /*merged=*/false, /*devices=*/false);
    }
    if (r.host_ops.any()) row.host_ops = BuildHostOpTables({&summaries[i].host_ops}, {walls[i]}, strings, options.top);
    const ProcessInfo& info = summaries[i].info;
    const std::string who = WarningSubject(info, r.hosts);
    AddProcessLosses(&losses, i, who, summaries[i], row.offset_ns);
    r.processes.push_back(std::move(row));
  }
  losses.Add(Loss::unbalanced_ranges, unbalanced_total, 0, "", Plural(unbalanced_processes, "process", "processes"));
  PerProcessGpu gpu;
  if (windows) {
    gpu = OnePassOverWindows(trace, run, *windows);
  } else {
    gpu = gpu_made.valid() ? gpu_made.get() : summarize_gpu();
    gpu.steps = SweepStepsGpu(trace, run, &gpu.splits);
  }
  std::vector<ProcessDeviceUses> device_uses;
  for (size_t i = 0; i < n; ++i) {
    summaries[i].devices = std::move(gpu.devices[i]);
    summaries[i].gpu_ops = std::move(gpu.ops[i]);
    summaries[i].steps_gpu = std::move(gpu.steps[i]);
    // Their summaries' other sections went through bytes above; these, made later, now.
    if (SummariesThroughFiles()) {
      ProcessSummary read = DecodeSummary(EncodeSummary(summaries[i], *names), names);
      summaries[i].devices = std::move(read.devices);
      summaries[i].gpu_ops = std::move(read.gpu_ops);
      summaries[i].steps_gpu = std::move(read.steps_gpu);
    }
    run.gpu.push_back(&summaries[i].steps_gpu);
    if (!gpu.splits.empty()) run.splits.push_back(&gpu.splits[i]);
    const ProcessInfo& info = summaries[i].info;
    device_uses.push_back({info.host, info.pid, {info.start_ns, info.end_ns}, &summaries[i].devices});
    if (r.processes[i].gpu.any) r.processes[i].cuda.devices = ProcessDeviceRows(device_uses.back());
  }
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
  r.stats = losses.totals();
  AddCallSiteTable(summaries, options, &r);
  AddFunctionTables(summaries, options, &r);
  AddOperatorPhaseTable(summaries, *names, options, &r);
  r.bottleneck = AnalyzeBottleneck(run);
  AddCallSiteClauses(summaries, &r.bottleneck);
  AddHostClockTable(trace, &r);
  AddRankSpreadTable(&r);
  ChooseTextRanks(trace, &r);
  std::vector<Symbolizer::Problem> problems;
  for (const ProcessSummary& s : summaries) problems.insert(problems.end(), s.symbol_problems.begin(), s.symbol_problems.end());
  for (std::string& w : Symbolizer::ProblemLines(std::move(problems))) r.warnings.push_back(std::move(w));
  AddGpuOverlap(summaries, &r);
  if (windows) {  // a file changed since it was read: what the report did not keep is missing
    for (const std::string& e : windows->Errors()) {
      r.warnings.push_back(e + " (the GPU analyses leave out its CUDA records that the report did not keep)");
    }
  }
  return r;
}

}  // namespace

}  // namespace trainprof::collector
