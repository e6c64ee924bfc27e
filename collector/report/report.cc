#include "collector/report/report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <set>
#include <map>
#include <span>
#include <system_error>

#include "collector/analysis/capture_note.h"
#include "collector/base/add_fields.h"
#include "collector/base/units.h"
#include "collector/stats/nvtx_stats.h"
#include "collector/read/cuda_chunk_index.h"
#include "collector/read/process_tree.h"
#include "collector/read/rank_filter.h"
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

void AddSummaryFile(RunSummaries* run, SummaryFile file) {
  for (FileStatus& f : file.files) run->files.push_back(std::move(f));
  run->not_recorded_omitted += file.not_recorded_omitted;
  for (ProcessSummary& s : file.processes) run->processes.push_back(std::move(s));
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
  std::vector<std::set<uint32_t>> shared = SharedDevices(all);
  if (all_device_activity) {
    for (size_t i = 0; i < n; ++i) {
      for (const TraceImage& img : trace.processes[i].images) {
        for (const GpuKernel& k : img.cuda.kernels) shared[i].insert(k.device);
        for (const GpuMemcpy& m : img.cuda.memcpys) shared[i].insert(m.device);
        for (const GpuMemset& m : img.cuda.memsets) shared[i].insert(m.device);
      }
    }
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

// Where the processes of `run` go in the report: parent links from their places' keys (a process's
// identity: host, boot, pid namespace, pid and start, whichever summary holds it), in tree order
// (read/process_tree.h TreeOrder) on the hosts' aligned clocks.
struct Placement {
  std::vector<size_t> order;       // run indices in report order
  std::vector<int> parent, depth;  // per report index
  std::vector<std::vector<int>> children;
};

// A child summarised apart from its parent has the exit status its own file gives, or none; its
// parent's wait saw it (`made_up`: the child its parent's file alone made up, "not recorded"). As
// read/process_tree.h takes it: where the child's file has no status (or "returned"), with the end
// where it has none.
void TakeExitSeenByParent(const ProcessInfo& made_up, ProcessSummary* child) {
  ProcessInfo& info = child->info;
  if (made_up.exit_source != "parent_wait" || (info.exit_kind != "unknown" && info.exit_kind != "returned")) return;
  const bool end_known = info.exit_kind != "unknown";
  info.exit_kind = made_up.exit_kind;
  info.exit_code = made_up.exit_code;
  info.exit_text = made_up.exit_text;
  info.exit_source = made_up.exit_source;
  std::erase_if(child->losses, [](const LossNote& n) { return n.kind == Loss::no_exit_record; });
  if (!end_known && made_up.end_ns > info.end_ns) {
    info.end_ns = child->facts.end_ns = made_up.end_ns;
    info.wall_ns = info.end_ns > info.start_ns ? info.end_ns - info.start_ns : 0;
  }
}

// Each process's parent (an index into run.processes, -1: a root): the process its place names,
// else, for a process summarised apart from its parent (one trace file at a time), the process of
// its host, boot and pid namespace whose pid is its ppid and whose lifetime holds its start (the
// rule of read/process_tree.h).
std::vector<int> ParentsOf(const std::vector<ProcessSummary>& processes) {
  const size_t n = processes.size();
  std::map<ProcessKey, int> by_key;
  std::map<std::tuple<std::string_view, std::string_view, uint64_t, int32_t>, std::vector<int>> by_pid;
  for (size_t i = 0; i < n; ++i) {
    const ProcessKey& k = processes[i].place.key;
    by_key.emplace(k, static_cast<int>(i));
    if (processes[i].info.recorded != "no") by_pid[{k.host, k.boot_id, k.pid_namespace, k.pid}].push_back(static_cast<int>(i));
  }
  std::vector<int> parents(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const ProcessSummary& s = processes[i];
    if (s.place.parent) {
      auto it = by_key.find(*s.place.parent);
      if (it != by_key.end() && it->second != static_cast<int>(i)) parents[i] = it->second;
      continue;
    }
    const ProcessKey& k = s.place.key;
    auto it = by_pid.find({k.host, k.boot_id, k.pid_namespace, s.info.ppid});
    if (it == by_pid.end() || s.info.ppid <= 0) continue;
    for (int c : it->second) {
      const ProcessInfo& p = processes[static_cast<size_t>(c)].info;
      if (c == static_cast<int>(i) || p.start_ns > s.info.start_ns || (p.end_ns != 0 && p.end_ns < s.info.start_ns)) continue;
      if (parents[i] < 0 || processes[static_cast<size_t>(parents[i])].info.start_ns < p.start_ns) parents[i] = c;
    }
  }
  return parents;
}

Placement PlaceProcesses(const RunSummaries& run, const std::vector<uint64_t>& starts, const std::vector<int>& parents) {
  const size_t n = run.processes.size();
  std::vector<TreeNode> nodes(n);
  for (size_t i = 0; i < n; ++i) {
    const ProcessSummary& s = run.processes[i];
    nodes[i] = {parents[i], s.info.start_ns, s.info.pid, starts[i], s.info.host};
  }
  const TreeOrderResult tree = TreeOrder(nodes);
  Placement out;
  std::vector<int> at(n, -1);
  for (size_t k = 0; k < tree.order.size(); ++k) at[static_cast<size_t>(tree.order[k])] = static_cast<int>(k);
  for (int i : tree.order) {
    out.order.push_back(static_cast<size_t>(i));
    out.parent.push_back(nodes[i].parent >= 0 ? at[static_cast<size_t>(nodes[i].parent)] : -1);
    out.depth.push_back(tree.depth[i]);
    std::vector<int> kids;
    for (int c : tree.children[i]) kids.push_back(at[static_cast<size_t>(c)]);
    out.children.push_back(std::move(kids));
  }
  return out;
}

// Cuts `p` to the processes whose rank is one of `ranks` (in their order; a process whose parent
// is left out becomes a root), as read/rank_filter.h KeepRanks cuts a trace.
void KeepRanksOf(const RunSummaries& run, const std::vector<int64_t>& ranks, Placement* p) {
  const std::set<int64_t> wanted(ranks.begin(), ranks.end());
  std::vector<int> new_index(p->order.size(), -1);
  Placement kept;
  for (size_t k = 0; k < p->order.size(); ++k) {
    const ProcessInfo& info = run.processes[p->order[k]].info;
    if (!info.rank || wanted.count(*info.rank) == 0) continue;
    new_index[k] = static_cast<int>(kept.order.size());
    kept.order.push_back(p->order[k]);
    kept.parent.push_back(p->parent[k]);
    kept.children.push_back(p->children[k]);
  }
  for (size_t k = 0; k < kept.order.size(); ++k) {
    int& parent = kept.parent[k];
    parent = parent >= 0 ? new_index[static_cast<size_t>(parent)] : -1;
    std::vector<int> kids;
    for (int c : kept.children[k]) {
      if (new_index[static_cast<size_t>(c)] >= 0) kids.push_back(new_index[static_cast<size_t>(c)]);
    }
    kept.children[k] = std::move(kids);
    kept.depth.push_back(parent >= 0 ? kept.depth[static_cast<size_t>(parent)] + 1 : 0);
  }
  *p = std::move(kept);
}

}  // namespace

Report MergeSummaries(RunSummaries in, const ReportOptions& options) {
  StringPool* names = in.names.get();
  const StringPool& strings = *names;
  // A process summarised twice (a trace and its summary file, or two summary files of one trace):
  // the first is kept, and the report says so.
  std::vector<std::string> twice;
  {
    std::set<ProcessKey> seen;
    std::vector<ProcessSummary> once;
    std::vector<StepSplit> once_splits;
    const bool splits = in.splits.size() == in.processes.size();
    for (size_t i = 0; i < in.processes.size(); ++i) {
      if (!seen.insert(in.processes[i].place.key).second) {
        const ProcessInfo& info = in.processes[i].info;
        twice.push_back("pid " + std::to_string(info.pid) + (info.host.empty() ? "" : " on " + info.host) +
                        " is in two of the inputs (a trace and its summary, or one trace summarised twice): the second is left out");
        continue;
      }
      once.push_back(std::move(in.processes[i]));
      if (splits) once_splits.push_back(std::move(in.splits[i]));
    }
    in.processes = std::move(once);
    in.splits = splits ? std::move(once_splits) : std::vector<StepSplit>{};
  }
  // A child summarised apart from its parent (one trace file at a time) was made up there from
  // its parent's fork and wait records ("not recorded"): that made-up one goes where the child's
  // own summary is here.
  std::vector<int> parents = ParentsOf(in.processes);
  {
    std::map<std::pair<int, int32_t>, size_t> recorded_children;  // (parent, pid) → index
    for (size_t i = 0; i < in.processes.size(); ++i) {
      if (parents[i] >= 0 && in.processes[i].info.recorded != "no") recorded_children[{parents[i], in.processes[i].info.pid}] = i;
    }
    std::vector<int> new_index(in.processes.size(), -1);
    std::vector<ProcessSummary> kept;
    std::vector<StepSplit> kept_splits;
    const bool splits = in.splits.size() == in.processes.size();
    for (size_t i = 0; i < in.processes.size(); ++i) {
      auto child = parents[i] >= 0 && in.processes[i].info.recorded == "no"
                       ? recorded_children.find({parents[i], in.processes[i].info.pid})
                       : recorded_children.end();
      if (child != recorded_children.end()) {
        // What only the parent saw: the child's exit status from its wait (read/process_tree.h).
        TakeExitSeenByParent(in.processes[i].info, &in.processes[child->second]);
        continue;
      }
      new_index[i] = static_cast<int>(kept.size());
      kept.push_back(std::move(in.processes[i]));
      if (splits) kept_splits.push_back(std::move(in.splits[i]));
    }
    if (kept.size() != in.processes.size()) {
      std::vector<int> kept_parents;
      for (size_t i = 0; i < parents.size(); ++i) {
        if (new_index[i] >= 0) kept_parents.push_back(parents[i] >= 0 ? new_index[static_cast<size_t>(parents[i])] : -1);
      }
      parents = std::move(kept_parents);
      in.processes = std::move(kept);
      in.splits = splits ? std::move(kept_splits) : std::vector<StepSplit>{};
    } else {
      in.processes = std::move(kept);
      in.splits = splits ? std::move(kept_splits) : std::vector<StepSplit>{};
    }
  }
  // Roles from the linked tree (read/process_tree.h RoleOf): a launcher summarised apart from its
  // ranks, a child apart from its parent, are named as in one run over all the files.
  {
    std::vector<int> child_strength(in.processes.size(), 0);
    for (size_t i = 0; i < in.processes.size(); ++i) {
      if (parents[i] >= 0) {
        int& c = child_strength[static_cast<size_t>(parents[i])];
        c = std::max(c, in.processes[i].place.rank_strength);
      }
    }
    for (size_t i = 0; i < in.processes.size(); ++i) {
      ProcessSummary& s = in.processes[i];
      if (s.info.recorded == "no") continue;  // made up from a parent's records: a child, as it was made
      const ProcessSummary* parent = parents[i] >= 0 ? &in.processes[static_cast<size_t>(parents[i])] : nullptr;
      const bool inherited = parent != nullptr && parent->info.rank == s.info.rank &&
                             parent->place.rank_strength == s.place.rank_strength;
      s.info.role = s.facts.role = RoleOf({s.place.recorded_role, s.place.rank_strength, child_strength[i], s.info.rank,
                                           inherited, parent == nullptr, s.place.forked_child});
    }
  }
  // Every host on one clock, from every process's shared instants (before any is cut by --rank).
  std::vector<ClockInput> clock_inputs;
  for (const ProcessSummary& s : in.processes) {
    clock_inputs.push_back({s.info.host, s.info.rank, s.place.file_start_realtime_ns, s.info.start_ns, &s.place.instants});
  }
  HostClockEstimate clocks = EstimateHostClocks(clock_inputs);
  for (size_t i = 0; i < in.processes.size(); ++i) {
    in.processes[i].info.start_realtime_ns = clocks.start_realtime_ns[i];
    in.processes[i].facts.start_realtime_ns = clocks.start_realtime_ns[i];
  }
  Placement place = PlaceProcesses(in, clocks.start_realtime_ns, parents);
  std::vector<FileStatus> files = std::move(in.files);
  if (!options.ranks.empty()) {
    std::set<int64_t> present;
    for (const ProcessSummary& s : in.processes) {
      if (s.info.rank) present.insert(*s.info.rank);
    }
    if (std::string missing = MissingRank(present, options.ranks); !missing.empty()) throw std::invalid_argument(missing);
    KeepRanksOf(in, options.ranks, &place);
    // The files of left-out processes go; a file no process names (no usable image) stays.
    std::set<std::string> named, kept_named;
    for (const ProcessSummary& s : in.processes) named.insert(s.info.files.begin(), s.info.files.end());
    for (size_t i : place.order) kept_named.insert(in.processes[i].info.files.begin(), in.processes[i].info.files.end());
    std::vector<FileStatus> kept_files;
    for (FileStatus& f : files) {
      if (named.count(f.path) == 0 || kept_named.count(f.path) > 0) kept_files.push_back(std::move(f));
    }
    files = std::move(kept_files);
    std::set<std::string> hosts;
    for (size_t i : place.order) hosts.insert(in.processes[i].info.host);
    std::vector<HostClock> kept_clocks;
    for (HostClock& h : clocks.clocks) {
      if (hosts.count(h.host) > 0 || h.host == clocks.reference) kept_clocks.push_back(std::move(h));
    }
    clocks.clocks = std::move(kept_clocks);
  }
  const size_t n = place.order.size();
  std::vector<ProcessSummary> summaries;  // in report order
  summaries.reserve(n);
  std::vector<StepSplit> splits;
  const bool have_splits = in.splits.size() == in.processes.size();
  for (size_t k = 0; k < n; ++k) {
    summaries.push_back(std::move(in.processes[place.order[k]]));
    summaries.back().facts.children = place.children[k];
    if (have_splits) splits.push_back(std::move(in.splits[place.order[k]]));
  }
  in.processes = {};
  in.splits = {};

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
    ProcessRow row = ProcessRowOf(s.info, place.parent[i], place.depth[i], r);
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
