// The bottleneck verdict on synthetic runs with planted bottlenecks and exact timings: the numbers,
// the sentences, and the JSON/CSV/text renderings (docs/analysis.md).
#include "collector/analysis/bottleneck.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "collector/render/render.h"
#include "collector/report/report.h"
#include "phase_builder.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::kMs;
using test::PhaseThread;
using test::StepPlan;
using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

constexpr uint64_t T0 = 1'000'000'000;
constexpr StepPlan kCompute10 = {.forward = 4 * kMs, .backward = 5 * kMs, .optimizer = 1 * kMs};

StepPlan WithWait(StepPlan p, uint64_t wait) {
  p.wait = wait;
  return p;
}

/// A main process (pid 200, from T0) and its DataLoader workers (pids 201, ...).
struct TrainRun {
  TraceBuilder main{200, 1, T0};
  PhaseThread m{main, 200};
  std::vector<std::unique_ptr<TraceBuilder>> worker_files;

  TrainRun() { main.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 2'000 * kMs); }

  /// A worker process alive over [start, end).
  PhaseThread Worker(uint64_t start, uint64_t end) {
    return test::WorkerProcess(&worker_files, 201 + static_cast<int32_t>(worker_files.size()), 200, start, end);
  }

  Trace Load() const {
    std::vector<const TraceBuilder*> all = {&main};
    for (const auto& w : worker_files) all.push_back(w.get());
    return TraceOf(all);
  }
  Report Analyze() const { return collector::Analyze(Load(), {}); }
};

using test::Join;
using test::Says;

// 10 steps of 40 ms: 30 ms waiting for data, 10 ms of compute; 2 workers fetch back to back, each
// fetch 80 ms: `items` __getitem__ + collate + other.
TrainRun SlowLoader(uint64_t item, uint64_t collate, int items = 8) {
  TrainRun r;
  uint64_t t = T0 + 10 * kMs;
  for (int i = 0; i < 10; ++i) t = r.m.Step(t, WithWait(kCompute10, 30 * kMs));
  for (int w = 0; w < 2; ++w) {
    PhaseThread pw = r.Worker(T0 + 1 * kMs, T0 + 500 * kMs);
    uint64_t f = T0 + 3 * kMs;
    const uint64_t other = 80 * kMs - items * item - collate;
    for (int k = 0; k < 6; ++k) f = pw.Fetch(f, items, item, collate, other);
  }
  return r;
}

TEST(Bottleneck, InputBoundThroughSlowGetItem) {
  Report report = SlowLoader(9'500'000, 3 * kMs).Analyze();
  const Bottleneck& b = report.bottleneck;
  EXPECT_EQ(b.status, "ok");
  ASSERT_EQ(b.processes.size(), 1u);
  const TrainingProcess& t = b.processes[0];
  EXPECT_EQ(t.pid, 200);
  EXPECT_EQ(t.steps, 10u);
  EXPECT_TRUE(t.warmup_skipped);
  EXPECT_EQ(t.step.count, 9u);
  EXPECT_DOUBLE_EQ(t.step.mean, 40.0 * kMs);
  EXPECT_DOUBLE_EQ(t.part(Part::kDataWait).percent, 75.0);
  EXPECT_DOUBLE_EQ(t.part(Part::kBackward).percent, 12.5);
  EXPECT_EQ(t.verdict, Verdict::kInputBound);
  ASSERT_TRUE(t.input);
  const InputPipeline& in = *t.input;
  EXPECT_EQ(in.loading, Loading::kWorkers);
  EXPECT_EQ(in.worker_processes, 2u);
  EXPECT_EQ(in.concurrent_workers, 2u);
  EXPECT_FALSE(in.workers_recreated());
  ASSERT_TRUE(in.busy_percent);
  EXPECT_DOUBLE_EQ(*in.busy_percent, 100.0);
  EXPECT_EQ(in.fetch.fetches, 12u);
  EXPECT_DOUBLE_EQ(in.fetch_mean_ns(), 80.0 * kMs);
  EXPECT_EQ(in.fetch.getitem_ns, 12 * 76 * kMs);
  EXPECT_DOUBLE_EQ(in.getitem_mean_ns(), 9'500'000.0);
  EXPECT_DOUBLE_EQ(in.items_per_batch(), 8.0);
  EXPECT_EQ(in.startup_wait_ns, 0u);
  EXPECT_EQ(t.advice.cause, InputCause::kGetItem);
  EXPECT_DOUBLE_EQ(t.advice.compute_ns, 10.0 * kMs);
  EXPECT_DOUBLE_EQ(*t.advice.delivery_ns, 40.0 * kMs);
  EXPECT_EQ(t.advice.workers_needed, 8u);
  EXPECT_TRUE(Says(
      t.text, "Input-bound: waiting for data is 75.0% of the step (mean 30.0 ms of 40.0 ms; input-bound from 20.0%)."));
  EXPECT_TRUE(Says(t.text,
                   "Input pipeline: 2 DataLoader workers; while the main process waited for data, the workers were "
                   "fetching 100.0% of the time; a batch fetch takes 80.0 ms (__getitem__ 95.0%, collate_fn 3.8%, "
                   "other 1.2%; 8 items of 9.50 ms each)."));
  EXPECT_TRUE(Says(t.text,
                   "__getitem__ is the bottleneck: each batch needs 80.0 ms of dataset work per worker (95.0% of "
                   "it in __getitem__); with 2 workers the loader delivers a batch every 40.0 ms while a step "
                   "computes in 10.0 ms: use more workers (about 8 = ceil(80.0 ms / 10.0 ms), given that many "
                   "free CPU cores) or a faster __getitem__."));
  EXPECT_FALSE(Says(t.text, "Worker start-up"));
}

// A validation loader's workers start after the last training step: not this loader's workers.
TEST(Bottleneck, ValidationLoaderWorkersAreLeftOut) {
  TrainRun r = SlowLoader(9'500'000, 3 * kMs);
  PhaseThread val = r.Worker(T0 + 1'000 * kMs, T0 + 1'100 * kMs);
  val.Fetch(T0 + 1'001 * kMs, 4, kMs, kMs);
  const Report report = r.Analyze();
  const InputPipeline& in = *report.bottleneck.processes.at(0).input;
  EXPECT_EQ(in.worker_processes, 2u);
  EXPECT_EQ(in.other_workers, 1u);
  EXPECT_FALSE(in.workers_recreated());
  EXPECT_EQ(in.fetch.fetches, 12u);
}

TEST(Bottleneck, InputBoundThroughSlowCollate) {
  Report report = SlowLoader(1 * kMs, 72 * kMs).Analyze();
  const TrainingProcess& t = report.bottleneck.processes.at(0);
  EXPECT_EQ(t.verdict, Verdict::kInputBound);
  EXPECT_EQ(t.advice.cause, InputCause::kCollate);
  EXPECT_TRUE(Says(t.text,
                   "collate_fn is the bottleneck: it takes 90.0% of each 80.0 ms batch fetch (72.0 ms per batch); "
                   "with 2 workers the loader delivers a batch every 40.0 ms while a step computes in 10.0 ms: use "
                   "more workers (about 8 = ceil(80.0 ms / 10.0 ms), given that many free CPU cores) or a faster "
                   "collate_fn."));
}

// Fetches take 2 ms and happen while the main process computes; it still waits 30 ms a step. The
// hand-over is named with what the loader says: pin_memory's copy only where pin_memory=True (a
// new-user pass got "pin_memory, large batches" with pin_memory=False and batches of 4).
TEST(Bottleneck, IdleWorkersPointToTransfer) {
  for (const char* pin : {"", "0", "1"}) {
    SCOPED_TRACE(std::string("pin_memory=") + pin);
    TrainRun r;
    const std::string loader =
        std::string("DataLoader#1 dataset=Slow batch_size=4 num_workers=2 persistent_workers=0 pin_memory=") + pin;
    const bool marks = *pin != 0;  // "": an older shim, no DataLoader marks
    if (marks) r.m.Mark(T0 + 500'000, Phase::kDataLoader, loader);
    uint64_t t = T0 + 10 * kMs;
    std::vector<uint64_t> step_starts;
    for (int i = 0; i < 10; ++i) {
      step_starts.push_back(t);
      t = marks ? r.m.Step(r.m.LoaderWait(t, 30 * kMs, loader), kCompute10) : r.m.Step(t, WithWait(kCompute10, 30 * kMs));
    }
    for (int w = 0; w < 2; ++w) {
      PhaseThread pw = r.Worker(T0 + 1 * kMs, T0 + 500 * kMs);
      if (marks) pw.Mark(T0 + 2 * kMs, Phase::kDataLoader, "DataLoader#? dataset=Slow num_workers=2 worker_id=" + std::to_string(w));
      for (size_t i = static_cast<size_t>(w); i < step_starts.size(); i += 2)
        pw.Fetch(step_starts[i] + 31 * kMs, 2, 500'000, kMs);
    }
    const Report report = r.Analyze();
    const TrainingProcess& tp = report.bottleneck.processes.at(0);
    EXPECT_EQ(tp.verdict, Verdict::kInputBound);
    ASSERT_TRUE(tp.input && tp.input->busy_percent);
    EXPECT_DOUBLE_EQ(*tp.input->busy_percent, 0.0);
    EXPECT_EQ(tp.advice.cause, InputCause::kTransfer);
    const std::string pinned = std::string(pin) == "1" ? "; with pin_memory=True, the copy of each batch into pinned memory" : "";
    EXPECT_TRUE(Says(tp.text,
                     "The workers are fetching only 0.0% of the time the main process waits (30.0 ms per step, while "
                     "a fetch takes 2.00 ms): the workers are idle for much of the wait, so part of it is in handing the "
                     "batches over (the workers' result queue: pickling and shared memory" + pinned +
                     ") or in the main process itself; trainprof does not time the hand-over."))
        << ::testing::PrintToString(tp.text);
    EXPECT_FALSE(Says(tp.text, "large batches"));
  }
}

TEST(Bottleneck, MainProcessLoadingWithNumWorkersZero) {
  TrainRun r;
  uint64_t t = T0 + 10 * kMs;
  for (int i = 0; i < 4; ++i) {
    r.m.Push(t, Phase::kDataWait);
    r.m.Fetch(t + 500'000, 8, 2 * kMs, 3 * kMs);  // 19 ms
    r.m.Pop(t + 20 * kMs);
    t = r.m.Step(t + 20 * kMs, kCompute10);
  }
  const Report report = r.Analyze();
  const TrainingProcess& tp = report.bottleneck.processes.at(0);
  EXPECT_FALSE(tp.warmup_skipped);  // 4 steps
  EXPECT_EQ(tp.step.count, 4u);
  EXPECT_EQ(tp.verdict, Verdict::kInputBound);
  ASSERT_TRUE(tp.input);
  EXPECT_EQ(tp.input->loading, Loading::kMainProcess);
  EXPECT_EQ(tp.advice.cause, InputCause::kMainProcess);
  EXPECT_EQ(tp.advice.workers_needed, 2u);
  EXPECT_TRUE(Says(tp.text,
                   "Data loading runs in the main process (num_workers=0): each batch takes 19.0 ms to fetch while "
                   "a step computes in 10.0 ms: use DataLoader(num_workers=2) (about ceil(19.0 ms / 10.0 ms)) so "
                   "that batches are prepared while the model computes."));
}

TEST(Bottleneck, InputBoundWithoutTracedWorkersSaysHowToTraceThem) {
  TrainRun r;
  uint64_t t = T0 + 10 * kMs;
  for (int i = 0; i < 3; ++i) t = r.m.Step(t, WithWait(kCompute10, 10 * kMs));
  const Report report = r.Analyze();
  const TrainingProcess& tp = report.bottleneck.processes.at(0);
  EXPECT_EQ(tp.verdict, Verdict::kInputBound);
  EXPECT_EQ(tp.advice.cause, InputCause::kNotTraced);
  EXPECT_TRUE(Says(tp.text, "--follow-children"));
}

TEST(Bottleneck, ComputeBoundNamesBackward) {
  TrainRun r;
  uint64_t t = T0 + 10 * kMs;
  for (int i = 0; i < 6; ++i) {
    t = r.m.Step(t, {.wait = 500'000, .forward = 5 * kMs, .backward = 20 * kMs, .optimizer = 2 * kMs});
  }
  const Report report = r.Analyze();
  const TrainingProcess& tp = report.bottleneck.processes.at(0);
  EXPECT_EQ(tp.verdict, Verdict::kComputeBound);
  EXPECT_EQ(tp.largest, Part::kBackward);
  EXPECT_NEAR(tp.part(Part::kBackward).percent, 2000.0 / 27.5, 1e-9);
  EXPECT_DOUBLE_EQ(tp.compute_mean_ns, 27.0 * kMs);
  EXPECT_EQ(tp.advice.cause, InputCause::kNone);
  EXPECT_TRUE(Says(tp.text,
                   "Compute-bound: waiting for data is 1.8% of the step (mean 500 µs of 27.5 ms; below 5.0%); the "
                   "largest phase is backward, 72.7% of the step (mean 20.0 ms)."));
  EXPECT_EQ(tp.text.size(), 3u) << Join(tp.text);  // steps, verdict, coverage: no input-pipeline lines
  EXPECT_TRUE(Says(tp.text, "Steps, found from the DataLoader waits, cover ")) << Join(tp.text);
}

TEST(Bottleneck, PartlyInputBound) {
  TrainRun r;
  uint64_t t = T0 + 10 * kMs;
  for (int i = 0; i < 3; ++i) t = r.m.Step(t, WithWait(kCompute10, 1 * kMs));  // 1 of 11 ms: 9.1%
  const Report report = r.Analyze();
  const TrainingProcess& tp = report.bottleneck.processes.at(0);
  EXPECT_EQ(tp.verdict, Verdict::kPartlyInputBound);
  EXPECT_TRUE(Says(tp.text, "Data loading is partly limiting: waiting for data is 9.1% of the step"));
}

// The step is the optimizer step, and the text says what one holds (issue 37, classes 1 and 6):
// 6 steps of 2 micro-batches (wait, forward, backward; wait, forward, backward, optimizer step),
// then 6 LBFGS steps whose closure runs 3 passes.
TEST(Bottleneck, AnOptimizerStepSaysItsMicroBatchesAndPasses) {
  {
    TrainRun r;
    uint64_t t = T0 + 10 * kMs;
    for (int i = 0; i < 6; ++i) {
      t = r.m.Step(t, {.wait = 2 * kMs, .forward = 4 * kMs, .backward = 5 * kMs});
      t = r.m.Step(t, WithWait(kCompute10, 2 * kMs));
    }
    Report report = r.Analyze();
    const TrainingProcess& tp = report.bottleneck.processes.at(0);
    EXPECT_EQ(tp.steps, 6u);
    EXPECT_EQ(tp.micro_batches_min, 2u);
    EXPECT_EQ(tp.micro_batches_max, 2u);
    EXPECT_EQ(tp.passes, 12u);
    EXPECT_DOUBLE_EQ(tp.step.mean, 23.0 * kMs);
    EXPECT_TRUE(Says(tp.text, "pid 200: 6 training steps of 2 micro-batches each (an optimizer step each; 12 "
                              "forward/backward passes): mean 23.0 ms")) << Join(tp.text);
  }
  {
    TrainRun r;
    uint64_t t = T0 + 10 * kMs;
    for (int i = 0; i < 6; ++i) {
      r.m.Range(t, t + 2 * kMs, Phase::kDataWait);
      t += 2 * kMs;
      r.m.Push(t, Phase::kOptimizerStep, "Optimizer.step#LBFGS.step");
      for (int pass = 0; pass < 3; ++pass, t += 4 * kMs) {
        r.m.Range(t, t + 2 * kMs, Phase::kForward);
        r.m.Range(t + 2 * kMs, t + 4 * kMs, Phase::kBackward);
      }
      r.m.Pop(t);
    }
    Report report = r.Analyze();
    const TrainingProcess& tp = report.bottleneck.processes.at(0);
    EXPECT_EQ(tp.steps, 6u);
    EXPECT_EQ(tp.passes_in_optimizer, 18u);
    EXPECT_TRUE(Says(tp.text, "pid 200: 6 training steps (18 forward/backward passes, 3 per step, all run by "
                              "optimizer.step(closure)): mean 14.0 ms")) << Join(tp.text);
  }
  {  // loading in the main process with accumulation: the advice compares a batch with a micro-batch
    TrainRun r;
    uint64_t t = T0 + 10 * kMs;
    for (int i = 0; i < 6; ++i) {
      for (int micro = 0; micro < 2; ++micro) {
        r.m.Push(t, Phase::kDataWait);
        t = r.m.Fetch(t, 4, kMs, 0);
        r.m.Pop(t);
        t = r.m.Step(t, {.forward = 4 * kMs, .backward = 5 * kMs, .optimizer = micro == 1 ? kMs : 0});
      }
    }
    Report report = r.Analyze();
    const TrainingProcess& tp = report.bottleneck.processes.at(0);
    EXPECT_EQ(tp.advice.cause, InputCause::kMainProcess);
    EXPECT_DOUBLE_EQ(tp.advice.batches_per_step, 2.0);
    EXPECT_DOUBLE_EQ(tp.advice.compute_ns, 9.5 * kMs);
    EXPECT_TRUE(Says(tp.text, "each batch takes 4.00 ms to fetch while a micro-batch computes in 9.50 ms (2 per "
                              "step): use DataLoader(num_workers=1)")) << Join(tp.text);
  }
  {  // a first step without a backward recorded: the fewest passes of a step is 0
    TrainRun r;
    uint64_t t = T0 + 10 * kMs;
    t = r.m.Step(t, {.wait = 2 * kMs, .forward = 4 * kMs, .optimizer = kMs});
    for (int i = 0; i < 5; ++i) {
      t = r.m.Step(t, {.wait = 2 * kMs, .forward = 2 * kMs, .backward = 2 * kMs});
      t = r.m.Step(t, {.forward = 2 * kMs, .backward = 2 * kMs, .optimizer = kMs});
    }
    Report report = r.Analyze();
    const TrainingProcess& tp = report.bottleneck.processes.at(0);
    EXPECT_EQ(tp.passes_min, 0u);
    EXPECT_EQ(tp.passes_max, 2u);
    EXPECT_TRUE(Says(tp.text, "(10 forward/backward passes, 0 to 2 per step)")) << Join(tp.text);
  }
  {  // one pass per step, as Lightning's closure runs: nothing to say
    TrainRun r;
    uint64_t t = T0 + 10 * kMs;
    for (int i = 0; i < 6; ++i) t = r.m.Step(t, WithWait(kCompute10, 2 * kMs));
    Report report = r.Analyze();
    EXPECT_FALSE(Says(report.bottleneck.processes.at(0).text, "passes"));
  }
  {  // sharpness-aware minimisation with its first pass outside the step: 2 passes a step
    TrainRun r;
    uint64_t t = T0 + 10 * kMs;
    for (int i = 0; i < 6; ++i) {
      t = r.m.Step(t, {.wait = 2 * kMs, .forward = 2 * kMs, .backward = 2 * kMs});
      r.m.Push(t, Phase::kOptimizerStep, "Optimizer.step#SAM.step");
      r.m.Range(t + kMs, t + 3 * kMs, Phase::kForward);
      r.m.Range(t + 3 * kMs, t + 5 * kMs, Phase::kBackward);
      r.m.Pop(t + 6 * kMs);
      t += 6 * kMs;
    }
    Report report = r.Analyze();
    EXPECT_TRUE(Says(report.bottleneck.processes.at(0).text,
                     "pid 200: 6 training steps (12 forward/backward passes, 2 per step, 6 of them run by "
                     "optimizer.step(closure)): mean 12.0 ms")) << Join(report.bottleneck.processes.at(0).text);
  }
}

// A training process whose trace file was cut: its verdict says it is of what was recorded before
// the cut (issue 37: a main trace cut to 20 kB got "41 training steps" of 60 run, said only in the
// warnings).
TEST(Bottleneck, AVerdictFromACutFileSaysSo) {
  TrainRun r;
  uint64_t t = T0 + 10 * kMs;
  for (int i = 0; i < 6; ++i) t = r.m.Step(t, WithWait(kCompute10, 2 * kMs));
  Trace trace = r.Load();
  ASSERT_FALSE(trace.files.empty());
  FileStatus& f = trace.files.at(trace.processes.at(0).images.at(0).file);
  f.truncated = true;
  f.bytes = f.bytes_read = 40960;
  f.errors.push_back("file truncated at byte 40960: chunk 3 announced but missing");
  Report report = collector::Analyze(std::move(trace), {});
  const TrainingProcess& tp = report.bottleneck.processes.at(0);
  ASSERT_EQ(tp.damaged_files.size(), 1u);
  ASSERT_GE(tp.text.size(), 2u);
  EXPECT_EQ(tp.text[1], "Its trace file " + tp.damaged_files[0] +
                            " is cut (file truncated at byte 40960: chunk 3 announced but missing (all 40960 bytes it "
                            "has usable)): the steps above and the verdict are of what was recorded before the cut; the "
                            "steps after it are not in them.");
  const nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_EQ(j["bottleneck"]["processes"][0]["damaged_files"], nlohmann::json::array({tp.damaged_files[0]}));
}

TEST(Bottleneck, WarmUpStepLeftOutOfTheMeans) {
  for (int steps : {4, 6}) {
    TrainRun r;
    uint64_t t = T0 + 10 * kMs;
    t = r.m.Step(t, WithWait(kCompute10, 100 * kMs));
    for (int i = 1; i < steps; ++i) t = r.m.Step(t, WithWait(kCompute10, 2 * kMs));
    Report report = r.Analyze();
    const TrainingProcess& tp = report.bottleneck.processes.at(0);
    if (steps == 4) {
      EXPECT_FALSE(tp.warmup_skipped);
      EXPECT_EQ(tp.step.count, 4u);
      EXPECT_DOUBLE_EQ(tp.step.mean, (110.0 + 3 * 12.0) / 4 * kMs);
      EXPECT_FALSE(Says(tp.text, "warm-up"));
      continue;
    }
    EXPECT_TRUE(tp.warmup_skipped);
    EXPECT_EQ(tp.step.count, 5u);
    EXPECT_DOUBLE_EQ(tp.step.mean, 12.0 * kMs);
    EXPECT_DOUBLE_EQ(tp.step.std, 0.0);
    EXPECT_DOUBLE_EQ(tp.part(Part::kDataWait).mean_ns, 2.0 * kMs);
    EXPECT_TRUE(Says(tp.text,
                     "pid 200: 6 training steps: mean 12.0 ms, median 12.0 ms, p90 12.0 ms, std dev 0 ns (step 0 "
                     "left out as warm-up: 5 or more steps)."));
    ASSERT_EQ(tp.step_rows.size(), 6u);
    EXPECT_FALSE(tp.step_rows[0].in_statistics);
    EXPECT_TRUE(tp.step_rows[1].in_statistics);
    // steps.csv keeps the warm-up step.
    std::vector<CsvTable> tables = RenderCsv(report);
    auto it = std::find_if(tables.begin(), tables.end(), [](const CsvTable& c) { return c.name == "steps.csv"; });
    ASSERT_NE(it, tables.end());
    EXPECT_EQ(it->text.substr(0, it->text.find("\r\n")),
              "pid,host,rank,step,train_step,kind,in_statistics,epoch,tid,data_waits,micro_batches,passes,start_ns,end_ns,"
              "duration_ns,"
              "data_wait_ns,forward_ns,backward_ns,optimizer_ns,collective_ns,other_ns,arrival,arrival_ns,lateness_ns");
    EXPECT_NE(it->text.find("\r\n200,node0,,0,0,train,false,0,200,1,1,1,1010000000,1120000000,110000000,100000000,4000000,"
                            "5000000,1000000,0,0,backward,1114000000,\r\n"),
              std::string::npos)
        << it->text;
    EXPECT_EQ(std::count(it->text.begin(), it->text.end(), '\n'), 7);
  }
}

// 20 steps of 12 ms (10 ms compute, 2 ms data wait); `extra` adds time after some steps' optimizer.
Report TwentyStepsWithExtra(const std::map<int, uint64_t>& extra) {
  TrainRun r;
  uint64_t t = T0 + 10 * kMs;
  for (int i = 0; i < 20; ++i) {
    StepPlan p = WithWait(kCompute10, 2 * kMs);
    if (auto it = extra.find(i); it != extra.end()) p.other = it->second;
    t = r.m.Step(t, p);
  }
  return r.Analyze();
}

// One process, 20 steps of 12 ms; step 10 takes 300 ms more after its optimizer step (a
// checkpoint save): named as an isolated slow step, in the text and in JSON.
TEST(Bottleneck, IsolatedSlowStepIsNamed) {
  Report report = TwentyStepsWithExtra({{10, 300 * kMs}});
  const TrainingProcess& tp = report.bottleneck.processes.at(0);
  EXPECT_DOUBLE_EQ(tp.step.median, 12.0 * kMs);
  EXPECT_EQ(tp.slow.count, 1u);
  EXPECT_TRUE(Says(tp.text,
                   "Isolated slow step: step 10 of pid 200 took 312 ms, 26× the median (12.0 ms) (training steps "
                   "numbered from 0; a slow step takes 3× the median and 10.0 ms more than it or more; its time is "
                   "in the statistics above)."))
      << Join(tp.text);
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  const auto& slow = j["bottleneck"]["processes"][0]["slow_steps"];
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0]["step"], 10);
  EXPECT_EQ(slow[0]["train_step"], 10);
  EXPECT_EQ(slow[0]["duration_ns"], 312 * kMs);
  EXPECT_DOUBLE_EQ(slow[0]["times_median"].get<double>(), 26.0);
  EXPECT_EQ(j["bottleneck"]["processes"][0]["slow_step_count"], 1);
  // Steady steps: none.
  Report quiet = TwentyStepsWithExtra({});
  EXPECT_EQ(quiet.bottleneck.processes.at(0).slow.count, 0u);
  EXPECT_FALSE(Says(quiet.bottleneck.processes.at(0).text, "slow step"));
}

// A noisy loop: three hiccup steps at 3.5× the median are too many to be isolated in 20 steps, but
// the 300 ms checkpoint step stands 7× above them, and is still named; nine steps at 3-4× are not.
TEST(Bottleneck, IsolatedSlowStepAmongHiccups) {
  Report report = TwentyStepsWithExtra({{10, 300 * kMs}, {4, 30 * kMs}, {13, 30 * kMs}, {17, 30 * kMs}});
  const TrainingProcess& tp = report.bottleneck.processes.at(0);
  EXPECT_DOUBLE_EQ(tp.step.median, 12.0 * kMs);
  EXPECT_EQ(tp.slow.over_threshold, 4u);
  EXPECT_EQ(tp.slow.count, 1u);
  ASSERT_EQ(tp.slow.listed.size(), 1u);
  EXPECT_EQ(tp.slow.listed[0].train_step, 10u);
  EXPECT_TRUE(Says(tp.text,
                   "Isolated slow step: step 10 of pid 200 took 312 ms, 26× the median (12.0 ms); 3 other steps also "
                   "took 3× the median or more, each under a third of these (training steps numbered from 0;"))
      << Join(tp.text);
  // Two planted steps 3× above three hiccups: both named (allowed: 2 of 20).
  Report two = TwentyStepsWithExtra({{5, 300 * kMs}, {10, 300 * kMs}, {4, 30 * kMs}, {13, 30 * kMs}, {17, 30 * kMs}});
  EXPECT_EQ(two.bottleneck.processes.at(0).slow.count, 2u);
  // Nine steps at 3-4× the median, none far above the others: spread, none isolated.
  std::map<int, uint64_t> bursts;
  for (int i = 1; i < 19; i += 2) bursts[i] = (24 + i) * kMs;
  Report sr = TwentyStepsWithExtra(bursts);
  const TrainingProcess& sp = sr.bottleneck.processes.at(0);
  EXPECT_EQ(sp.slow.over_threshold, 9u);
  EXPECT_EQ(sp.slow.count, 0u);
  EXPECT_TRUE(Says(sp.text, "Step time is spread, not a few outliers: 9 of 19 steps take 3× the median"))
      << Join(sp.text);
}

TEST(Bottleneck, PercentilesAndSpread) {
  TrainRun r;
  uint64_t t = T0 + 10 * kMs;
  for (uint64_t other : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
    t = r.m.Step(t, {.wait = kMs, .forward = 9 * kMs, .other = other * kMs});
  // The last step ends with its forward (its trailing "other" is not in a step).
  const Report report = r.Analyze();
  const TrainingProcess& tp = report.bottleneck.processes.at(0);
  ASSERT_EQ(tp.step.count, 10u);  // steps 1..10: 11, 12, ..., 19, and 10 ms
  EXPECT_DOUBLE_EQ(tp.step.median, 14.5 * kMs);
  EXPECT_DOUBLE_EQ(tp.step.p90, 18.1 * kMs);
  EXPECT_EQ(tp.step.min, 10 * kMs);
  EXPECT_EQ(tp.step.max, 19 * kMs);
  EXPECT_NEAR(tp.step.std, 3.0276503540974917 * kMs, 1);
}

// Workers re-created every epoch, each with a 300 ms worker_init_fn the main process waits for.
TEST(Bottleneck, WorkerStartUpRepeatedEveryEpoch) {
  TrainRun r;
  for (uint64_t e : {T0 + 1 * kMs, T0 + 400 * kMs}) {
    for (int w = 0; w < 2; ++w) {
      PhaseThread pw = r.Worker(e, e + 360 * kMs);
      pw.Range(e + 1 * kMs, e + 301 * kMs, Phase::kWorkerInit);
      uint64_t f = e + 301 * kMs;
      for (int k = 0; k < 5; ++k) f = pw.Fetch(f, 8, kMs, 0);
    }
    uint64_t t = r.m.Step(e + 9 * kMs, WithWait(kCompute10, 300 * kMs));
    for (int i = 0; i < 4; ++i) t = r.m.Step(t, WithWait(kCompute10, 100'000));
    r.m.EpochEnd(t, 100'000);
  }
  const Report report = r.Analyze();
  const TrainingProcess& tp = report.bottleneck.processes.at(0);
  EXPECT_EQ(tp.steps, 10u);
  EXPECT_EQ(tp.epoch_ends, 2u);
  EXPECT_EQ(tp.verdict, Verdict::kInputBound);
  ASSERT_TRUE(tp.input);
  const InputPipeline& in = *tp.input;
  EXPECT_EQ(in.worker_processes, 4u);
  EXPECT_EQ(in.concurrent_workers, 2u);
  EXPECT_TRUE(in.workers_recreated());
  EXPECT_EQ(in.init_fn_calls, 4u);
  EXPECT_EQ(in.init_fn_ns, 1200 * kMs);
  EXPECT_EQ(in.startup_ns, 4 * 301 * kMs);
  EXPECT_EQ(in.startup_wait_ns, 2 * 292 * kMs);
  EXPECT_EQ(in.startup_wait_counted_ns, 292 * kMs);  // epoch 0's start-up is in the warm-up step
  EXPECT_EQ(tp.advice.cause, InputCause::kStartup);
  EXPECT_TRUE(tp.advice.startup_significant);
  EXPECT_NEAR(tp.advice.startup_step_percent, 584.0 * 100 / 700.8, 1e-9);
  EXPECT_TRUE(Says(tp.text, "pid 200: 10 training steps in 2 epochs:"));
  EXPECT_TRUE(Says(tp.text, "Input pipeline: 2 DataLoader workers (4 worker processes);"));
  EXPECT_TRUE(Says(tp.text,
                   "Most of the wait is for workers to start: 292 ms of the 301 ms of data wait (97.1%) falls while "
                   "workers start (see worker start-up)."));
  EXPECT_TRUE(Says(tp.text,
                   "Worker start-up: 4 worker processes for 2 concurrent workers (workers were re-created, e.g. each "
                   "epoch); start to first batch fetch takes 301 ms per worker, of which worker_init_fn 300 ms (4 "
                   "calls, 1.20 s in all); the main process waited 584 ms for start-ups (83.3% of all step time, "
                   "warm-up included)."));
  EXPECT_TRUE(Says(tp.text,
                   "Worker start-up costs 83.3% of the step time (10.0% or more): use persistent_workers=True "
                   "(workers then start once, not every epoch) and a cheaper worker_init_fn (300 ms per worker)."));
}

// Persistent workers started by multiprocessing's spawn method, 300 ms each before their first
// fetch, in a run of 10 steps: start-up is significant, and the advice is not to turn on
// persistent_workers (a new-user pass got "persistent_workers=True" with it on) but the start
// method, fewer workers or a longer run.
TEST(Bottleneck, SpawnedPersistentWorkersAreNotToldToBePersistent) {
  for (const bool spawned : {true, false}) {
    SCOPED_TRACE(spawned ? "spawned" : "forked");
    TrainRun r;
    const std::string loader = "DataLoader#1 dataset=Slow batch_size=8 num_workers=2 persistent_workers=1 pin_memory=0";
    r.m.Mark(T0 + 1 * kMs, Phase::kDataLoader, loader);
    for (int w = 0; w < 2; ++w) {
      PhaseThread pw = r.Worker(T0 + 2 * kMs, T0 + 1'500 * kMs);
      if (spawned) {
        r.worker_files.back()->Command({"/usr/bin/python3", "-c",
                                        "from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)",
                                        "--multiprocessing-fork"});
      }
      pw.Mark(T0 + 3 * kMs, Phase::kDataLoader, "DataLoader#? dataset=Slow num_workers=2 worker_id=" + std::to_string(w));
      uint64_t f = T0 + 302 * kMs;
      for (int k = 0; k < 6; ++k) f = pw.Fetch(f, 8, kMs, 0);
    }
    uint64_t t = r.m.Step(r.m.LoaderWait(T0 + 5 * kMs, 300 * kMs, loader), kCompute10);
    for (int i = 0; i < 9; ++i) t = r.m.Step(r.m.LoaderWait(t, 100'000, loader), kCompute10);
    const Report report = r.Analyze();
    const TrainingProcess& tp = report.bottleneck.processes.at(0);
    ASSERT_TRUE(tp.input);
    EXPECT_EQ(tp.input->spawned_workers, spawned ? 2u : 0u);
    EXPECT_TRUE(tp.input->workers_persistent());
    EXPECT_FALSE(tp.input->workers_recreated());
    ASSERT_TRUE(tp.advice.startup_significant);
    EXPECT_TRUE(Says(tp.text, "the workers are persistent already: fewer workers, or more steps to spread it over."));
    EXPECT_FALSE(Says(tp.text, "persistent_workers=True"));
    EXPECT_EQ(Says(tp.text, "spawned workers import the program's modules each: multiprocessing_context='forkserver', "
                            "or 'fork' without CUDA in the main process, starts them faster"),
              spawned);
  }
}

// The report of one process that ran `command` (`executable`) and recorded one NVTX range, `range`,
// and no training phase.
Report NoPhasesReport(std::vector<std::string> command, const std::string& executable, const char* range) {
  TraceBuilder b(500);
  b.Command(std::move(command)).Executable(executable);
  int t = b.Thread(500);
  b.Push(t, b.start_ns() + kMs, range);
  b.Pop(t, b.start_ns() + 5 * kMs);
  b.HeaderEnd(fmt::EndKind::kExit, 0, b.start_ns() + 10 * kMs);
  return collector::Analyze(TraceOf({&b}), {});
}

TEST(Bottleneck, NoPhasesSaysWhatIsNeeded) {
  Report report = NoPhasesReport({"./train"}, "/opt/app/train", "train_step");  // not Python
  EXPECT_EQ(report.bottleneck.status, "no_phases");
  EXPECT_TRUE(report.bottleneck.processes.empty());
  std::string text = RenderText(report);
  const size_t section = text.find(
      "\nBottleneck\n  No training phases recorded: the verdict needs the phases that "
      "`trainprof run` records");
  ASSERT_NE(section, std::string::npos) << text;
  EXPECT_LT(text.find("\nProcesses\n"), section);
  EXPECT_GT(text.find("\nNVTX ranges (all processes)\n"), section);
  EXPECT_EQ(text.find("GPU activity"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_EQ(j["bottleneck"]["status"], "no_phases");
  EXPECT_TRUE(j["bottleneck"]["processes"].empty());
  EXPECT_TRUE(j["bottleneck"]["ranks"].is_null());
  std::vector<CsvTable> tables = RenderCsv(report);
  auto steps = std::find_if(tables.begin(), tables.end(), [](const CsvTable& c) { return c.name == "steps.csv"; });
  ASSERT_NE(steps, tables.end());
  EXPECT_EQ(std::count(steps->text.begin(), steps->text.end(), '\n'), 1);  // the header only
}

// A Python program that never imported torch: the shim loaded, recorded nothing, and the message
// says so, not "run it without --trace=-python" (a new-user pass ran it exactly that way).
TEST(Bottleneck, NoPhasesOfAPythonProgramSaysItRanNoTorchLoop) {
  Report report = NoPhasesReport({"python3", "plain.py"}, "/usr/bin/python3.11", "load");
  EXPECT_EQ(report.bottleneck.status, "no_phases");
  EXPECT_NE(report.bottleneck.message.find("No training phases recorded: the Python processes of this run recorded no "
                                           "DataLoader wait, forward, backward or optimizer step"),
            std::string::npos)
      << report.bottleneck.message;
  EXPECT_NE(report.bottleneck.message.find("the program did not import torch or ran no training loop"), std::string::npos);
  EXPECT_EQ(report.bottleneck.message.find("run the script as"), std::string::npos);
}

// Forwards only (inference): no training step, and the hint says so (not "workers traced
// without their main process").
TEST(Bottleneck, ForwardsWithoutBackwardAreInferenceNotMissingWorkers) {
  TrainRun r;
  r.m.Range(T0 + kMs, T0 + 5 * kMs, Phase::kForward);
  r.m.Range(T0 + 6 * kMs, T0 + 9 * kMs, Phase::kForward);
  Report report = r.Analyze();
  EXPECT_EQ(report.bottleneck.status, "no_steps");
  const std::string text = RenderText(report);
  EXPECT_NE(text.find("2 forward calls were recorded without any backward: evaluation or inference only"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("Were the workers traced"), std::string::npos);
}

// A process whose loop waits for batches and runs only evaluation forwards ("[eval]": under
// torch.no_grad() or eval()) evaluates only: described, no training verdict or advice. The same
// loop with plain forwards (a backward the shim does not see) keeps its steps.
TEST(Bottleneck, ALoopOfEvaluationForwardsOnlyGetsNoTrainingVerdict) {
  for (const bool eval : {true, false}) {
    TrainRun r;
    uint64_t t = T0 + kMs;
    for (int i = 0; i < 4; ++i) {
      r.m.Range(t, t + 3 * kMs, Phase::kDataWait);  // 3 ms of the 10 ms steps wait for data: 30%
      r.m.Range(t + 3 * kMs, t + 10 * kMs, Phase::kForward, eval ? "Net.forward [eval]" : "Net.forward");
      t += 10 * kMs;
    }
    Report report = r.Analyze();
    ASSERT_EQ(report.bottleneck.processes.size(), 1u);
    const TrainingProcess& tp = report.bottleneck.processes[0];
    if (!eval) {
      EXPECT_EQ(tp.steps, 4u);
      EXPECT_EQ(tp.verdict, Verdict::kInputBound);
      continue;
    }
    EXPECT_EQ(tp.verdict, Verdict::kEvaluationOnly);
    EXPECT_EQ(tp.steps, 0u);
    EXPECT_EQ(tp.eval_steps, 4u);
    EXPECT_DOUBLE_EQ(tp.eval_step.mean, 10.0 * kMs);
    EXPECT_DOUBLE_EQ(tp.eval_data_wait_percent, 30.0);
    EXPECT_EQ(tp.advice.cause, InputCause::kNone);
    ASSERT_EQ(tp.text.size(), 1u) << ::testing::PrintToString(tp.text);
    EXPECT_EQ(tp.text[0], "pid 200: evaluation only: 4 evaluation steps (forwards under torch.no_grad() or eval(), "
                          "no backward or optimizer step): mean 10.0 ms, median 10.0 ms, waiting for data 30.0% of "
                          "their time; no training verdict.");
  }
}

// Only worker-side fetches: then the workers were traced without their main process.
TEST(Bottleneck, FetchesWithoutAMainProcessSayWhy) {
  TrainRun r;
  PhaseThread w = r.Worker(T0, T0 + 100 * kMs);
  w.Fetch(T0 + kMs, 2, kMs, kMs);
  Report report = r.Analyze();
  EXPECT_EQ(report.bottleneck.status, "no_steps");
  EXPECT_NE(RenderText(report).find("the DataLoader workers were traced without their main process"),
            std::string::npos);
}

// A loop without a DataLoader (word_language_model): 10 cycles of get_batch 6 ms (unrecorded),
// forward 3 ms, backward 4 ms, optimizer 1 ms: steps from the rhythm, the same breakdown and
// verdict, and the text says how the steps were found.
TEST(Bottleneck, LoopWithoutDataLoaderGetsStepsFromItsRhythm) {
  TrainRun r;
  uint64_t t = T0 + 100 * kMs;
  for (int i = 0; i < 10; ++i) {
    t += 6 * kMs;
    t = r.m.Step(t, kCompute10);  // forward 4, backward 5, optimizer 1
  }
  Report report = r.Analyze();
  const Bottleneck& b = report.bottleneck;
  ASSERT_EQ(b.status, "ok") << b.message;
  ASSERT_EQ(b.processes.size(), 1u);
  const TrainingProcess& p = b.processes[0];
  EXPECT_EQ(p.steps_found_by, "loop_rhythm");
  EXPECT_EQ(p.steps, 10u);
  EXPECT_EQ(p.step.count, 9u);
  EXPECT_DOUBLE_EQ(p.step.mean, 16.0 * kMs);
  EXPECT_DOUBLE_EQ(p.part(Part::kDataWait).mean_ns, 6.0 * kMs);
  EXPECT_DOUBLE_EQ(p.part(Part::kDataWait).percent, 37.5);
  EXPECT_EQ(p.verdict, Verdict::kInputBound);
  const std::string text = RenderText(report);
  EXPECT_NE(text.find("10 training steps (found from the loop's rhythm: forward → backward → optimizer step; no "
                      "DataLoader)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Input-bound: the time between cycles (last backward or optimizer step to the next forward) "
                      "is 37.5% of the step"),
            std::string::npos)
      << text;
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_EQ(j["bottleneck"]["processes"][0]["steps_found_by"], "loop_rhythm");
}

// Coverage: the main process lives 2 s; 10 steps of 40 ms (from T0 + 1 s) cover 400 ms; before
// them init_process_group 100 ms, creating the DataLoader iterator 300 ms, torch.save 50 ms after
// them, inside the evaluation step (which runs from its wait to the next wait: 190 ms); the rest is
// start-up (before the first phase) or unattributed.
TEST(Bottleneck, CoverageAttributesTheTimeOutsideTheSteps) {
  TrainRun r;
  r.m.Range(T0 + 100 * kMs, T0 + 200 * kMs, Phase::kInitProcessGroup, "init_process_group");
  r.m.Range(T0 + 600 * kMs, T0 + 900 * kMs, Phase::kDataLoaderIter, "iter(DataLoader)#_MultiProcessingDataLoaderIter");
  uint64_t t = T0 + 1'000 * kMs;
  for (int i = 0; i < 10; ++i) t = r.m.Step(t, WithWait(kCompute10, 30 * kMs));
  t = r.m.EpochEnd(t, kMs);  // T0 + 1401 ms
  t = r.m.Step(t + 9 * kMs, {.wait = 50 * kMs, .forward = 10 * kMs});  // eval: [1410, 1600)
  r.m.Range(t + 30 * kMs, t + 80 * kMs, Phase::kCheckpoint, "torch.save");  // [1500, 1550)
  // A training step after it, so that the evaluation step is one (it ends the thread otherwise).
  r.m.Step(T0 + 1'600 * kMs, WithWait(kCompute10, 30 * kMs));
  Report report = r.Analyze();
  ASSERT_EQ(report.bottleneck.processes.size(), 1u);
  const TrainingProcess& p = report.bottleneck.processes[0];
  EXPECT_EQ(p.steps_found_by, "dataloader");
  const Coverage& c = p.coverage;
  EXPECT_EQ(c.wall_ns, 2'000 * kMs);
  EXPECT_EQ(c.steps_ns, 440 * kMs);
  EXPECT_DOUBLE_EQ(c.percent, 22.0);
  std::map<std::string, uint64_t> ns;
  for (const UncoveredPart& u : c.uncovered) ns[u.kind] = u.ns;
  EXPECT_EQ(ns["dataloader_start"], 300 * kMs);
  EXPECT_EQ(ns["init_process_group"], 100 * kMs);
  EXPECT_EQ(ns["checkpoint"], 50 * kMs);
  EXPECT_EQ(ns["evaluation"], 140 * kMs);  // 190 ms less the checkpoint in it
  EXPECT_EQ(ns["startup"], 100 * kMs);
  EXPECT_EQ(ns["unattributed"], 870 * kMs);  // 2000 - 440 - 300 - 100 - 50 - 140 - 100
  EXPECT_EQ(c.uncovered.front().kind, "unattributed");  // largest first
  const std::string text = RenderText(report);
  EXPECT_NE(text.find("Steps, found from the DataLoader waits, cover 22.0% of the process's recorded time (440 ms of 2.00 s); outside them: "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("DataLoader iterator start (workers starting) 300 ms (15.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find("the verdict describes the steps only"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  const auto& jc = j["bottleneck"]["processes"][0]["coverage"];
  EXPECT_EQ(jc["wall_ns"], 2'000 * kMs);
  EXPECT_EQ(jc["steps_ns"], 440 * kMs);
  EXPECT_EQ(jc["percent"], 22.0);
  bool found = false;
  for (const auto& u : jc["uncovered"]) {
    if (u["kind"] == "dataloader_start") {
      found = true;
      EXPECT_EQ(u["ns"], 300 * kMs);
      EXPECT_EQ(u["percent"], 15.0);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Bottleneck, JsonParsesBackWithTheVerdictAndItsNumbers) {
  Report report = SlowLoader(9'500'000, 3 * kMs).Analyze();
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  ASSERT_TRUE(j.contains("bottleneck"));
  const auto& b = j["bottleneck"];
  EXPECT_EQ(b["status"], "ok");
  EXPECT_EQ(b["message"], "");
  EXPECT_EQ(b["thresholds"]["input_bound_percent"], 20.0);
  EXPECT_EQ(b["thresholds"]["partly_input_bound_percent"], 5.0);
  EXPECT_EQ(b["thresholds"]["workers_busy_percent"], 80.0);
  EXPECT_EQ(b["thresholds"]["warmup_min_steps"], 5);
  EXPECT_EQ(b["thresholds"]["straggler_step_percent"], 10.0);
  EXPECT_EQ(b["thresholds"]["straggler_min_ns"], 1'000'000);
  EXPECT_TRUE(b["ranks"].is_null());
  EXPECT_EQ(b["gpu"], (nlohmann::json{{"recorded", false}}));
  ASSERT_EQ(b["processes"].size(), 1u);
  const auto& p = b["processes"][0];
  EXPECT_EQ(p["pid"], 200);
  EXPECT_EQ(p["host"], "node0");
  EXPECT_TRUE(p["rank"].is_null());
  EXPECT_EQ(p["role"], "main");
  EXPECT_EQ(p["verdict"], "input_bound");
  EXPECT_EQ(p["steps"], 10);
  EXPECT_EQ(p["steps_in_statistics"], 9);
  EXPECT_EQ(p["warmup_skipped"], true);
  EXPECT_EQ(p["eval_steps"], 0);
  EXPECT_EQ(p["dropped_steps"], 0);
  EXPECT_EQ(p["data_waits"], 10);
  EXPECT_EQ(p["epoch_ends"], 0);
  EXPECT_EQ(p["step"]["count"], 9);
  EXPECT_EQ(p["step"]["total_ns"], 360 * kMs);
  EXPECT_DOUBLE_EQ(p["step"]["mean_ns"].get<double>(), 40.0 * kMs);
  EXPECT_DOUBLE_EQ(p["step"]["p90_ns"].get<double>(), 40.0 * kMs);
  EXPECT_EQ(p["parts"]["data_wait"]["total_ns"], 270 * kMs);
  EXPECT_DOUBLE_EQ(p["parts"]["data_wait"]["percent"].get<double>(), 75.0);
  EXPECT_DOUBLE_EQ(p["parts"]["forward"]["mean_ns"].get<double>(), 4.0 * kMs);
  EXPECT_DOUBLE_EQ(p["parts"]["other"]["percent"].get<double>(), 0.0);
  std::vector<std::string> part_names;
  for (const auto& [k, v] : p["parts"].items()) part_names.push_back(k);
  EXPECT_EQ(part_names,
            (std::vector<std::string>{"backward", "collective", "data_wait", "forward", "optimizer", "other"}));
  EXPECT_DOUBLE_EQ(p["compute_mean_ns"].get<double>(), 10.0 * kMs);
  EXPECT_EQ(p["largest_phase"], "backward");
  const auto& in = p["input"];
  EXPECT_EQ(in["loading"], "workers");
  EXPECT_EQ(in["worker_processes"], 2);
  EXPECT_EQ(in["concurrent_workers"], 2);
  EXPECT_EQ(in["workers_recreated"], false);
  EXPECT_DOUBLE_EQ(in["busy_percent"].get<double>(), 100.0);
  EXPECT_EQ(in["fetch"]["count"], 12);
  EXPECT_DOUBLE_EQ(in["fetch"]["mean_ns"].get<double>(), 80.0 * kMs);
  EXPECT_DOUBLE_EQ(in["fetch"]["getitem_percent"].get<double>(), 95.0);
  EXPECT_DOUBLE_EQ(in["fetch"]["getitem_mean_ns"].get<double>(), 9'500'000.0);
  EXPECT_DOUBLE_EQ(in["fetch"]["items_per_batch"].get<double>(), 8.0);
  EXPECT_EQ(in["startup"]["wait_ns"], 0);
  ASSERT_EQ(in["workers"].size(), 2u);
  EXPECT_EQ(in["workers"][0]["pid"], 201);
  EXPECT_EQ(in["workers"][0]["fetches"], 6);
  EXPECT_EQ(in["workers"][0]["startup_ns"], 2 * kMs);
  EXPECT_DOUBLE_EQ(in["workers"][0]["busy_percent"].get<double>(), 100.0);
  const auto& a = p["advice"];
  EXPECT_EQ(a["cause"], "getitem");
  EXPECT_DOUBLE_EQ(a["batch_ns"].get<double>(), 80.0 * kMs);
  EXPECT_DOUBLE_EQ(a["compute_ns"].get<double>(), 10.0 * kMs);
  EXPECT_DOUBLE_EQ(a["delivery_ns"].get<double>(), 40.0 * kMs);
  EXPECT_EQ(a["workers_needed"], 8);
  ASSERT_TRUE(p["text"].is_array());
  EXPECT_EQ(p["text"].size(), report.bottleneck.processes[0].text.size());
  EXPECT_NE(p["text"][3].get<std::string>().find("__getitem__ is the bottleneck"), std::string::npos);
}

TEST(Bottleneck, TextSectionLayout) {
  Report report = SlowLoader(9'500'000, 3 * kMs).Analyze();
  const std::string text = RenderText(report);
  const std::string expected_head =
      "\nBottleneck\n"
      "  PID  Rank  Steps     Mean   Median      P90  StdDev  Data wait  Forward  Backward  Optimizer  Collective  "
      "Other  Verdict\n"
      "  ---  ----  -----  -------  -------  -------  ------  ---------  -------  --------  ---------  ----------  "
      "-----  -----------\n"
      "  200     -     10  40.0 ms  40.0 ms  40.0 ms    0 ns      75.0%    10.0%     12.5%       2.5%        0.0%   "
      "0.0%  input-bound\n"
      "  Steps run from one wait for a DataLoader batch to the next; the parts are shares of the step time.\n"
      "\n"
      "  pid 200: 10 training steps: mean 40.0 ms, median 40.0 ms, p90 40.0 ms, std dev 0 ns (step 0 left out as "
      "warm-up: 5 or more steps).\n"
      "    Input-bound: waiting for data is 75.0% of the step (mean 30.0 ms of 40.0 ms; input-bound from 20.0%).\n";
  const size_t at = text.find(expected_head);
  EXPECT_NE(at, std::string::npos) << text;
  EXPECT_LT(text.find("\nProcesses\n"), at);
  EXPECT_GT(text.find("\nNVTX ranges (all processes)\n"), at);
  EXPECT_NE(text.find("\n  GPU activity: not recorded (no CUDA data in these traces)\n"), std::string::npos) << text;
}

TEST(Bottleneck, CsvTables) {
  Report report = SlowLoader(9'500'000, 3 * kMs).Analyze();
  std::vector<CsvTable> tables = RenderCsv(report);
  std::map<std::string, std::string> by_name;
  for (const CsvTable& t : tables) by_name[t.name] = t.text;
  ASSERT_TRUE(by_name.count("bottleneck.csv"));
  ASSERT_TRUE(by_name.count("dataloader_workers.csv"));
  ASSERT_TRUE(by_name.count("ranks.csv"));
  const std::string& s = by_name["bottleneck.csv"];
  EXPECT_EQ(
      s.substr(0, s.find("\r\n")),
      "pid,host,rank,role,verdict,steps,steps_in_statistics,warmup_skipped,eval_steps,mean_step_ns,median_step_ns,"
      "p90_step_ns,std_step_ns,data_wait_percent,forward_percent,backward_percent,optimizer_percent,"
      "collective_percent,other_percent,largest_phase,input_cause,workers,worker_processes,workers_busy_percent,"
      "fetch_mean_ns,getitem_percent,collate_percent,workers_needed,startup_wait_ns,gpu_busy_percent,"
      "gpu_idle_percent,gpu_idle_cause,gpu_idle_data_wait_percent,gpu_idle_sync_percent,gpu_idle_launch_percent,"
      "gpu_idle_other_percent,gpu_sync_call,gpu_sync_calls_per_step,gpu_launch_bound");
  EXPECT_NE(
      s.find("\r\n200,node0,,main,input_bound,10,9,true,0,40000000,40000000,40000000,0,75,10,12.5,2.5,0,0,backward,"
             "getitem,2,2,100,80000000,95,3.75,8,0,,,,,,,,,,\r\n"),
      std::string::npos)
      << s;
  const std::string& w = by_name["dataloader_workers.csv"];
  EXPECT_NE(w.find("\r\n200,node0,201,1001000000,1500000000,6,480000000,456000000,18000000,2000000,0,0,"),
            std::string::npos)
      << w;
  EXPECT_EQ(by_name["ranks.csv"].find("\r\n"), by_name["ranks.csv"].size() - 2);  // header only
}

}  // namespace
}  // namespace trainprof::collector

namespace trainprof::collector {
namespace {

// Recorded from a --delay window on, the first recorded step is a step like the others: no
// warm-up step is left out, and the report says why.
TEST(Bottleneck, NoWarmupLeftOutWhenRecordingStartedAtADelay) {
  for (bool delayed : {false, true}) {
    TrainRun r;
    if (delayed) {
      r.main.RawMeta(static_cast<uint16_t>(fmt::MetaKey::kCapture),
                     std::string("range_end=stop\0window_start_ns=", 31) + std::to_string(T0 + 5 * kMs));
    }
    uint64_t t = T0 + 10 * kMs;
    t = r.m.Step(t, WithWait(kCompute10, 50 * kMs));  // a slow first step
    for (int i = 0; i < 9; ++i) t = r.m.Step(t, WithWait(kCompute10, 1 * kMs));
    Report rep = r.Analyze();
    ASSERT_EQ(rep.bottleneck.processes.size(), 1u);
    const TrainingProcess& tp = rep.bottleneck.processes[0];
    EXPECT_EQ(tp.warmup_skipped, !delayed);
    EXPECT_EQ(tp.recorded_from_delay, delayed);
    EXPECT_EQ(tp.step.count, delayed ? 10u : 9u);
    const std::string text = RenderText(rep);
    EXPECT_EQ(text.find("no step left out as warm-up") != std::string::npos, delayed) << text;
    EXPECT_EQ(text.find("step 0 left out as warm-up") != std::string::npos, !delayed) << text;
  }
}

}  // namespace
}  // namespace trainprof::collector
