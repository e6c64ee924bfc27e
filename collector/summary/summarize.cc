#include "collector/summary/summarize.h"

#include <algorithm>
#include <map>
#include <utility>

#include "collector/analysis/capture_note.h"
#include "collector/analysis/python_shim_note.h"
#include "collector/analysis/sampling_note.h"
#include "collector/analysis/thread_phases.h"
#include "collector/base/add_fields.h"
#include "collector/read/process_tree.h"
#include "trainprof/trace_format.h"

namespace trainprof::collector {
namespace {

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

bool NeedsQuoting(const std::string& s) {
  if (s.empty()) return true;
  return s.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~!") != std::string::npos;
}

ProcessInfo ProcessInfoOf(const Trace& trace, const Process& p, const std::vector<CudaDigest>& cuda) {
  const StringPool& strings = trace.strings;
  ProcessInfo row;
  row.pid = p.pid;
  row.ppid = p.ppid;
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
    if (exec != nullptr && exec->text != 0) row.unrecorded_exec = std::string(strings.Get(exec->text));
  }
  row.start_realtime_ns = p.start_realtime_ns;
  row.start_ns = p.start_ns;
  row.start_known = p.start_known;
  row.end_ns = p.end_ns;
  row.wall_ns = p.wall_ns;
  row.capture_limited = CaptureLimited(p);
  row.python_shim_off = PythonShimOff(p);
  row.exit_kind = ExitKindName(p.exit.kind);
  row.kineto = p.first().source == ImageSource::kKineto;
  if (p.exit.kind != EndKind::kNone) row.exit_code = p.exit.code;
  row.exit_text = DescribeExit(p.exit);
  row.exit_source = SourceName(p.exit.source);
  row.events = p.records;
  row.dropped = p.dropped;
  row.truncated = p.truncated;
  for (const TraceImage& img : p.images) {
    if (img.file < trace.files.size() && trace.files[img.file].damaged()) row.damaged = true;
  }
  row.nvtx_misuse = MisuseOf(p);
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
  row.gpu = GpuTracingOf(p, strings, &cuda);
  return row;
}

// The process's losses (the catalogue's per-process entries) but the capture note, which needs
// the process's offset in the run (the merge's: report/process_rows.cc).
std::vector<LossNote> LossesOf(const Trace& trace, const Process& p, const ProcessInfo& row) {
  std::vector<LossNote> out;
  auto add = [&](Loss kind, uint64_t n, std::string detail = {}) {
    if (n > 0) out.push_back({kind, n, std::move(detail), true});
  };
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
  if (p.recorded == Process::Recorded::kNotRecorded) out.push_back({Loss::processes_not_recorded, 1, "", false});
  if (p.recorded == Process::Recorded::kExecNotRecorded) out.push_back({Loss::execs_not_recorded, 1, "", false});
  return out;
}

}  // namespace

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

std::vector<CudaDigest> CollectCudaDigests(const Process& p) {
  std::vector<CudaDigest> out;
  for (const TraceImage& img : p.images) out.push_back(img.cuda_digest);
  return out;
}

std::vector<CudaDigest> TakeCudaDigests(Process* p) {
  std::vector<CudaDigest> out;
  for (TraceImage& img : p->images) {
    out.push_back(std::move(img.cuda_digest));
    img.cuda_digest = CudaDigest();
  }
  return out;
}

namespace {

ProcessKey KeyOf(const Process& p) {
  return {p.host, p.first().boot_id, p.first().pid_namespace, p.pid, p.start_ns};
}

ProcessPlace PlaceOf(const Trace& trace, size_t i, const ProcessPhases& phases) {
  const Process& p = trace.processes[i];
  ProcessPlace place;
  place.key = KeyOf(p);
  if (p.parent >= 0) place.parent = KeyOf(trace.processes[static_cast<size_t>(p.parent)]);
  place.file_start_realtime_ns = p.first().start_realtime_ns;
  place.instants = SharedInstantsOf(p, phases, trace.strings);
  for (const TraceImage& img : p.images) {
    if (img.file != kNoFile) place.run_ids.push_back(img.run_id);
    if (img.role != 0) place.recorded_role = std::string(trace.strings.Get(img.role));
  }
  place.rank_strength = p.rank_strength;
  place.forked_child = (p.last().flags & format::kFlagForkedChild) != 0;
  return place;
}

}  // namespace

ProcessSummary SummarizeProcess(const Trace& trace, size_t i, NvtxSummary nvtx, std::vector<CudaDigest> cuda,
                                Symbolizer* symbols) {
  const Process& p = trace.processes[i];
  ProcessSummary s;
  s.info = ProcessInfoOf(trace, p, cuda);
  s.cuda = std::move(cuda);
  s.host_ops = ProcessHostOpTotals(p);
  const std::vector<Symbolizer::Problem> known = symbols->KeyedProblems();
  bool samples = false;
  for (const TraceImage& img : p.images) samples = samples || !img.stacks.samples.empty();
  if (samples) {
    const ThreadPhases phases(trace, i);
    s.functions = CountFunctions(p, symbols, [&](size_t image, uint32_t thread, uint64_t t) {
      return phases.At(i, image, thread, t);
    });
  }
  s.callsites = CallSiteGroupsOf(trace, i, symbols);
  s.operator_phases = ProcessOperatorPhases(trace, i);
  s.facts = FactsOf(trace, i);
  s.facts.children.clear();  // the tree is the merge's
  s.phases = PhasesOf(trace, i);
  s.place = PlaceOf(trace, i, s.phases);
  for (Symbolizer::Problem& problem : symbols->KeyedProblems()) {
    if (std::find(known.begin(), known.end(), problem) == known.end()) s.symbol_problems.push_back(std::move(problem));
  }
  s.info.unbalanced = nvtx.unbalanced;
  s.recorded_ns = RecordedTime(p);
  s.losses = LossesOf(trace, p, s.info);
  s.capture = CaptureSummaryOf(p);
  s.nvtx = std::move(nvtx);
  return s;
}

}  // namespace trainprof::collector
