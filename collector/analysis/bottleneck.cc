#include "collector/analysis/bottleneck.h"

#include <unordered_map>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string_view>

#include "collector/analysis/capture_note.h"
#include "collector/analysis/python_shim_note.h"
#include "collector/base/clock_offset.h"

namespace trainprof::collector {
namespace {

SampleStats Stats(std::vector<uint64_t> d) { return SummarizeSample(&d); }

InputAdvice Advise(const TrainingProcess& t, const InputPipeline& in, uint64_t all_steps_ns) {
  InputAdvice a;
  a.batch_ns = in.fetch_mean_ns();
  a.batches_per_step = std::max(1.0, t.micro_batches_mean);
  a.compute_ns = std::max(0.0, t.step.mean - t.part(Part::kDataWait).mean_ns) / a.batches_per_step;
  a.startup_step_percent = Percent(static_cast<double>(in.startup_wait_ns), static_cast<double>(all_steps_ns));
  a.startup_significant = in.startup_wait_ns > 0 && a.startup_step_percent >= kStartupStepPercent;
  if (in.loading == Loading::kWorkers && in.concurrent_workers > 0) a.delivery_ns = a.batch_ns / in.concurrent_workers;
  if (a.compute_ns > 0 && a.batch_ns > 0) {
    a.workers_needed = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(a.batch_ns / a.compute_ns)));
  }
  if (t.part(Part::kDataWait).percent < kPartlyInputBoundPercent) return a;
  switch (in.loading) {
    case Loading::kNone: a.cause = InputCause::kNotTraced; break;
    case Loading::kMainProcess: a.cause = InputCause::kMainProcess; break;
    case Loading::kWorkers:
      if (2 * in.startup_wait_counted_ns >= t.part(Part::kDataWait).total_ns) {
        a.cause = InputCause::kStartup;  // at least half of the wait: workers were not up yet
      } else if (!in.busy_percent) {
        a.cause = InputCause::kNotTraced;
      } else if (*in.busy_percent >= kWorkersBusyPercent) {
        const FetchStats& f = in.fetch;
        const uint64_t other = f.other_ns();
        a.cause = f.getitem_ns >= f.collate_ns && f.getitem_ns >= other ? InputCause::kGetItem
                  : f.collate_ns >= other                               ? InputCause::kCollate
                                                                        : InputCause::kFetch;
      } else {
        a.cause = InputCause::kTransfer;
      }
      break;
  }
  return a;
}

// "…: the loader delivers a batch every X/N while a step computes in Y: use about K workers".

// Whether training process `t` (of process `p`) meets the other ranks inside its steps
// (RankInput::synchronises): it uses DistributedDataParallel (the shim's TRAINPROF_DDP; or the
// forward of a module wrapped in DistributedDataParallel or FullyShardedDataParallel), NCCL
// kernels start in its steps, or a collective runs inside one of its training steps. A
// torch.profiler trace's DDP use and collectives are not read (docs/kineto.md): assumed to meet,
// so its ranks are compared as before rather than said to train apart.
bool MeetsOtherRanks(const TrainingProcess& t, const ProcessFacts& p, const ProcessPhases& phases,
                     const StringPool& strings) {
  if (t.collective.ddp || t.collective.nccl_kernels > 0) return true;
  if (p.kineto) return true;
  for (const StepRow& s : t.step_rows) {
    if (s.eval) continue;
    if (s.parts[static_cast<size_t>(Part::kCollective)] > 0 || s.arrival == Arrival::kCollective ||
        s.arrival == Arrival::kDdpBackward) {
      return true;
    }
  }
  std::unordered_map<StringId, bool> wrapped;  // by forward name: every module call is a range
  for (const PhaseThread& th : phases.threads) {
    for (const PhaseRange& r : th.ranges) {
      if (r.phase != Phase::kForward || r.name == 0) continue;
      auto [it, inserted] = wrapped.try_emplace(r.name, false);
      if (inserted) {
        const std::string_view name = strings.Get(r.name);
        it->second = name.find("DistributedDataParallel") != std::string_view::npos ||
                     name.find("FullyShardedDataParallel") != std::string_view::npos;
      }
      if (it->second) return true;
    }
  }
  return false;
}

}  // namespace

namespace {

// One training process's analysis, its GPU parts from its StepsGpu (run.gpu) where `cuda` (some
// process of the run has CUDA records); no ranks or sentences yet.
TrainingProcess AnalyzeProcess(const RunView& run, int index, const std::vector<bool>& training, bool cuda) {
  const ProcessFacts& p = *run.facts[index];
  const ProcessPhases& own_phases = *run.phases[index];
  TrainingProcess t;
  t.process = index;
  t.pid = p.pid;
  t.host = p.host;
  t.rank = p.rank;
  t.role = p.role;
  StepSplit own_split;
  if (run.splits.empty()) own_split = SplitSteps(own_phases, p.ddp_backend.has_value());
  const StepSplit& split = run.splits.empty() ? own_split : *run.splits[static_cast<size_t>(index)];
  t.data_waits = split.data_waits;
  t.epoch_ends = split.epoch_ends;
  t.dropped_steps = split.dropped;
  if (split.data_waits == 0 && split.rhythm_steps > 0) t.steps_found_by = "loop_rhythm";
  if (split.profiler_steps > 0 && split.profiler_steps == split.steps.size()) t.steps_found_by = "profiler_step";

  std::vector<const Step*> train;
  for (const Step& s : split.steps) {
    if (s.eval) {
      ++t.eval_steps;
    } else {
      train.push_back(&s);
    }
  }
  t.steps = train.size();
  t.recorded_from_delay = p.recorded_from_delay;
  const Step* warmup = WarmupStep(split, t.recorded_from_delay);
  t.warmup_skipped = warmup != nullptr;

  std::vector<uint64_t> durations;
  std::vector<Interval> waits_counted, waits_all, spans, spans_counted, eval_spans;
  uint64_t all_steps_ns = 0;
  uint64_t k = 0;
  for (size_t i = 0; i < split.steps.size(); ++i) {
    const Step& s = split.steps[i];
    StepRow row;
    row.step = i;
    row.eval = s.eval;
    row.in_statistics = !s.eval && &s != warmup;
    if (!s.eval) row.train_step = k++;
    row.epoch = s.epoch;
    row.tid = s.tid;
    row.data_waits = s.data_waits;
    row.micro_batches = s.micro_batches;
    row.passes = s.passes;
    row.start_ns = s.begin_ns;
    row.end_ns = s.end_ns;
    row.parts = s.parts;
    row.arrival = s.arrival;
    if (s.arrival != Arrival::kNone) row.arrival_ns = s.arrival_ns;
    t.step_rows.push_back(row);
    if (s.eval) {
      eval_spans.push_back({s.begin_ns, s.end_ns});
      continue;
    }
    all_steps_ns += s.duration();
    const bool first_training = t.micro_batches_max == 0;  // micro_batches is at least 1
    t.micro_batches_min = first_training ? s.micro_batches : std::min(t.micro_batches_min, s.micro_batches);
    t.micro_batches_max = std::max(t.micro_batches_max, s.micro_batches);
    t.passes_min = first_training ? s.passes : std::min(t.passes_min, s.passes);
    t.passes_max = std::max(t.passes_max, s.passes);
    t.passes += s.passes;
    t.passes_in_optimizer += s.passes_in_optimizer;
    spans.push_back({s.begin_ns, s.end_ns});
    waits_all.insert(waits_all.end(), s.waits.begin(), s.waits.end());
    if (!row.in_statistics) continue;
    durations.push_back(s.duration());
    spans_counted.push_back({s.begin_ns, s.end_ns});
    waits_counted.insert(waits_counted.end(), s.waits.begin(), s.waits.end());
    for (size_t part = 0; part < kPartCount; ++part) t.parts[part].total_ns += s.parts[part];
  }
  t.step = Stats(durations);
  {
    uint64_t micro = 0, counted = 0;
    for (const Step& s : split.steps) {
      if (s.eval) continue;
      micro += s.micro_batches;
      ++counted;
    }
    if (counted > 0) t.micro_batches_mean = static_cast<double>(micro) / static_cast<double>(counted);
  }
  if (t.steps == 0 && t.eval_steps > 0) {  // evaluates only: described, no training verdict
    std::vector<uint64_t> eval;
    uint64_t waited = 0, total = 0;
    for (const Step& s : split.steps) {
      eval.push_back(s.duration());
      waited += s.parts[static_cast<size_t>(Part::kDataWait)];
      total += s.duration();
    }
    t.eval_step = Stats(std::move(eval));
    t.eval_data_wait_percent = Percent(static_cast<double>(waited), static_cast<double>(total));
    t.verdict = Verdict::kEvaluationOnly;
  }
  t.coverage = ComputeCoverage(p, own_phases, Union(std::vector<Interval>(spans)), Union(std::move(eval_spans)));
  const StepsGpu* gpu = run.gpu.empty() ? nullptr : run.gpu[static_cast<size_t>(index)];
  t.collective = CollectiveInfoOf(gpu != nullptr ? gpu->nccl : NcclInSteps{}, spans_counted, p.ddp_backend);
  if (t.step.count == 0) return t;
  std::vector<StepDuration> counted;
  for (const StepRow& r : t.step_rows) {
    if (r.in_statistics) counted.push_back({r.step, *r.train_step, r.end_ns - r.start_ns});
  }
  t.slow = FindSlowSteps(counted, t.step.median);

  for (PartShare& part : t.parts) {
    part.mean_ns = static_cast<double>(part.total_ns) / static_cast<double>(t.step.count);
    part.percent = Percent(static_cast<double>(part.total_ns), static_cast<double>(t.step.total));
  }
  t.compute_mean_ns =
      t.part(Part::kForward).mean_ns + t.part(Part::kBackward).mean_ns + t.part(Part::kOptimizer).mean_ns;
  const double wait = t.part(Part::kDataWait).percent;
  t.verdict = wait >= kInputBoundPercent         ? Verdict::kInputBound
              : wait >= kPartlyInputBoundPercent ? Verdict::kPartlyInputBound
                                                 : Verdict::kComputeBound;
  t.largest = Part::kForward;
  for (Part part : {Part::kBackward, Part::kOptimizer, Part::kCollective, Part::kOther}) {
    if (t.part(part).total_ns > t.part(t.largest).total_ns) t.largest = part;
  }

  InputContext ctx;
  ctx.process = index;
  ctx.training = &training;
  ctx.waits_counted = Union(std::move(waits_counted));
  ctx.waits_all = Union(std::move(waits_all));
  ctx.steps = Union(std::move(spans));
  if (t.steps_found_by != "loop_rhythm") {  // without a DataLoader there is no input pipeline to analyse
    t.input = AnalyzeInput(run, ctx);
    t.advice = Advise(t, *t.input, all_steps_ns);
  }
  if (cuda && gpu != nullptr && gpu->idle) t.gpu = *gpu->idle;
  return t;
}
}  // namespace

namespace {
// The names of each verdict, in Verdict's order: JSON/CSV key, text label.
constexpr const char* kVerdictNames[][2] = {{"no_steps", "no steps"},
                                            {"compute_bound", "compute-bound"},
                                            {"partly_input_bound", "partly input-bound"},
                                            {"input_bound", "input-bound"},
                                            {"evaluation_only", "evaluation only"}};
}  // namespace

const char* VerdictName(Verdict v) { return kVerdictNames[static_cast<size_t>(v)][0]; }
const char* VerdictLabel(Verdict v) { return kVerdictNames[static_cast<size_t>(v)][1]; }

const char* InputCauseName(InputCause c) {
  switch (c) {
    case InputCause::kNotTraced: return "not_traced";
    case InputCause::kMainProcess: return "main_process";
    case InputCause::kGetItem: return "getitem";
    case InputCause::kCollate: return "collate";
    case InputCause::kFetch: return "fetch";
    case InputCause::kTransfer: return "transfer";
    case InputCause::kStartup: return "startup";
    default: return "";
  }
}

namespace {

// The "no_phases" message when Python processes were started with options that kept the shim
// out (python_shim_note.h); "" when none was.
std::string ShimKeptOutMessage(const RunView& run) {
  constexpr size_t kListed = 4;
  std::string listed, options;
  size_t count = 0;
  for (const ProcessFacts* p : run.facts) {
    const std::string& off = p->python_shim_off;
    if (off.empty()) continue;
    if (++count > kListed) continue;
    listed += std::string(listed.empty() ? "" : "; ") + "pid " + std::to_string(p->pid) + ": " + PythonShimOffReason(off);
    for (const char* o : {"-E", "-I", "-S"}) {
      if (off.find(o) != std::string::npos && options.find(o) == std::string::npos) {
        options += std::string(options.empty() ? "" : " or ") + o;
      }
    }
  }
  if (count == 0) return "";
  if (count > kListed) listed += "; and " + std::to_string(count - kListed) + " more";
  return "No training phases recorded: trainprof's Python shim (its sitecustomize, put first on PYTHONPATH) could not "
         "load in " + std::string(count == 1 ? "the Python process" : std::to_string(count) + " Python processes") +
         " (" + listed + "), so the Python phases were not recorded. Run Python without " + options +
         " to record them; meanwhile the NVTX range statistics show where the time goes by name.";
}

// Whether some process ran a Python interpreter (its executable is named python*).
bool AnyPythonProcess(const RunView& run) {
  return std::any_of(run.facts.begin(), run.facts.end(), [](const ProcessFacts* p) { return p->python; });
}

// The "no_steps" message when no process waited on a DataLoader or ran a backward: what was
// recorded instead, and what that means.
std::string NoTrainingMessage(const std::vector<const ProcessPhases*>& phases) {
  uint64_t forwards = 0, fetches = 0;
  for (const ProcessPhases* p : phases) {
    forwards += p->Count(Phase::kForward) + p->Count(Phase::kValidationStep);
    fetches += p->Count(Phase::kFetch) + p->Count(Phase::kGetItem);
  }
  const std::string head =
      "Training phases were recorded, but no training step: steps are found from DataLoader waits "
      "(torch.utils.data.DataLoader iteration) or, without them, from the loop's forward → backward → optimizer step "
      "cycle, and no process did either. ";
  if (forwards > 0) {
    return head + std::to_string(forwards) +
           " forward calls were recorded without any backward: evaluation or inference only (under torch.no_grad() "
           "or without loss.backward()), so there is no training step to break down; the NVTX range statistics show "
           "the forward time by module.";
  }
  if (fetches > 0) {
    return head +
           "Only DataLoader batch fetches were recorded, with no process waiting for them: the DataLoader workers "
           "were traced without their main process (run the whole program under `trainprof run --follow-children`), "
           "or the main process recorded no Python phases.";
  }
  return head +
         "The recorded phases (worker start-up, checkpoints, init_process_group, ...) happen outside training "
         "steps; the NVTX range statistics show where the time goes by name.";
}

}  // namespace

namespace {

// The spread of the ranked training processes' figures; none below two ranks with steps.
std::optional<RankSpread> SpreadOfRanks(const Bottleneck& b) {
  std::vector<RankValue> step, compute, data_wait, gpu_busy, lateness;
  for (const TrainingProcess& t : b.processes) {
    if (!t.rank || t.step.count == 0) continue;
    step.push_back({*t.rank, t.step.mean});
    compute.push_back({*t.rank, t.compute_mean_ns});
    data_wait.push_back({*t.rank, t.part(Part::kDataWait).percent});
    if (t.gpu && t.gpu->recorded) gpu_busy.push_back({*t.rank, t.gpu->busy_percent});
  }
  if (step.size() < 2) return std::nullopt;
  if (b.ranks && b.ranks->synchronised) {  // ranks that train apart are never late for one another
    for (const RankRow& r : b.ranks->ranks) {
      if (r.median_lateness_ns) lateness.push_back({r.rank, *r.median_lateness_ns});
    }
  }
  RankSpread s;
  s.ranks = step.size();
  s.rows.push_back(SpreadAcross("step_mean_ns", "Step time (mean)", false, std::move(step)));
  const double step_median = s.rows.back().median;  // lateness is noise below 1% of it
  s.rows.push_back(SpreadAcross("compute_mean_ns", "Compute (mean)", false, std::move(compute)));
  s.rows.push_back(SpreadAcross("data_wait_percent", "Data wait (%)", true, std::move(data_wait)));
  if (!gpu_busy.empty()) s.rows.push_back(SpreadAcross("gpu_busy_percent", "GPU busy (%)", true, std::move(gpu_busy)));
  if (!lateness.empty()) {
    s.rows.push_back(SpreadAcross("late_median_ns", "Late (median)", false, std::move(lateness), 0.01 * step_median));
  }
  return s;
}

}  // namespace

namespace {

// The analysis once its training processes are analysed: ranks, spread, sentences, status.
Bottleneck FinishBottleneck(const RunView& run, Bottleneck b) {
  // Ranks first, by rank; the others in tree order.
  std::stable_sort(b.processes.begin(), b.processes.end(), [](const TrainingProcess& x, const TrainingProcess& y) {
    return std::make_pair(!x.rank, x.rank.value_or(0)) < std::make_pair(!y.rank, y.rank.value_or(0));
  });
  if (b.processes.empty()) {
    b.status = "no_steps";
    b.message = NoTrainingMessage(run.phases);
    return b;
  }

  // Ranks: compare the training processes that have one (on several hosts, on their wall clocks,
  // aligned where AlignHostClocks could).
  std::vector<RankInput> ranks;
  std::vector<int64_t> unplaced;  // several hosts: a rank whose host has no wall clock nor shared instant
  for (const TrainingProcess& t : b.processes) {
    if (!t.rank) continue;
    const ProcessFacts& p = *run.facts[static_cast<size_t>(t.process)];
    if (!run.host_clocks->empty() && p.start_realtime_ns == 0) {
      unplaced.push_back(*t.rank);
      continue;
    }
    RankInput r;
    r.rank = *t.rank;
    r.pid = t.pid;
    r.host = t.host;
    r.realtime_offset_ns = RealtimeOffset(p.start_realtime_ns, p.start_ns);
    for (const StepRow& s : t.step_rows) {
      if (s.eval) continue;
      r.steps.push_back(
          {s.arrival, s.arrival_ns.value_or(0),
           s.parts[static_cast<size_t>(Part::kBackward)] + s.parts[static_cast<size_t>(Part::kCollective)]});
    }
    r.mean_step_ns = t.step.mean;
    r.mean_compute_ns = t.compute_mean_ns;
    r.mean_data_wait_ns = t.part(Part::kDataWait).mean_ns;
    r.synchronises = MeetsOtherRanks(t, p, *run.phases[static_cast<size_t>(t.process)], *run.strings);
    ranks.push_back(std::move(r));
  }
  if (ranks.size() >= 2) {
    b.ranks = AnalyzeRanks(std::move(ranks), kWarmupMinSteps, kStragglerStepPercent, kStragglerMinNs);
    b.ranks->unplaced_ranks = std::move(unplaced);
    if (b.ranks->clock == "realtime") {
      // Lateness across hosts is known only as well as their clocks: no straggler below that.
      for (const HostClock& h : *run.host_clocks) {
        const bool compared = std::any_of(b.ranks->ranks.begin(), b.ranks->ranks.end(),
                                          [&](const RankRow& r) { return r.host == h.host; });
        if (compared) b.ranks->clock_uncertainty_ns = std::max(b.ranks->clock_uncertainty_ns, h.uncertainty_ns);
      }
      if (b.ranks->matched_steps > 0 &&
          static_cast<double>(b.ranks->clock_uncertainty_ns) >= b.ranks->late_threshold_ns) {
        b.ranks->clocks_too_uncertain = true;
        b.ranks->straggler = false;
      }
    }
    for (const RankRow& row : b.ranks->ranks) {
      for (TrainingProcess& t : b.processes) {
        if (t.pid != row.pid || t.host != row.host) continue;
        for (StepRow& s : t.step_rows) {
          if (s.train_step && *s.train_step < row.lateness_ns.size()) s.lateness_ns = row.lateness_ns[*s.train_step];
        }
      }
    }
    b.rank_text = DescribeRanks(*b.ranks, *run.host_clocks, *run.clock_reference);
    if (b.ranks->straggler) {  // the ranks that wait for it, by as much as a straggler is late
      const RankRow& late = b.ranks->ranks[static_cast<size_t>(b.ranks->latest)];
      for (const RankRow& row : b.ranks->ranks) {
        if (&row == &late || !row.wait_ns) continue;
        for (TrainingProcess& t : b.processes) {
          if (t.pid != row.pid || t.host != row.host || t.step.count == 0) continue;
          if (*row.wait_ns >= kStragglerStepPercent / 100.0 * t.step.mean) {
            t.waits_for_rank = late.rank;
            t.straggler_wait_ns = *row.wait_ns;
            // Its steps wait for the straggler: faster input here would gain nothing, so no input
            // cause is advised (the text gives none either).
            t.advice.cause = InputCause::kNone;
            t.advice.workers_needed.reset();
          }
        }
      }
    }
  }
  b.spread = SpreadOfRanks(b);
  for (TrainingProcess& t : b.processes) DescribeProcess(&t);
  const bool any_steps =
      std::any_of(b.processes.begin(), b.processes.end(), [](const TrainingProcess& t) { return t.step.count > 0; });
  b.status = any_steps ? "ok" : "no_steps";
  if (!any_steps) b.message = "DataLoader waits or backward passes were recorded but no complete training step.";
  return b;
}

}  // namespace

Bottleneck AnalyzeBottleneck(const RunView& run) {
  Bottleneck b;
  for (const ProcessFacts* p : run.facts) b.gpu.recorded = b.gpu.recorded || p->cuda;
  const size_t n = run.size();
  std::vector<bool> training(n, false);
  bool any_phase = false;
  for (size_t i = 0; i < n; ++i) {
    const ProcessPhases& phases = *run.phases[i];
    any_phase = any_phase || !phases.empty();
    training[i] = IsTrainingProcess(phases);
  }
  if (!any_phase) {
    b.status = "no_phases";
    b.message = ShimKeptOutMessage(run);
    if (!b.message.empty()) return b;
    if (AnyPythonProcess(run)) {
      // The shim loaded (ShimKeptOutMessage found no process it was kept out of): no training
      // loop of PyTorch's ran, or --trace=-python turned the shim off (the trace does not say).
      b.message =
          "No training phases recorded: the Python processes of this run recorded no DataLoader wait, forward, "
          "backward or optimizer step, which trainprof's Python shim records once the program imports torch: the "
          "program did not import torch or ran no training loop (or it was run with --trace=-python, which turns the "
          "shim off). Other loops can record the same phases as NVTX push/pop ranges in domain \"trainprof\" with "
          "the categories of docs/trace-format.md (\"Training phases\"); meanwhile the NVTX range statistics and CPU "
          "samples (--sample) show where the time goes.";
      return b;
    }
    b.message =
        "No training phases recorded: the verdict needs the phases that `trainprof run` records in Python programs "
        "using PyTorch (DataLoader waits, forward, backward, optimizer), so run the script as `trainprof run "
        "--follow-children -- python train.py` without --trace=-python. Other programs can record the same phases as "
        "NVTX push/pop ranges in domain \"trainprof\" with the categories of docs/trace-format.md (\"Training "
        "phases\"); meanwhile the NVTX range statistics show where the time goes by name.";
    return b;
  }
  for (size_t i = 0; i < n; ++i) {
    if (training[i]) b.processes.push_back(AnalyzeProcess(run, static_cast<int>(i), training, b.gpu.recorded));
  }
  return FinishBottleneck(run, std::move(b));
}

}  // namespace trainprof::collector
