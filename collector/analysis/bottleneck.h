// The bottleneck verdict: for each training process (a process that waits on a DataLoader, or
// whose loop runs forward → backward → optimizer step without one), its
// steps and their breakdown, whether it is input-bound and where in the input pipeline, and with
// several ranks, the straggler. Every sentence carries the numbers behind it.
// Definitions, thresholds and their reasons: docs/analysis.md.
//
//   RunView (per process: facts, phases, StepsGpu) ─► SplitSteps ─► step statistics, parts, verdict
//                                                      ─► AnalyzeInput (workers)  ─► cause, advice
//                                                      ─► AnalyzeRanks (ranks)    ─► straggler
//                                                      ─► StepsGpu (per process: steps_gpu.h,
//                                                         made where it is summarised) ─► collectives,
//                                                         GPU busy, idle by host activity
//         ─► DescribeProcess / DescribeRanks (bottleneck_text.cc) ─► sentences with their numbers
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collector/analysis/collectives.h"
#include "collector/analysis/coverage.h"
#include "collector/analysis/gpu_idle.h"
#include "collector/analysis/input_pipeline.h"
#include "collector/analysis/process_facts.h"
#include "collector/model/model.h"
#include "collector/analysis/rank_spread.h"
#include "collector/analysis/rank_sync.h"
#include "collector/analysis/slow_steps.h"
#include "collector/analysis/steps_gpu.h"
#include "collector/analysis/training_steps.h"
#include "collector/base/sample_stats.h"

namespace trainprof::collector {

// Thresholds (docs/analysis.md, "Thresholds").
inline constexpr double kInputBoundPercent = 20;        ///< data wait share of the step: input-bound
inline constexpr double kPartlyInputBoundPercent = 5;   ///< ... "partly limiting"
inline constexpr double kWorkersBusyPercent = 80;       ///< workers busy during waits: workers are the limit
inline constexpr size_t kWarmupMinSteps = 5;            ///< steps from which step 0 is left out as warm-up
inline constexpr double kStragglerStepPercent = 10;     ///< lateness share of the mean step ...
inline constexpr uint64_t kStragglerMinNs = 1'000'000;  ///< ... and at least this: a straggler
inline constexpr double kStartupStepPercent = 10;       ///< start-up wait share of all step time: advice
inline constexpr double kInitFnStartupPercent = 50;     ///< worker_init_fn share of start-up: name it

struct PartShare {
  uint64_t total_ns = 0;  ///< over the steps in the statistics
  double mean_ns = 0;     ///< per step
  double percent = 0;     ///< total / summed step time
};

/// One row of steps.csv.
struct StepRow {
  uint64_t step = 0;                   ///< position among the process's steps (train and eval)
  std::optional<uint64_t> train_step;  ///< k: index among training steps (matched across ranks)
  bool eval = false;
  bool in_statistics = false;  ///< not warm-up, not eval
  uint32_t epoch = 0;
  uint32_t tid = 0;
  uint32_t data_waits = 1;
  uint32_t micro_batches = 1;  ///< Step::micro_batches
  uint32_t passes = 0;         ///< Step::passes (forward/backward passes)
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  std::array<uint64_t, kPartCount> parts{};
  Arrival arrival = Arrival::kNone;
  std::optional<uint64_t> arrival_ns;
  std::optional<uint64_t> lateness_ns;  ///< with several ranks, on matched steps
};

/// kEvaluationOnly: the process's steps are all evaluation steps (forwards under torch.no_grad() or
/// eval(), no backward or optimizer step): described, never given a training verdict or advice.
enum class Verdict : uint8_t { kNoSteps, kComputeBound, kPartlyInputBound, kInputBound, kEvaluationOnly };
/// "no_steps", "compute_bound", "partly_input_bound", "input_bound", "evaluation_only"
const char* VerdictName(Verdict v);
const char* VerdictLabel(Verdict v);  ///< the text report's: "no steps", "compute-bound", "partly input-bound", ...

/// What limits the input pipeline, when the data wait is 5% or more (docs/analysis.md, "Advice").
enum class InputCause : uint8_t { kNone, kNotTraced, kMainProcess, kGetItem, kCollate, kFetch, kTransfer, kStartup };
const char* InputCauseName(InputCause c);  ///< "", "not_traced", "main_process", "getitem", ...

struct InputAdvice {
  InputCause cause = InputCause::kNone;
  double batch_ns = 0;                     ///< X: mean fetch time of one batch (per worker)
  /// Y: mean step time minus data wait, per batch: divided by the steps' mean micro-batches
  /// (gradient accumulation: a step consumes that many batches of the loader).
  double compute_ns = 0;
  double batches_per_step = 1;  ///< the training steps' mean micro-batches (1 without accumulation)
  std::optional<double> delivery_ns;       ///< X / N: a batch every ... from N workers
  std::optional<uint64_t> workers_needed;  ///< ceil(X / Y)
  bool startup_significant = false;        ///< start-up wait ≥ kStartupStepPercent of all step time
  double startup_step_percent = 0;
};

struct TrainingProcess {
  int process = -1;  ///< index into Trace::processes (and Report::processes)
  int32_t pid = 0;
  std::string host;
  std::optional<int64_t> rank;
  std::string role;
  uint64_t steps = 0;          ///< training steps
  uint64_t eval_steps = 0;     ///< steps without backward/optimizer beside training steps
  uint64_t dropped_steps = 0;  ///< last data waits with no phase after them
  uint64_t data_waits = 0;
  uint64_t epoch_ends = 0;  ///< StopIteration calls (kDataEnd)
  /// Over the training steps (each an optimizer step where the process records them): the fewest
  /// and most micro-batches of one, their forward/backward passes, and of those the passes inside
  /// an optimizer step (optimizer.step(closure)). docs/analysis.md, "Steps".
  uint32_t micro_batches_min = 0, micro_batches_max = 0;
  double micro_batches_mean = 1;
  uint64_t passes = 0, passes_in_optimizer = 0;
  uint32_t passes_min = 0, passes_max = 0;  ///< the fewest and most passes of one training step
  /// How the steps were found: "dataloader" (DataLoader waits) or "loop_rhythm" (no DataLoader wait:
  /// the forward → backward → optimizer cycle; "data wait" is then the time between cycles).
  std::string steps_found_by = "dataloader";
  Coverage coverage;  ///< share of the recorded time the training steps cover, and the rest
  bool warmup_skipped = false;
  bool recorded_from_delay = false;  ///< a --delay window: the first recorded step is no warm-up
  SampleStats step;  ///< step durations (ns) over the steps in the statistics
  /// kEvaluationOnly: the evaluation steps' durations (ns), and the data wait's share of their time.
  SampleStats eval_step;
  double eval_data_wait_percent = 0;
  SlowSteps slow;    ///< isolated slow steps among them (slow_steps.h)
  std::array<PartShare, kPartCount> parts{};
  double compute_mean_ns = 0;  ///< forward + backward + optimizer per step
  Verdict verdict = Verdict::kNoSteps;
  Part largest = Part::kOther;         ///< largest part other than data wait
  std::optional<InputPipeline> input;  ///< when workers or fetches were recorded
  InputAdvice advice;
  std::optional<GpuIdle> gpu;  ///< when some process of the trace has CUDA records (gpu_idle.h)
  CollectiveInfo collective;   ///< where the Collective part comes from, DDP use (collectives.h)
  /// A rank that waits for the straggler (RankRow::wait_ns: backward + collective beyond the
  /// straggler's) for kStragglerStepPercent or more of its mean step: the straggler's rank and that
  /// wait (ns per step). Its steps are bound by the straggler: told first, no input advice.
  std::optional<int64_t> waits_for_rank;
  double straggler_wait_ns = 0;
  std::vector<StepRow> step_rows;
  std::vector<std::string> text;  ///< the verdict sentences, each with its numbers
  /// Its trace files that are damaged (cut, records lost): its steps and verdict are of what was
  /// read from them only (said in `text`).
  std::vector<std::string> damaged_files;

  const PartShare& part(Part p) const { return parts[static_cast<size_t>(p)]; }
};

/// Whether the trace has CUDA data at all; per training process: TrainingProcess::gpu.
struct GpuActivity {
  bool recorded = false;  ///< some process has CUDA records
};

struct Bottleneck {
  std::string status = "no_phases";        ///< "ok", "no_phases", "no_steps"
  std::string message;                     ///< why there is no verdict (status != "ok")
  std::vector<TrainingProcess> processes;  ///< ranks by rank, then the others in tree order
  std::optional<RankSync> ranks;           ///< two or more training processes with a rank
  std::vector<std::string> rank_text;
  /// The spread of the ranks' figures (rank_spread.h): two or more training processes with a
  /// rank and steps.
  std::optional<RankSpread> spread;
  GpuActivity gpu;
};

/// The bottleneck analysis of `run`'s processes (a report's summaries: collector/summary/), its
/// GPU parts (collectives, GPU idle) from each process's StepsGpu (run.gpu, steps_gpu.h).
Bottleneck AnalyzeBottleneck(const RunView& run);

// The sentences (bottleneck_text.cc), from the numbers above.
/// Fills t->text: the steps, the verdict, the input pipeline and its advice, worker start-up.
void DescribeProcess(TrainingProcess* t);
/// The straggler sentence (or why there is none), and notes on clocks and duplicate ranks.
/// `clocks` and `reference`: Trace::host_clocks and clock_reference (analysis/host_clocks.h).
std::vector<std::string> DescribeRanks(const RankSync& ranks, const std::vector<HostClock>& clocks,
                                       const std::string& reference);
/// "step 10 of rank 0 took 312 ms, 26× the median (12 ms)", more steps and the count; "" without.
std::string DescribeSlowSteps(const TrainingProcess& t);

}  // namespace trainprof::collector
