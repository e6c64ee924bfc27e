// The sentences of the Bottleneck section: each states a finding with the numbers behind it
// (docs/analysis.md). Pure functions of the numbers in bottleneck.h.
#include <algorithm>
#include <cstdio>
#include <set>

#include "collector/analysis/bottleneck.h"
#include "collector/base/units.h"

namespace trainprof::collector {
namespace {

std::string D(double ns) { return FormatDuration(ns); }
std::string P(double percent) { return FormatPercent(percent) + "%"; }
std::string Who(const TrainingProcess& t) {
  return t.rank ? "rank " + std::to_string(*t.rank) + " (pid " + std::to_string(t.pid) + ")"
                : "pid " + std::to_string(t.pid);
}

// Breakdown of a batch fetch: "__getitem__ 97.0%, collate_fn 2.0%, other 1.0%; 8 items of 9.70 ms".
std::string FetchBreakdown(const InputPipeline& in) {
  const FetchStats& f = in.fetch;
  std::string s = "__getitem__ " + P(f.getitem_percent()) + ", collate_fn " + P(f.collate_percent()) + ", other " +
                  P(f.other_percent());
  if (f.getitem_calls > 0) {
    char items[32];
    std::snprintf(items, sizeof items, "%.3g", in.items_per_batch());
    s += "; " + std::string(items) + " items of " + D(in.getitem_mean_ns()) + " each";
  }
  return s;
}

// "a step computes in Y", or with gradient accumulation "a micro-batch computes in Y (4 per step)":
// the loader is compared with the compute of one of its batches.
std::string ComputesIn(const InputAdvice& a) {
  if (a.batches_per_step <= 1) return "a step computes in " + D(a.compute_ns);
  char n[32];
  std::snprintf(n, sizeof n, "%.3g", a.batches_per_step);
  return "a micro-batch computes in " + D(a.compute_ns) + " (" + n + " per step)";
}

std::string WorkerEstimate(const InputPipeline& in, const InputAdvice& a, const std::string& faster) {
  const size_t n = in.concurrent_workers;
  std::string s = "with " + Plural(n, "worker", "workers") + " the loader delivers a batch every " +
                  D(a.delivery_ns.value_or(a.batch_ns)) + " while " + ComputesIn(a) + ": ";
  if (!a.workers_needed) return s + faster;
  const std::string k = std::to_string(*a.workers_needed);
  const std::string formula = "ceil(" + D(a.batch_ns) + " / " + D(a.compute_ns) + ")";
  if (*a.workers_needed > n) {
    return s + "use more workers (about " + k + " = " + formula + ", given that many free CPU cores) or " + faster;
  }
  return s + "the estimate " + formula + " = " + k + " is not above the " + std::to_string(n) +
         " workers in use, so the workers are probably slowed down by competing for CPU cores: " + faster +
         " (more workers help only on free cores)";
}

// "26×": a ratio to three significant digits.
std::string Times(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g×", x);
  return b;
}

std::string RankOrPid(const TrainingProcess& t) {
  return t.rank ? "rank " + std::to_string(*t.rank) : "pid " + std::to_string(t.pid);
}

// "DataLoader #1 (feeds the training steps): TensorDataset, batch_size 16, 2 workers, not persistent,
// pin_memory off; 20 waits, mean 1.20 ms; 6 worker processes; a batch fetch takes 2.10 ms (...)."
std::string LoaderLine(const LoaderStats& l) {
  const LoaderDescription& d = l.description;
  auto flag = [](const std::optional<bool>& v, const char* yes, const char* no) {
    return std::string(v ? (*v ? yes : no) : "?");
  };
  std::string s = "DataLoader #" + (d.id ? std::to_string(*d.id) : std::string("?")) +
                  (l.feeds_training ? " (feeds the training steps): " : " (no training step): ") +
                  (d.dataset.empty() ? std::string("?") : d.dataset) + ", batch_size " +
                  (d.batch_size ? std::to_string(*d.batch_size) : std::string("None")) + ", " +
                  (d.num_workers ? Plural(*d.num_workers, "worker", "workers") : std::string("? workers")) + ", " +
                  flag(d.persistent_workers, "persistent", "not persistent") + ", pin_memory " +
                  flag(d.pin_memory, "on", "off") + "; " + Plural(l.waits, "wait", "waits") + ", mean " +
                  D(l.mean_wait_ns());
  if (l.worker_processes > 0) s += "; " + Plural(l.worker_processes, "worker process", "worker processes");
  if (l.fetch.fetches > 0) s += "; a batch fetch takes " + D(l.fetch.mean_ns());
  return s + ".";
}

// " (DataLoader #1, TensorDataset)" when one named loader feeds the training steps, else "".
std::string FeedingLoader(const InputPipeline& in) {
  const auto feeding = std::count_if(in.loaders.begin(), in.loaders.end(),
                                     [](const LoaderStats& l) { return l.feeds_training; });
  if (feeding != 1 || !in.loaders[0].description.id) return "";
  const LoaderDescription& d = in.loaders[0].description;
  return " (DataLoader #" + std::to_string(*d.id) + (d.dataset.empty() ? "" : ", " + d.dataset) + ")";
}

std::string ArrivalPoint(const std::string& arrival) {
  if (arrival == "collective") return "its first collective";
  if (arrival == "forward_end") return "the end of its forward";
  if (arrival == "ddp_backward") return "DDP's gradient all-reduce (start of backward)";
  return "the gradient synchronisation (start of backward)";
}

// "Steps, found from the DataLoader waits, cover 30.0% of the process's recorded time (5.10 s of 17.0 s);
// outside them: ..." (coverage.h).
std::string CoverageLine(const TrainingProcess& t) {
  const Coverage& c = t.coverage;
  std::string s = std::string(t.steps_found_by == "loop_rhythm"     ? "Steps, found from the loop's rhythm, cover "
                              : t.steps_found_by == "profiler_step" ? "Steps, torch.profiler's ProfilerStep#N spans, cover "
                                                                    : "Steps, found from the DataLoader waits, cover ") +
                  P(c.percent) + " of the process's recorded time (" +
                  D(static_cast<double>(c.steps_ns)) + " of " + D(static_cast<double>(c.wall_ns)) + ")";
  std::vector<std::string> listed;
  for (const UncoveredPart& u : c.uncovered) {
    if (u.percent < 1) continue;
    listed.push_back(std::string(UncoveredLabel(u.kind)) + " " + D(static_cast<double>(u.ns)) + " (" + P(u.percent) +
                     ")");
  }
  for (size_t i = 0; i < listed.size(); ++i) s += (i == 0 ? "; outside them: " : ", ") + listed[i];
  if (c.percent < 50) s += "; the verdict describes the steps only";
  return s + ".";
}

// The collective sentence when the Collective part is not the whole story (collectives.h).
void DescribeCollective(const CollectiveInfo& c, std::vector<std::string>* out) {
  const std::string ddp = c.ddp ? "DDP" + (c.backend ? " over " + *c.backend : std::string()) + ": " : "";
  if (c.source == "unknown") {
    out->push_back(ddp +
                   "collective: unknown (DDP's gradient all-reduce is inside backward), so the backward part includes "
                   "the all-reduce and any wait for the other ranks.");
  } else if (c.source == "nccl_kernels" && c.gpu_ns_per_step) {
    out->push_back(ddp + (ddp.empty() ? "Collective" : "collective") + ": NCCL kernels run " +
                   D(*c.gpu_ns_per_step) + " per step on the GPU, " + P(c.gpu_percent.value_or(0)) + " of the step (" +
                   Plural(c.nccl_kernels, "kernel", "kernels") + " in the steps).");
  }
}

}  // namespace

namespace {

// The steps, the verdict, the input pipeline and its advice, worker start-up.
void DescribeSteps(TrainingProcess* tp) {
  TrainingProcess& t = *tp;
  std::vector<std::string>& out = t.text;
  const std::string who = Who(t);
  if (t.verdict == Verdict::kEvaluationOnly) {
    out.push_back(who + ": evaluation only: " + Plural(t.eval_steps, "evaluation step", "evaluation steps") +
                  " (forwards under torch.no_grad() or eval(), no backward or optimizer step): mean " +
                  D(t.eval_step.mean) + ", median " + D(t.eval_step.median) + ", waiting for data " +
                  P(t.eval_data_wait_percent) + " of their time; no training verdict.");
    return;
  }
  if (t.verdict == Verdict::kNoSteps && t.data_waits == 0) {
    out.push_back(who + ": a backward but no complete training step (a step needs a forward followed by a backward "
                  "or optimizer step).");
    return;
  }
  if (t.verdict == Verdict::kNoSteps) {
    out.push_back(who + ": " + Plural(t.data_waits, "DataLoader wait", "DataLoader waits") +
                  " but no complete training step (a step needs a forward, backward, optimizer or collective range "
                  "after its wait).");
    return;
  }
  // The steps.
  std::set<uint32_t> epochs;
  for (const StepRow& r : t.step_rows) epochs.insert(r.epoch);
  const bool rhythm = t.steps_found_by == "loop_rhythm";
  std::string s = who + ": " + Plural(t.steps, "training step", "training steps");
  // The step is the optimizer step: said where one holds several micro-batches or passes
  // (docs/analysis.md, "The step is the optimizer step").
  const bool accumulates = t.micro_batches_max > 1;
  if (accumulates) {
    s += t.micro_batches_min == t.micro_batches_max
             ? " of " + std::to_string(t.micro_batches_max) + " micro-batches each"
             : " of " + std::to_string(t.micro_batches_min) + " to " + std::to_string(t.micro_batches_max) +
                   " micro-batches";
  }
  std::vector<std::string> notes;
  if (rhythm) notes.push_back("found from the loop's rhythm: forward → backward → optimizer step; no DataLoader");
  if (t.passes > 0 && t.passes != t.steps) {  // not one forward/backward pass per step
    std::string p = Plural(t.passes, "forward/backward pass", "forward/backward passes");
    const bool per_micro_batch = accumulates && t.passes_min == t.micro_batches_min &&
                                 t.passes_max == t.micro_batches_max && t.micro_batches_min == t.micro_batches_max;
    if (!per_micro_batch) {
      p += ", " + (t.passes_min == t.passes_max ? std::to_string(t.passes_max)
                                                : std::to_string(t.passes_min) + " to " + std::to_string(t.passes_max)) +
           " per step";
    }
    if (t.passes_in_optimizer > 0) {
      p += t.passes_in_optimizer == t.passes
               ? ", all run by optimizer.step(closure)"
               : ", " + std::to_string(t.passes_in_optimizer) + " of them run by optimizer.step(closure)";
    }
    notes.push_back(std::move(p));
  }
  if (accumulates) notes.insert(notes.begin() + (rhythm ? 1 : 0), "an optimizer step each");
  for (size_t i = 0; i < notes.size(); ++i) s += (i == 0 ? " (" : "; ") + notes[i];
  if (!notes.empty()) s += ")";
  if (epochs.size() > 1) s += " in " + std::to_string(epochs.size()) + " epochs";
  if (t.eval_steps > 0) s += " and " + Plural(t.eval_steps, "evaluation step", "evaluation steps") + " (left out)";
  s += ": mean " + D(t.step.mean) + ", median " + D(t.step.median) + ", p90 " + D(t.step.p90) + ", std dev " +
       D(t.step.std);
  if (t.warmup_skipped) s += " (step 0 left out as warm-up: " + std::to_string(kWarmupMinSteps) + " or more steps)";
  if (t.recorded_from_delay) s += " (recorded from the --delay window on: no step left out as warm-up)";
  out.push_back(s + ".");

  // A rank bound by the straggler: the first thing to know about its steps.
  if (t.waits_for_rank) {
    const std::string other = "rank " + std::to_string(*t.waits_for_rank);
    out.push_back("Bound by waiting for " + other + ", the straggler (Ranks): " + D(t.straggler_wait_ns) + " of its " +
                  D(t.step.mean) + " step (" + P(Percent(t.straggler_wait_ns, t.step.mean)) +
                  ") is backward and collective time beyond " + other + "'s; faster data or compute here would gain "
                  "nothing until " + other + " is faster.");
  }

  // The verdict.
  const PartShare& wait = t.part(Part::kDataWait);
  const PartShare& big = t.part(t.largest);
  // Without a DataLoader, the data wait is the unrecorded time between cycles (training_steps.h).
  const std::string waiting = rhythm ? "the time between cycles (last backward or optimizer step to the next forward)"
                                     : "waiting for data";
  const std::string wait_numbers =
      P(wait.percent) + " of the step (mean " + D(wait.mean_ns) + " of " + D(t.step.mean);
  const std::string largest = "the largest phase is " + std::string(PartLabel(t.largest)) + ", " + P(big.percent) +
                              " of the step (mean " + D(big.mean_ns) + ")";
  switch (t.verdict) {
    case Verdict::kInputBound:
      out.push_back("Input-bound: " + waiting + " is " + wait_numbers + "; input-bound from " +
                    FormatPercent(kInputBoundPercent) + "%).");
      break;
    case Verdict::kPartlyInputBound:
      out.push_back("Data loading is partly limiting: " + waiting + " is " + wait_numbers + "; " +
                    FormatPercent(kPartlyInputBoundPercent) + "% to " + FormatPercent(kInputBoundPercent) + "%); " +
                    largest + ".");
      break;
    default:
      out.push_back("Compute-bound: " + waiting + " is " + wait_numbers + "; below " +
                    FormatPercent(kPartlyInputBoundPercent) + "%); " + largest + ".");
      break;
  }
  DescribeCollective(t.collective, &out);
  if (t.gpu) DescribeGpuIdle(*t.gpu, &out);  // the GPU during the steps (gpu_idle_text.cc)
  if (const std::string slow = DescribeSlowSteps(t); !slow.empty()) out.push_back(slow);

  if (rhythm && t.verdict != Verdict::kComputeBound) {
    out.push_back("Without a DataLoader, the time between cycles is the loop's own work before each forward (" +
                  D(wait.mean_ns) +
                  " per step): slicing or preparing the batch (get_batch), host-to-device copies, and whatever else it "
                  "does there (clip_grad_norm_, a manual update, loss.item(), logging); if it is batch preparation, a "
                  "DataLoader with workers would prepare batches while the model computes.");
  }

  // The input pipeline.
  if (!t.input) return;
  const InputPipeline& in = *t.input;
  const InputAdvice& a = t.advice;
  const bool waits = t.verdict != Verdict::kComputeBound;
  const bool show = waits || a.startup_significant;
  if (!show) {  // several loaders are listed all the same: which one feeds the steps
    if (in.loaders.size() >= 2)
      for (const LoaderStats& l : in.loaders) out.push_back(LoaderLine(l));
    return;
  }
  if (in.loading == Loading::kWorkers) {
    std::string line = "Input pipeline" + FeedingLoader(in) + ": " +
                       Plural(in.concurrent_workers, "DataLoader worker", "DataLoader workers");
    if (in.workers_recreated())
      line += " (" + std::to_string(in.worker_processes) + " worker processes" +
              (in.loaders.empty() ? "" : ": re-created for each iterator") + ")";
    if (in.busy_percent)
      line +=
          "; while the main process waited for data, the workers were fetching " + P(*in.busy_percent) + " of the time";
    line += "; a batch fetch takes " + D(in.fetch_mean_ns()) + " (" + FetchBreakdown(in) + ").";
    out.push_back(line);
  } else if (in.loading == Loading::kMainProcess) {
    out.push_back("Input pipeline: batches are fetched in the main process (num_workers=0); a batch fetch takes " +
                  D(in.fetch_mean_ns()) + " (" + FetchBreakdown(in) + ").");
  }
  if (in.loaders.size() >= 2 || (in.loaders.size() == 1 && in.other_workers > 0))
    for (const LoaderStats& l : in.loaders) out.push_back(LoaderLine(l));
  const FetchStats& f = in.fetch;
  // Bound by the straggler: advice on its own input would gain nothing (said above).
  switch (t.waits_for_rank ? InputCause::kNone : a.cause) {
    case InputCause::kNotTraced:
      if (in.loading == Loading::kWorkers) {
        out.push_back(
            "The input pipeline cannot be judged: the traced DataLoader workers were not running while the "
            "main process waited for data (the workers of this loader may not be traced).");
        break;
      }
      out.push_back(in.worker_processes > 0
                        ? "The input pipeline cannot be analysed: " +
                              Plural(in.worker_processes, "DataLoader worker was", "DataLoader workers were") +
                              " traced but recorded no batch fetch (Python phases off in the workers?)."
                        : "The input pipeline cannot be analysed: no batch fetch was recorded (run `trainprof run "
                          "--follow-children` so that DataLoader workers are traced).");
      break;
    case InputCause::kMainProcess:
      out.push_back("Data loading runs in the main process (num_workers=0): each batch takes " + D(a.batch_ns) +
                    " to fetch while " + ComputesIn(a) + ": use DataLoader(num_workers=" +
                    (a.workers_needed ? std::to_string(*a.workers_needed) : std::string("N")) + ") (about ceil(" +
                    D(a.batch_ns) + " / " + D(a.compute_ns) +
                    ")) so that batches are prepared while the model computes.");
      break;
    case InputCause::kGetItem:
      out.push_back("__getitem__ is the bottleneck: each batch needs " + D(a.batch_ns) +
                    " of dataset work per worker (" +
                    P(f.getitem_percent()) +
                    " of it in __getitem__); " + WorkerEstimate(in, a, "a faster __getitem__") + ".");
      break;
    case InputCause::kCollate:
      out.push_back("collate_fn is the bottleneck: it takes " +
                    P(f.collate_percent()) + " of each " +
                    D(a.batch_ns) + " batch fetch (" + D(static_cast<double>(f.collate_ns) / f.fetches) +
                    " per batch); " + WorkerEstimate(in, a, "a faster collate_fn") + ".");
      break;
    case InputCause::kFetch:
      out.push_back("The batch fetch outside __getitem__ and collate_fn is the bottleneck (" +
                    P(f.other_percent()) +
                    " of each " + D(a.batch_ns) + " fetch: sampler, __getitems__, IterableDataset iteration); " +
                    WorkerEstimate(in, a, "a faster dataset") + ".");
      break;
    case InputCause::kTransfer: {
      // Only what the trace supports: the hand-over through the workers' result queue (there are
      // workers) and, where a feeding loader says pin_memory=True, the copy into pinned memory.
      const bool pinned = std::any_of(in.loaders.begin(), in.loaders.end(), [](const LoaderStats& l) {
        return l.feeds_training && l.description.pin_memory.value_or(false);
      });
      out.push_back("The workers are fetching only " + P(*in.busy_percent) + " of the time the main process waits (" +
                    (a.batches_per_step > 1 ? D(wait.mean_ns / a.batches_per_step) + " per batch"
                                            : D(wait.mean_ns) + " per step") +
                    ", while a fetch takes " + D(a.batch_ns) +
                    "): the workers are idle for much of the wait, so part of it is in handing the batches over (the "
                    "workers' result queue: pickling and shared memory" +
                    (pinned ? std::string("; with pin_memory=True, the copy of each batch into pinned memory") : "") +
                    ") or in the main process itself; trainprof does not time the hand-over.");
      break;
    }
    case InputCause::kStartup:
      out.push_back("Most of the wait is for workers to start: " + D(static_cast<double>(in.startup_wait_counted_ns)) +
                    " of the " + D(static_cast<double>(wait.total_ns)) + " of data wait (" +
                    P(Percent(static_cast<double>(in.startup_wait_counted_ns), static_cast<double>(wait.total_ns))) +
                    ") falls while workers start (see worker start-up).");
      break;
    case InputCause::kNone: break;
  }

  // Worker start-up.
  if (in.worker_processes == 0 || (in.init_fn_calls == 0 && !in.workers_recreated() && !a.startup_significant)) return;
  std::string line = "Worker start-up: " + Plural(in.worker_processes, "worker process", "worker processes") + " for " +
                     Plural(in.concurrent_workers, "concurrent worker", "concurrent workers");
  if (in.workers_recreated()) line += " (workers were re-created, e.g. each epoch)";
  line += "; start to first batch fetch takes " + D(static_cast<double>(in.startup_ns) / in.worker_processes) +
          " per worker";
  if (in.init_fn_calls > 0) {
    line += ", of which worker_init_fn " + D(static_cast<double>(in.init_fn_ns) / in.init_fn_calls) + " (" +
            Plural(in.init_fn_calls, "call", "calls") + ", " + D(static_cast<double>(in.init_fn_ns)) + " in all)";
  }
  line += "; the main process waited " + D(static_cast<double>(in.startup_wait_ns)) + " for start-ups (" +
          P(a.startup_step_percent) + " of all step time, warm-up included).";
  out.push_back(line);
  if (!a.startup_significant) return;
  std::vector<std::string> fixes;
  if (in.workers_recreated()) fixes.push_back("persistent_workers=True (workers then start once, not every epoch)");
  if (in.init_fn_calls > 0 &&
      Percent(static_cast<double>(in.init_fn_ns), static_cast<double>(in.startup_ns)) >= kInitFnStartupPercent) {
    fixes.push_back("a cheaper worker_init_fn (" + D(static_cast<double>(in.init_fn_ns) / in.init_fn_calls) +
                    " per worker)");
  }
  std::string advice = "Worker start-up costs " + P(a.startup_step_percent) + " of the step time (" +
                       FormatPercent(kStartupStepPercent) + "% or more): ";
  if (fixes.empty()) {
    advice += "the workers' process start and imports dominate a short run";
    if (in.spawned_workers > 0) {
      advice += " (spawned workers import the program's modules each: multiprocessing_context='forkserver', or "
                "'fork' without CUDA in the main process, starts them faster)";
    }
    // persistent_workers=True only where a loader is not persistent already (or says nothing).
    advice += in.workers_persistent() ? "; the workers are persistent already: fewer workers, or more steps to spread it over."
                                      : "; fewer workers or persistent_workers=True for several epochs.";
  } else {
    advice += "use " + fixes[0] + (fixes.size() > 1 ? " and " + fixes[1] : std::string()) + ".";
  }
  out.push_back(advice);
}

}  // namespace

void DescribeProcess(TrainingProcess* t) {
  DescribeSteps(t);
  if (t->steps > 0 && t->coverage.wall_ns > 0) t->text.push_back(CoverageLine(*t));  // last: keeps the others' order
}

std::string DescribeSlowSteps(const TrainingProcess& t) {
  const SlowSteps& sl = t.slow;
  if (sl.listed.empty() && sl.over_threshold > 0) {
    return "Step time is spread, not a few outliers: " + std::to_string(sl.over_threshold) + " of " +
           std::to_string(sl.steps) + " steps take " + Times(kSlowStepTimesMedian) + " the median (" + D(sl.median_ns) +
           ") or more (isolated slow steps are at most " + P(100 * kSlowStepMaxShare) + " of the steps).";
  }
  if (sl.listed.empty()) return "";
  std::string s = sl.count == 1 ? "Isolated slow step: " : "Isolated slow steps (" + std::to_string(sl.count) + "): ";
  for (size_t i = 0; i < sl.listed.size(); ++i) {
    const SlowStep& x = sl.listed[i];
    s += i == 0 ? "step " + std::to_string(x.train_step) + " of " + RankOrPid(t) + " took " +
                      D(static_cast<double>(x.duration_ns)) + ", " + Times(x.times_median) + " the median (" +
                      D(sl.median_ns) + ")"
                : "; step " + std::to_string(x.train_step) + " took " + D(static_cast<double>(x.duration_ns)) +
                      ", " + Times(x.times_median);
  }
  if (sl.count > sl.listed.size()) s += "; and " + std::to_string(sl.count - sl.listed.size()) + " more";
  if (sl.over_threshold > sl.count) {
    s += "; " + std::to_string(sl.over_threshold - sl.count) + " other steps also took " + Times(kSlowStepTimesMedian) +
         " the median or more, each under a " + (kSlowStepGap == 3 ? std::string("third") : "fraction") + " of these";
  }
  return s + " (training steps numbered from 0; a slow step takes " + Times(kSlowStepTimesMedian) +
         " the median and " + D(static_cast<double>(kSlowStepMinExcessNs)) +
         " more than it or more; its time is in the statistics above).";
}

std::vector<std::string> DescribeRanks(const RankSync& rs, const std::vector<HostClock>& clocks,
                                       const std::string& reference) {
  std::vector<std::string> out;
  for (int64_t r : rs.duplicate_ranks) {
    out.push_back("Rank " + std::to_string(r) +
                  " appears in several processes (restarted?): the one with most steps is used.");
  }
  if (rs.clock == "realtime") {
    std::set<std::string> host_set;
    for (const RankRow& r : rs.ranks) host_set.insert(r.host);
    const std::string hosts = "Ranks on " + std::to_string(host_set.size()) + " hosts: arrivals compared ";
    std::string unaligned;
    uint64_t uncertainty = 0;
    for (const HostClock& h : clocks) {
      if (host_set.count(h.host) == 0) continue;  // no compared rank there
      if (h.source == "wall_clock") unaligned += (unaligned.empty() ? "" : ", ") + h.host;
      uncertainty = std::max(uncertainty, h.uncertainty_ns);
    }
    if (clocks.empty()) {
      out.push_back(hosts + "on CLOCK_REALTIME (aligned with each process's start), so lateness is only as exact as "
                            "the hosts' clock synchronisation.");
    } else if (unaligned.empty()) {
      out.push_back(hosts + "on one clock: each host's wall clock aligned to " + reference +
                    "'s (the host of the lowest rank) from instants the ranks share, within " +
                    D(static_cast<double>(uncertainty)) + " (Hosts).");
    } else {
      out.push_back(hosts + "on CLOCK_REALTIME: " + unaligned + " shares no barrier, blocking collective, NCCL kernel "
                    "or init_process_group with " + reference + ", so its wall clock is taken as it is and lateness "
                    "across hosts is only as exact as the hosts' clock synchronisation (Hosts).");
    }
  }
  if (!rs.unplaced_ranks.empty()) {
    std::string list;
    for (int64_t r : rs.unplaced_ranks) list += (list.empty() ? "" : ", ") + std::to_string(r);
    out.push_back(std::string(rs.unplaced_ranks.size() == 1 ? "Rank " : "Ranks ") + list +
                  " left out of the comparison: their host's files give no wall-clock start (damaged headers) and "
                  "share no instant with " + (reference.empty() ? std::string("the other hosts") : reference) +
                  ", so their arrivals cannot be put beside the others'.");
  }
  if (!rs.synchronised) {
    // Ranks trained apart (an ensemble, a sweep under one launcher): how far apart their steps run.
    const RankRow* slow = nullptr;
    const RankRow* fast = nullptr;
    for (const RankRow& r : rs.ranks) {
      if (r.steps == 0) continue;
      if (slow == nullptr || r.mean_step_ns > slow->mean_step_ns) slow = &r;
      if (fast == nullptr || r.mean_step_ns < fast->mean_step_ns) fast = &r;
    }
    std::string line =
        "The ranks do not synchronise inside a step (no DistributedDataParallel, collective or NCCL kernel in their "
        "training steps): each trains on its own and none waits for another, so no straggler is named";
    if (slow != nullptr && fast != nullptr && slow != fast && fast->mean_step_ns > 0) {
      line += "; the slowest, rank " + std::to_string(slow->rank) + ", takes " + D(slow->mean_step_ns) + " a step, " +
              P(Percent(slow->mean_step_ns - fast->mean_step_ns, fast->mean_step_ns)) + " longer than the fastest, rank " +
              std::to_string(fast->rank) + " (" + D(fast->mean_step_ns) + ")";
    }
    out.push_back(line + ".");
    return out;
  }
  if (rs.clocks_too_uncertain) {
    out.push_back("No straggler named across hosts: the hosts' clocks are aligned only within " +
                  D(static_cast<double>(rs.clock_uncertainty_ns)) + " (Hosts), not less than the lateness a "
                  "straggler needs (" + D(rs.late_threshold_ns) + "); the Ranks table's lateness is that uncertain.");
    return out;
  }
  if (rs.matched_steps == 0 || rs.latest < 0) {
    out.push_back(
        "No straggler analysis: no step could be matched across the ranks (a rank without training steps, or "
        "steps without forward, backward or collective).");
    return out;
  }
  const RankRow& s = rs.ranks[rs.latest];
  if (rs.drift) {
    std::string line = "No straggler: the ranks synchronise, yet rank " + std::to_string(s.rank) + "'s steps drift from the "
                       "others': ";
    const std::string thirds = " in the first third of the " +
                               Plural(rs.matched_steps, "matched step", "matched steps");
    if (*s.median_lateness_ns >= rs.mean_step_ns) {
      line += "it reaches " + ArrivalPoint(s.arrival) + " " + D(*s.median_lateness_ns) +
              " after the first at the median, against a mean step of " + D(rs.mean_step_ns);
      if (rs.lateness_tail_ns > rs.lateness_head_ns) {
        line += ", " + D(rs.lateness_head_ns) + thirds + " and " + D(rs.lateness_tail_ns) + " in the last";
      }
    } else {
      line += "its lateness at " + ArrivalPoint(s.arrival) + " grows from " + D(rs.lateness_head_ns) + thirds +
              " to " + D(rs.lateness_tail_ns) + " in the last, by more than a mean step (" + D(rs.mean_step_ns) + ")";
    }
    out.push_back(line + ": ranks that meet in every step are never a step apart, so the k-th steps do not line "
                         "up (a restarted rank, steps skipped on one rank) and the lateness is no waiting.");
    return out;
  }
  const double pct = Percent(*s.mean_lateness_ns, rs.mean_step_ns);
  const std::string over = " over " + Plural(rs.matched_steps, "matched step", "matched steps") +
                           (rs.warmup_skipped ? " (step 0 left out)" : "");
  const std::string rule = "a straggler is late by " + FormatPercent(kStragglerStepPercent) + "% of the mean step and " +
                           D(static_cast<double>(kStragglerMinNs)) + " or more at the median, and last in " +
                           FormatPercent(kStragglerLastShare * 100) + "% or more of the matched steps";
  const std::string last_pct = P(s.last_share.value_or(0) * 100);
  std::vector<const RankRow*> late_at_median;  // late by the threshold in half the steps or more
  const RankRow* most_last = nullptr;
  for (const RankRow& r : rs.ranks) {
    if (r.median_lateness_ns && *r.median_lateness_ns > 0 && *r.median_lateness_ns >= rs.late_threshold_ns)
      late_at_median.push_back(&r);
    if (r.last_share && (!most_last || *r.last_share > *most_last->last_share)) most_last = &r;
  }
  if (!rs.straggler && !late_at_median.empty()) {
    // Late at the median but seldom last: several ranks are late together.
    constexpr size_t kNamed = 4;
    std::string names, medians;
    for (size_t i = 0; i < late_at_median.size() && i < kNamed; ++i) {
      const bool last_named = i + 1 == late_at_median.size();  // "1, 2 and 3"; "1, 2, 3, 4 and 2 more"
      const std::string sep = i == 0 ? "" : last_named ? " and " : ", ";
      names += sep + std::to_string(late_at_median[i]->rank);
      medians += (i == 0 ? "" : ", ") + std::string("rank ") + std::to_string(late_at_median[i]->rank) + " " +
                 D(*late_at_median[i]->median_lateness_ns);
    }
    if (late_at_median.size() > kNamed) names += " and " + std::to_string(late_at_median.size() - kNamed) + " more";
    out.push_back("No single straggler: " + std::string(late_at_median.size() == 1 ? "rank " : "ranks ") + names +
                  (late_at_median.size() == 1 ? " is" : " are") + " late by the threshold (" +
                  D(rs.late_threshold_ns) + ") or more at the median (" + medians + "), but none arrives last in " +
                  FormatPercent(kStragglerLastShare * 100) + "% or more of the " +
                  Plural(rs.matched_steps, "matched step", "matched steps") + " (most often last: rank " +
                  std::to_string(most_last->rank) + ", in " + P(*most_last->last_share * 100) +
                  "): they are late together" + (rs.warmup_skipped ? " (step 0 left out)." : "."));
    return out;
  }
  if (!rs.straggler && s.late_steps > 0) {
    // Late in some steps only: name them, with the median and mean as context.
    std::string line = "No straggler: rank " + std::to_string(s.rank) + " was late in " + std::to_string(s.late_steps) +
                       " of " + Plural(rs.matched_steps, "matched step", "matched steps") + " (";
    for (size_t i = 0; i < s.late_step_list.size(); ++i) {
      const LateStep& l = s.late_step_list[i];
      line += (i == 0 ? "step " : "; step ") + std::to_string(l.train_step) + ", " +
              D(static_cast<double>(l.lateness_ns));
    }
    if (s.late_steps > s.late_step_list.size()) line += "; ...";
    out.push_back(line + "; late: " + D(rs.late_threshold_ns) + " or more), not consistently: its median lateness is " +
                  D(*s.median_lateness_ns) + ", its mean " + D(*s.mean_lateness_ns) + " (" + P(pct) +
                  " of the mean step " + D(rs.mean_step_ns) + "), and it arrived last in " + last_pct + " of them" +
                  (rs.warmup_skipped ? " (step 0 left out)" : "") + " (" + rule + ").");
    return out;
  }
  if (!rs.straggler) {
    out.push_back("No straggler: the latest rank, rank " + std::to_string(s.rank) + ", reaches " +
                  ArrivalPoint(s.arrival) + " " + D(*s.mean_lateness_ns) + " after the first on average (median " +
                  D(*s.median_lateness_ns) + "), " + P(pct) + " of the mean step " + D(rs.mean_step_ns) + over + " (" +
                  rule + ").");
    return out;
  }
  std::string first = "the first rank to arrive";
  if (rs.ranks.size() == 2) first = "rank " + std::to_string(rs.ranks[rs.latest == 0 ? 1 : 0].rank);
  std::string line = "rank " + std::to_string(s.rank) + " is the straggler: it reaches " + ArrivalPoint(s.arrival) +
                     " " + D(*s.median_lateness_ns) + " (median; mean " + D(*s.mean_lateness_ns) + ", " + P(pct) +
                     " of the mean step " + D(rs.mean_step_ns) + ") after " + first + " and arrives last in " +
                     P(Percent(static_cast<double>(s.last_steps), static_cast<double>(rs.matched_steps))) +
                     " of steps (" + std::to_string(s.last_steps) + " of " + std::to_string(rs.matched_steps) + ")";
  std::vector<std::string> waits;
  for (const RankRow& r : rs.ranks) {
    if (r.rank == s.rank || !r.wait_ns) continue;
    waits.push_back("rank " + std::to_string(r.rank) + " waits " + D(*r.wait_ns) + " per step");
  }
  if (waits.size() > 3) {
    double sum = 0;
    for (const RankRow& r : rs.ranks) sum += r.rank == s.rank || !r.wait_ns ? 0 : *r.wait_ns;
    line += "; the other ranks wait " + D(sum / static_cast<double>(waits.size())) + " per step on average for it";
  } else {
    for (size_t i = 0; i < waits.size(); ++i) line += (i == 0 ? "; " : ", ") + waits[i];
    if (!waits.empty()) line += " for it";
  }
  out.push_back(line + " (backward+collective beyond rank " + std::to_string(s.rank) + "'s)" + over + ".");
  return out;
}
}  // namespace trainprof::collector
