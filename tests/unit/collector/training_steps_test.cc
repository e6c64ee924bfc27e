// Interval arithmetic, phase collection and step splitting (docs/analysis.md, "Steps" and "Step
// breakdown"), on synthetic traces with exact timings.
#include "collector/analysis/training_steps.h"

#include <gtest/gtest.h>

#include <random>

#include "collector/base/intervals.h"
#include "phase_builder.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::kMs;
using test::PhaseThread;
using test::StepPlan;
using test::TraceBuilder;
using test::TraceOf;

TEST(Intervals, UnionClipIntersectSubtract) {
  IntervalSet u = Union({{10, 20}, {0, 5}, {15, 30}, {5, 7}, {40, 40}});
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].begin, 0u);
  EXPECT_EQ(u[0].end, 7u);
  EXPECT_EQ(u[1].begin, 10u);
  EXPECT_EQ(u[1].end, 30u);
  EXPECT_EQ(Length(u), 27u);
  EXPECT_EQ(LengthWithin(u, 6, 12), 3u);
  EXPECT_EQ(LengthWithin(u, 30, 50), 0u);
  EXPECT_EQ(Length(Intersect(u, Union({{3, 12}, {25, 100}}))), 4u + 2u + 5u);
  IntervalSet d = Subtract(u, Union({{2, 3}, {12, 14}, {20, 40}}));
  EXPECT_EQ(Length(d), 27u - 1 - 2 - 10);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[3].begin, 14u);
  EXPECT_EQ(d[3].end, 20u);
  EXPECT_TRUE(Subtract(u, u).empty());
}

struct Split {
  Trace trace;
  ProcessPhases phases;
  StepSplit split;
};

Split SplitOf(const TraceBuilder& b) {
  Split s;
  s.trace = TraceOf({&b});
  s.phases = CollectPhases(s.trace.processes.at(0), s.trace.strings.Find(format::kPhaseDomain));
  s.split = SplitSteps(s.phases);
  return s;
}

uint64_t Ms(uint64_t ns) { return ns / kMs; }

// One thread, times in ms from T:
//   step 0  [0, 50)    wait 10, zero_grad 1, forward 11 (9 with a nested forward, + 2), other 1,
//                      backward 17 (with a collective inside), collective 5, optimizer 3, other 2
//   step 1  [50, 60)   wait 2, forward 3, backward 3, optimizer 1, other 1; ended by the
//                      StopIteration wait [60, 61) + kDataEnd
//   eval    [70, 75) [75, 80)  validation loop: wait + forward; its own StopIteration at 80
//   step 2  [100, 121) wait 5, forward 5, backward 10, optimizer 1; StopIteration at 121
//   a last wait at 200 with nothing after it: dropped
TEST(TrainingSteps, SplitAndBreakdownAreExact) {
  const uint64_t T = 2'000'000'000;
  TraceBuilder b(300, 1, T - 10 * kMs);
  PhaseThread m(b, 300);
  auto at = [&](uint64_t ms) { return T + ms * kMs; };
  m.Range(at(0), at(10), Phase::kDataWait);
  m.Range(at(10), at(11), Phase::kZeroGrad);
  m.Push(at(11), Phase::kForward);
  m.Range(at(12), at(15), Phase::kForward, "Inner.forward");  // same category nested: union
  m.Pop(at(20));
  m.Range(at(20), at(22), Phase::kForward, "CrossEntropyLoss.forward");
  m.Push(at(23), Phase::kBackward);
  m.Range(at(30), at(35), Phase::kCollective);  // inside backward: backward
  m.Pop(at(40));
  m.Range(at(40), at(45), Phase::kCollective);
  m.Range(at(45), at(48), Phase::kOptimizerStep);
  m.Step(at(50), {.wait = 2 * kMs, .forward = 3 * kMs, .backward = 3 * kMs, .optimizer = 1 * kMs});
  m.EpochEnd(at(60), 1 * kMs);
  m.Step(at(70), {.wait = 1 * kMs, .forward = 4 * kMs});
  m.Step(at(75), {.wait = 1 * kMs, .forward = 4 * kMs});
  m.EpochEnd(at(80), 1 * kMs);
  m.Step(at(100), {.wait = 5 * kMs, .forward = 5 * kMs, .backward = 10 * kMs, .optimizer = 1 * kMs});
  m.EpochEnd(at(121), 1 * kMs);
  m.Range(at(200), at(201), Phase::kDataWait);
  b.HeaderEnd(format::EndKind::kExit, 0, at(300));

  Split s = SplitOf(b);
  ASSERT_EQ(s.phases.threads.size(), 1u);
  EXPECT_EQ(s.phases.Count(Phase::kForward), 7u);
  EXPECT_EQ(s.split.data_waits, 9u);
  EXPECT_EQ(s.split.epoch_ends, 3u);
  EXPECT_EQ(s.split.dropped, 1u);
  ASSERT_EQ(s.split.steps.size(), 5u);

  const Step& s0 = s.split.steps[0];
  EXPECT_EQ(s0.begin_ns, at(0));
  EXPECT_EQ(s0.end_ns, at(50));
  EXPECT_EQ(s0.tid, 300u);
  EXPECT_FALSE(s0.eval);
  EXPECT_EQ(Ms(s0.part(Part::kDataWait)), 10u);
  EXPECT_EQ(Ms(s0.part(Part::kOptimizer)), 4u);  // zero_grad 1 + step 3
  EXPECT_EQ(Ms(s0.part(Part::kForward)), 11u);
  EXPECT_EQ(Ms(s0.part(Part::kBackward)), 17u);
  EXPECT_EQ(Ms(s0.part(Part::kCollective)), 5u);
  EXPECT_EQ(Ms(s0.part(Part::kOther)), 3u);
  EXPECT_EQ(s0.arrival, Arrival::kCollective);  // its first collective (inside backward) at 30
  EXPECT_EQ(s0.arrival_ns, at(30));

  const Step& s1 = s.split.steps[1];
  EXPECT_EQ(s1.begin_ns, at(50));
  EXPECT_EQ(s1.end_ns, at(60));  // the StopIteration wait ends it and is in no step
  EXPECT_EQ(Ms(s1.part(Part::kDataWait)), 2u);
  EXPECT_EQ(Ms(s1.part(Part::kOther)), 1u);
  EXPECT_EQ(s1.arrival, Arrival::kBackward);
  EXPECT_EQ(s1.arrival_ns, at(55));
  EXPECT_EQ(s1.epoch, 0u);

  EXPECT_TRUE(s.split.steps[2].eval);
  EXPECT_EQ(s.split.steps[2].end_ns, at(75));
  EXPECT_TRUE(s.split.steps[3].eval);
  EXPECT_EQ(s.split.steps[3].end_ns, at(80));
  EXPECT_EQ(s.split.steps[3].epoch, 0u);  // validation of epoch 0
  EXPECT_EQ(s.split.steps[3].arrival, Arrival::kForwardEnd);

  const Step& s2 = s.split.steps[4];
  EXPECT_FALSE(s2.eval);
  EXPECT_EQ(s2.epoch, 1u);
  EXPECT_EQ(s2.begin_ns, at(100));
  EXPECT_EQ(s2.end_ns, at(121));
  EXPECT_FALSE(s2.ended_by_phase);
  EXPECT_EQ(Ms(s2.part(Part::kBackward)), 10u);
  EXPECT_EQ(Ms(s2.part(Part::kOther)), 0u);
  for (const Step& st : s.split.steps) {
    uint64_t sum = 0;
    for (uint64_t p : st.parts) sum += p;
    EXPECT_EQ(sum, st.duration());
  }
}

// wait 2, forward 3, backward 4, optimizer 1, other 1: 11 ms.
constexpr StepPlan kStep11 = {.wait = 2 * kMs, .forward = 3 * kMs, .backward = 4 * kMs, .optimizer = kMs, .other = kMs};

TEST(TrainingSteps, LastStepEndsAtItsLastPhase) {
  TraceBuilder b(301);
  PhaseThread m(b, 301);
  uint64_t t = b.start_ns() + kMs;
  for (int i = 0; i < 3; ++i) t = m.Step(t, kStep11);
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 3u);
  EXPECT_EQ(s.split.steps[0].duration(), 11 * kMs);  // to the next wait: the trailing 1 ms is other
  EXPECT_EQ(s.split.steps[2].duration(), 10 * kMs);  // to the end of its optimizer step
  EXPECT_TRUE(s.split.steps[2].ended_by_phase);
  EXPECT_EQ(s.split.dropped, 0u);
}

// A loop without a DataLoader (batches sliced from a tensor), with an optimizer. Each iteration:
// 5 ms unrecorded (get_batch), zero_grad 1, Net.forward 4, CrossEntropyLoss.forward 1, backward 6,
// optimizer step 2. Steps run from the end of one optimizer step to the end of the next; step 0
// from its first forward.
TEST(LoopRhythm, ForwardBackwardOptimizerCyclesAreSteps) {
  TraceBuilder b(310);
  PhaseThread m(b, 310);
  uint64_t t = b.start_ns() + 10 * kMs;
  std::vector<uint64_t> forward_at;
  for (int i = 0; i < 6; ++i) {
    t += 5 * kMs;
    m.Range(t, t + kMs, Phase::kZeroGrad);
    t += kMs;
    forward_at.push_back(t);
    m.Range(t, t + 4 * kMs, Phase::kForward, "Net.forward");
    m.Range(t + 4 * kMs, t + 5 * kMs, Phase::kForward, "CrossEntropyLoss.forward");
    t += 5 * kMs;
    m.Range(t, t + 6 * kMs, Phase::kBackward);
    m.Range(t + 6 * kMs, t + 8 * kMs, Phase::kOptimizerStep);
    t += 8 * kMs;
  }
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 6u);
  EXPECT_EQ(s.split.rhythm_steps, 6u);
  EXPECT_EQ(s.split.rhythm_threads, 1u);
  EXPECT_EQ(s.split.data_waits, 0u);
  EXPECT_EQ(s.split.steps[0].begin_ns, forward_at[0]);
  EXPECT_EQ(s.split.steps[0].duration(), 13 * kMs);
  for (size_t k = 1; k < 6; ++k) {
    const Step& st = s.split.steps[k];
    SCOPED_TRACE(k);
    EXPECT_TRUE(st.by_rhythm);
    EXPECT_FALSE(st.eval);
    EXPECT_EQ(st.end_ns, forward_at[k] + 13 * kMs);  // the end of its optimizer step
    EXPECT_EQ(st.duration(), 19 * kMs);
    EXPECT_EQ(st.part(Part::kDataWait), 5 * kMs);  // the unrecorded time before its forward
    EXPECT_EQ(st.part(Part::kOptimizer), 3 * kMs);  // zero_grad is optimizer, not data wait
    EXPECT_EQ(st.part(Part::kForward), 5 * kMs);
    EXPECT_EQ(st.part(Part::kBackward), 6 * kMs);
    EXPECT_EQ(st.part(Part::kOther), 0u);
    EXPECT_EQ(st.arrival, Arrival::kBackward);
  }
}

// word_language_model: no Optimizer, a manual update (p.data.add_) after backward: the step ends at
// the end of its backward; the update and the next get_batch (1 + 7 ms) are its successor's data
// wait. Then evaluate(): forwards under no_grad, no backward (eval steps, split at each call of the
// first module), torch.save (in no step), and a second epoch.
TEST(LoopRhythm, ManualUpdateEvaluationAndCheckpoint) {
  TraceBuilder b(311);
  PhaseThread m(b, 311);
  uint64_t t = b.start_ns() + 10 * kMs;
  auto train = [&](int n) {
    for (int i = 0; i < n; ++i) {
      t += 7 * kMs;  // get_batch
      m.Range(t, t + 3 * kMs, Phase::kForward, "RNNModel.forward");
      m.Range(t + 3 * kMs, t + 4 * kMs, Phase::kForward, "NLLLoss.forward");
      m.Range(t + 4 * kMs, t + 9 * kMs, Phase::kBackward);
      t += 10 * kMs;  // 1 ms update
    }
  };
  train(4);
  for (int i = 0; i < 3; ++i) {  // evaluate()
    t += 2 * kMs;
    m.Range(t, t + 2 * kMs, Phase::kForward, "RNNModel.forward");
    m.Range(t + 2 * kMs, t + 3 * kMs, Phase::kForward, "NLLLoss.forward");
    t += 3 * kMs;
  }
  const uint64_t save = t + kMs;
  m.Range(save, save + 20 * kMs, Phase::kCheckpoint, "torch.save");
  t = save + 20 * kMs;
  train(3);
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 10u);
  int train_steps = 0, eval_steps = 0;
  for (const Step& st : s.split.steps) (st.eval ? eval_steps : train_steps)++;
  EXPECT_EQ(train_steps, 7);
  EXPECT_EQ(eval_steps, 3);
  for (size_t k : {1u, 2u, 3u, 8u, 9u}) {
    const Step& st = s.split.steps[k];
    SCOPED_TRACE(k);
    EXPECT_EQ(st.duration(), 17 * kMs);
    EXPECT_EQ(st.part(Part::kDataWait), 8 * kMs);
    EXPECT_EQ(st.part(Part::kForward), 4 * kMs);
    EXPECT_EQ(st.part(Part::kBackward), 5 * kMs);
    EXPECT_EQ(st.epoch, k < 4 ? 0u : 1u);
  }
  for (size_t k = 4; k < 7; ++k) {
    const Step& st = s.split.steps[k];
    SCOPED_TRACE(k);
    EXPECT_TRUE(st.eval);
    EXPECT_EQ(st.duration(), k == 4 ? 6 * kMs : 5 * kMs);  // the first has the update before it
    EXPECT_EQ(st.part(Part::kForward), 3 * kMs);
  }
  // The first training step after torch.save starts where the save ends.
  const Step& after = s.split.steps[7];
  EXPECT_FALSE(after.eval);
  EXPECT_EQ(after.begin_ns, save + 20 * kMs);
  EXPECT_EQ(after.part(Part::kDataWait), 7 * kMs);
}

// Batches loaded with torch.load in the loop (pre-tokenized shards): the load is the step's data
// wait, not time between steps.
TEST(LoopRhythm, TorchLoadBetweenTrainingStepsIsDataWait) {
  TraceBuilder b(314);
  PhaseThread m(b, 314);
  uint64_t t = b.start_ns() + kMs;
  for (int i = 0; i < 4; ++i) {
    m.Range(t, t + 3 * kMs, Phase::kCheckpoint, "torch.load");
    t += 4 * kMs;
    m.Range(t, t + 2 * kMs, Phase::kForward, "Net.forward");
    m.Range(t + 2 * kMs, t + 4 * kMs, Phase::kBackward);
    t += 4 * kMs;
  }
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 4u);
  for (size_t k = 1; k < 4; ++k) {
    EXPECT_EQ(s.split.steps[k].duration(), 8 * kMs) << k;
    EXPECT_EQ(s.split.steps[k].part(Part::kDataWait), 4 * kMs) << k;
  }
}

// Forwards without any backward (inference) are no training: no steps from the rhythm.
TEST(LoopRhythm, ForwardsWithoutBackwardAreNoSteps) {
  TraceBuilder b(312);
  PhaseThread m(b, 312);
  uint64_t t = b.start_ns() + kMs;
  for (int i = 0; i < 5; ++i, t += 4 * kMs) m.Range(t, t + 3 * kMs, Phase::kForward, "Net.forward");
  Split s = SplitOf(b);
  EXPECT_TRUE(s.split.steps.empty());
  EXPECT_EQ(s.split.rhythm_threads, 0u);
}

// Forwards tagged "[eval]" (the shim's name under no_grad / eval()) are evaluation steps even
// right before a training forward of the same module, and a module called twice in a training
// step (untagged) stays one step.
TEST(LoopRhythm, EvalTaggedForwardsAreEvaluation) {
  TraceBuilder b(313);
  PhaseThread m(b, 313);
  uint64_t t = b.start_ns() + kMs;
  auto train = [&] {
    t += kMs;
    m.Range(t, t + kMs, Phase::kForward, "Siamese.forward");
    m.Range(t + kMs, t + 2 * kMs, Phase::kForward, "Siamese.forward");
    m.Range(t + 2 * kMs, t + 4 * kMs, Phase::kBackward);
    m.Range(t + 4 * kMs, t + 5 * kMs, Phase::kOptimizerStep);
    t += 5 * kMs;
  };
  train();
  train();
  for (int i = 0; i < 2; ++i, t += 2 * kMs) m.Range(t, t + kMs, Phase::kForward, "Siamese.forward [eval]");
  train();
  Trace trace = TraceOf({&b});
  ProcessPhases phases = CollectPhases(trace.processes.at(0), trace.strings.Find(format::kPhaseDomain), &trace.strings);
  StepSplit split = SplitSteps(phases);
  ASSERT_EQ(split.steps.size(), 5u);
  const bool eval[] = {false, false, true, true, false};
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(split.steps[k].eval, eval[k]) << k;
  EXPECT_EQ(split.steps[4].part(Part::kForward), 2 * kMs);
}

// zip(loader_a, loader_b): two waits with no compute between them are one step.
// Lightning's last training batch of an epoch: no StopIteration call follows it (its fetcher
// prefetches), but the validation loader's iter() (300 ms of worker start-up), then validation
// waits and steps. The training step ends where the iterator creation starts; a step that
// creates an iterator before its own compute (next(iter(loader)) inside the loop) keeps it.
TEST(TrainingSteps, IteratorCreatedAfterTheStepsWorkEndsIt) {
  TraceBuilder b(304);
  PhaseThread m(b, 304);
  uint64_t t = b.start_ns() + kMs;
  t = m.Step(m.Step(t, kStep11), kStep11);
  m.Range(t, t + 300 * kMs, Phase::kDataLoaderIter);  // iter(val_loader): workers start
  t += 300 * kMs;
  t = m.Step(t, {.wait = 2 * kMs, .forward = 3 * kMs});  // a validation step
  // A training step that creates an iterator, then computes with its batch.
  const uint64_t own_begin = t;
  m.Range(t, t + 2 * kMs, Phase::kDataWait);
  m.Range(t + 2 * kMs, t + 7 * kMs, Phase::kDataLoaderIter);
  t = m.Step(t + 7 * kMs, {.forward = 3 * kMs, .backward = 4 * kMs, .optimizer = kMs});
  t = m.Step(t, {.wait = 2 * kMs, .forward = 3 * kMs, .backward = 4 * kMs, .optimizer = kMs});
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 5u);
  EXPECT_EQ(s.split.steps[0].duration(), 11 * kMs);
  EXPECT_EQ(s.split.steps[1].duration(), 11 * kMs);  // ends at iter(val_loader), not 300 ms later
  EXPECT_FALSE(s.split.steps[1].eval);
  EXPECT_TRUE(s.split.steps[2].eval);
  EXPECT_EQ(s.split.steps[3].begin_ns, own_begin);
  EXPECT_EQ(s.split.steps[3].duration(), 15 * kMs);  // keeps its own iterator creation
}

TEST(TrainingSteps, BackToBackWaitsAreOneStep) {
  TraceBuilder b(302);
  PhaseThread m(b, 302);
  uint64_t t = b.start_ns() + kMs;
  for (int i = 0; i < 2; ++i) {
    m.Range(t, t + 2 * kMs, Phase::kDataWait);
    m.Range(t + 2 * kMs, t + 5 * kMs, Phase::kDataWait);
    t = m.Step(t + 5 * kMs, {.forward = 3 * kMs, .backward = 4 * kMs});
  }
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 2u);
  EXPECT_EQ(s.split.steps[0].data_waits, 2u);
  EXPECT_EQ(s.split.steps[0].part(Part::kDataWait), 5 * kMs);
  EXPECT_EQ(s.split.steps[0].duration(), 12 * kMs);
}

// A loop with waits but no compute phases (inference with a plain function): every wait starts a
// step, and none is evaluation.
TEST(TrainingSteps, WaitsWithoutComputeAreStillSteps) {
  TraceBuilder b(303);
  PhaseThread m(b, 303);
  uint64_t t = b.start_ns() + kMs;
  for (int i = 0; i < 3; ++i) {
    m.Range(t, t + 2 * kMs, Phase::kDataWait);
    t += 10 * kMs;
  }
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 2u);  // the last has nothing after it
  EXPECT_FALSE(s.split.steps[0].eval);
  EXPECT_EQ(s.split.steps[0].part(Part::kOther), 8 * kMs);
  EXPECT_EQ(s.split.dropped, 1u);
}

// Only completed ranges in domain "trainprof" count, keyed by category: open ranges, ranges in
// the default domain with a phase's category, and unknown categories are ignored.
TEST(TrainingSteps, OnlyCompletedPhaseRangesByCategory) {
  TraceBuilder b(304);
  PhaseThread m(b, 304);
  const uint64_t t = b.start_ns() + kMs;
  b.Push(m.thread(), t, "enumerate(DataLoader)#x.__next__", 0, static_cast<uint64_t>(Phase::kDataWait));
  b.Pop(m.thread(), t + kMs);
  m.Range(t + 2 * kMs, t + 3 * kMs, static_cast<Phase>(99), "future phase");
  m.Range(t + 4 * kMs, t + 5 * kMs, Phase::kDataWait, "renamed by a later shim");
  m.Range(t + 5 * kMs, t + 6 * kMs, Phase::kForward);
  m.Push(t + 7 * kMs, Phase::kDataWait);  // never popped
  Split s = SplitOf(b);
  EXPECT_EQ(s.phases.Count(Phase::kDataWait), 1u);
  EXPECT_EQ(s.phases.Count(Phase::kForward), 1u);
  ASSERT_EQ(s.split.steps.size(), 1u);
  EXPECT_EQ(s.split.steps[0].begin_ns, t + 4 * kMs);
}

// Lightning with manual optimisation: training_step (forward) holds backward and the optimizer
// step; forward keeps only the rest.
TEST(TrainingSteps, MoreSpecificPhasesWinInsideTrainingStep) {
  TraceBuilder b(305);
  PhaseThread m(b, 305);
  const uint64_t t = b.start_ns() + kMs;
  for (uint64_t s : {t, t + 20 * kMs}) {
    m.Range(s, s + 2 * kMs, Phase::kDataWait);
    m.Push(s + 2 * kMs, Phase::kTrainingStep, "[LightningModule]Net.training_step");
    m.Range(s + 3 * kMs, s + 8 * kMs, Phase::kForward);
    m.Range(s + 9 * kMs, s + 15 * kMs, Phase::kBackward);
    m.Range(s + 15 * kMs, s + 17 * kMs, Phase::kOptimizerStep);
    m.Pop(s + 18 * kMs);
  }
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 2u);
  const Step& st = s.split.steps[0];
  EXPECT_FALSE(st.eval);
  EXPECT_EQ(st.part(Part::kForward), 8 * kMs);  // training_step [2, 18) less backward and optimizer
  EXPECT_EQ(st.part(Part::kBackward), 6 * kMs);
  EXPECT_EQ(st.part(Part::kOptimizer), 2 * kMs);
  EXPECT_EQ(st.part(Part::kOther), 2 * kMs);
}

// Lightning's automatic optimisation: the optimizer step runs the closure (training_step, then
// backward) inside Optimizer.step, inside LightningModule.optimizer_step. The innermost phase
// wins, so the closure's forward and backward are not optimizer time.
TEST(TrainingSteps, InnermostPhaseWinsInsideAnOptimizerStepClosure) {
  TraceBuilder b(307);
  PhaseThread m(b, 307);
  const uint64_t t = b.start_ns() + kMs;
  for (uint64_t s : {t, t + 30 * kMs}) {
    m.Range(s, s + 3 * kMs, Phase::kDataWait);
    m.Push(s + 4 * kMs, Phase::kOptimizerStep, "[LightningModule]Net.optimizer_step");
    m.Push(s + 5 * kMs, Phase::kOptimizerStep, "Optimizer.step#SGD.step");
    m.Push(s + 6 * kMs, Phase::kTrainingStep, "[Strategy]SingleDeviceStrategy.training_step");
    m.Range(s + 7 * kMs, s + 12 * kMs, Phase::kForward);
    m.Pop(s + 13 * kMs);
    m.Push(s + 14 * kMs, Phase::kBackward, "[Strategy]SingleDeviceStrategy.backward");
    m.Push(s + 15 * kMs, Phase::kBackward, "Tensor.backward");
    m.Range(s + 16 * kMs, s + 17 * kMs, Phase::kCollective);  // a gradient hook's collective
    m.Range(s + 18 * kMs, s + 19 * kMs, Phase::kForward);     // a checkpointed forward recomputed
    m.Pop(s + 20 * kMs);
    m.Pop(s + 21 * kMs);
    m.Pop(s + 24 * kMs);
    m.Pop(s + 25 * kMs);
    m.Range(s + 26 * kMs, s + 27 * kMs, Phase::kZeroGrad, "[LightningModule]Net.optimizer_zero_grad");
  }
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 2u);
  const Step& st = s.split.steps[0];
  EXPECT_FALSE(st.eval);
  EXPECT_EQ(st.part(Part::kDataWait), 3 * kMs);
  EXPECT_EQ(st.part(Part::kForward), 7 * kMs);     // training_step [6, 13)
  EXPECT_EQ(st.part(Part::kBackward), 7 * kMs);    // [14, 21), its collective and recompute included
  EXPECT_EQ(st.part(Part::kCollective), 0u);
  EXPECT_EQ(st.part(Part::kOptimizer), 8 * kMs);   // [4, 6) + [13, 14) + [21, 25) + zero_grad 1
  EXPECT_EQ(st.part(Part::kOther), 5 * kMs);       // [3, 4) + [25, 26) + [27, 30)
}

// The step is the optimizer step (docs/analysis.md, "Steps"), issue 37 classes 1 and 6.

// pytorch/examples time_sequence_prediction: LBFGS, `optimizer.step(closure)` runs zero_grad,
// forward, loss and backward 4 times; then a prediction under no_grad (two [eval] forwards). No
// DataLoader: the loop's rhythm. Each optimizer step is a training step holding its 4 passes; the
// predictions are evaluation steps, and evaluating after every step makes no epochs.
TEST(OptimizerStep, ClosureStepsAreTheStepsOfTheLoopRhythm) {
  TraceBuilder b(320);
  PhaseThread m(b, 320);
  uint64_t t = b.start_ns() + 10 * kMs;
  std::vector<uint64_t> step_begin, step_end, eval_end;
  for (int i = 0; i < 6; ++i) {
    t += kMs;  // the loop's own code before the step (closure made, a print)
    step_begin.push_back(t);
    m.Push(t, Phase::kOptimizerStep, "Optimizer.step#LBFGS.step");
    t += kMs;
    for (int pass = 0; pass < 4; ++pass) {
      m.Range(t, t + kMs, Phase::kZeroGrad);
      m.Range(t + kMs, t + 4 * kMs, Phase::kForward, "Sequence.forward");
      m.Range(t + 4 * kMs, t + 5 * kMs, Phase::kForward, "MSELoss.forward");
      m.Range(t + 5 * kMs, t + 9 * kMs, Phase::kBackward);
      t += 10 * kMs;
    }
    m.Pop(t);
    step_end.push_back(t);
    m.Range(t + kMs, t + 6 * kMs, Phase::kForward, "Sequence.forward [eval]");
    m.Range(t + 6 * kMs, t + 7 * kMs, Phase::kForward, "MSELoss.forward [eval]");
    t += 7 * kMs;
    eval_end.push_back(t);
  }
  Split s;
  s.trace = TraceOf({&b});
  s.phases = CollectPhases(s.trace.processes.at(0), s.trace.strings.Find(format::kPhaseDomain), &s.trace.strings);
  s.split = SplitSteps(s.phases);
  std::vector<const Step*> train;
  for (const Step& st : s.split.steps) {
    if (!st.eval) train.push_back(&st);
  }
  ASSERT_EQ(train.size(), 6u);
  EXPECT_EQ(s.split.steps.size(), 12u);  // and 6 predictions
  for (size_t k = 0; k < 6; ++k) {
    SCOPED_TRACE(k);
    const Step& st = *train[k];
    EXPECT_EQ(st.begin_ns, k == 0 ? step_begin[0] : eval_end[k - 1]);
    EXPECT_EQ(st.end_ns, step_end[k]);
    EXPECT_EQ(st.passes, 4u);
    EXPECT_EQ(st.passes_in_optimizer, 4u);
    EXPECT_EQ(st.micro_batches, 1u);
    EXPECT_EQ(st.epoch, 0u);
    EXPECT_EQ(st.part(Part::kBackward), 16 * kMs);
    EXPECT_EQ(st.part(Part::kForward), 16 * kMs);
    EXPECT_EQ(st.part(Part::kOptimizer), 5 * kMs + 4 * kMs);  // the step's own time, and zero_grad
    EXPECT_EQ(st.part(Part::kDataWait), k == 0 ? 0 : kMs);
  }
}

// The same closure steps in a DataLoader loop: one step per batch, its passes inside the optimizer
// step.
TEST(OptimizerStep, ClosureStepsInADataLoaderLoop) {
  TraceBuilder b(321);
  PhaseThread m(b, 321);
  uint64_t t = b.start_ns() + 10 * kMs;
  for (int i = 0; i < 3; ++i) {
    m.Range(t, t + 2 * kMs, Phase::kDataWait);
    t += 2 * kMs;
    m.Push(t, Phase::kOptimizerStep, "Optimizer.step#LBFGS.step");
    for (int pass = 0; pass < 3; ++pass) {
      m.Range(t + kMs, t + 3 * kMs, Phase::kForward);
      m.Range(t + 3 * kMs, t + 5 * kMs, Phase::kBackward);
      t += 5 * kMs;
    }
    m.Pop(t + kMs);
    t += kMs;
  }
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 3u);
  for (const Step& st : s.split.steps) {
    EXPECT_FALSE(st.eval);
    EXPECT_EQ(st.passes, 3u);
    EXPECT_EQ(st.passes_in_optimizer, 3u);
    EXPECT_EQ(st.micro_batches, 1u);
  }
}

// Gradient accumulation over 3 micro-batches, each its own DataLoader wait: forward, backward,
// forward, backward, forward, backward, optimizer step. 4 optimizer steps, then the epoch ends
// after 2 micro-batches without an optimizer step (`break` mid-accumulation): they stay a step of
// their own. Each optimizer step's parts are the sums over its micro-batches.
TEST(OptimizerStep, AccumulatedMicroBatchesAreOneStep) {
  TraceBuilder b(322);
  PhaseThread m(b, 322);
  uint64_t t = b.start_ns() + 10 * kMs;
  std::vector<uint64_t> begins;
  for (int i = 0; i < 4; ++i) {
    begins.push_back(t);
    for (int micro = 0; micro < 3; ++micro) {
      t = m.Step(t, StepPlan{.wait = 2 * kMs, .forward = 3 * kMs, .backward = 4 * kMs, .other = kMs});
    }
    m.Range(t, t + 2 * kMs, Phase::kOptimizerStep);
    t += 3 * kMs;
  }
  begins.push_back(t);
  for (int micro = 0; micro < 2; ++micro) {
    t = m.Step(t, StepPlan{.wait = 2 * kMs, .forward = 3 * kMs, .backward = 4 * kMs});
  }
  t = m.EpochEnd(t, kMs);
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 5u);
  EXPECT_EQ(s.split.data_waits, 4u * 3 + 2 + 1);
  for (size_t k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    const Step& st = s.split.steps[k];
    EXPECT_EQ(st.begin_ns, begins[k]);
    EXPECT_EQ(st.end_ns, begins[k + 1]);
    EXPECT_EQ(st.duration(), 3 * 10 * kMs + 3 * kMs);
    EXPECT_EQ(st.micro_batches, 3u);
    EXPECT_EQ(st.data_waits, 3u);
    EXPECT_EQ(st.passes, 3u);
    EXPECT_EQ(st.passes_in_optimizer, 0u);
    EXPECT_EQ(st.part(Part::kDataWait), 6 * kMs);
    EXPECT_EQ(st.part(Part::kForward), 9 * kMs);
    EXPECT_EQ(st.part(Part::kBackward), 12 * kMs);
    EXPECT_EQ(st.part(Part::kOptimizer), 2 * kMs);
    EXPECT_EQ(st.part(Part::kOther), 4 * kMs);
    EXPECT_EQ(st.arrival, Arrival::kBackward);
    EXPECT_EQ(st.arrival_ns, begins[k] + 2 * 10 * kMs + 5 * kMs);  // the last micro-batch's backward
  }
  const Step& rest = s.split.steps[4];
  EXPECT_FALSE(rest.eval);
  EXPECT_EQ(rest.micro_batches, 2u);
  EXPECT_EQ(rest.begin_ns, begins[4]);
  EXPECT_EQ(rest.duration(), 18 * kMs);  // ended by the StopIteration wait
}

// Accumulation in a loop without DataLoader (batches sliced from a tensor): forward, backward,
// forward, backward, optimizer step cycles become one step each.
TEST(OptimizerStep, AccumulationInTheLoopRhythm) {
  TraceBuilder b(323);
  PhaseThread m(b, 323);
  uint64_t t = b.start_ns() + 10 * kMs;
  std::vector<uint64_t> ends;
  for (int i = 0; i < 5; ++i) {
    for (int micro = 0; micro < 2; ++micro) {
      t += kMs;  // get_batch
      m.Range(t, t + 3 * kMs, Phase::kForward);
      m.Range(t + 3 * kMs, t + 7 * kMs, Phase::kBackward);
      t += 7 * kMs;
    }
    m.Range(t, t + kMs, Phase::kOptimizerStep);
    t += kMs;
    ends.push_back(t);
  }
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    SCOPED_TRACE(k);
    const Step& st = s.split.steps[k];
    EXPECT_TRUE(st.by_rhythm);
    EXPECT_EQ(st.end_ns, ends[k]);
    EXPECT_EQ(st.micro_batches, 2u);
    EXPECT_EQ(st.passes, 2u);
    EXPECT_EQ(st.part(Part::kDataWait), k == 0 ? kMs : 2 * kMs);  // step 0 starts at its first forward
  }
}

// A loop that takes every micro-batch of an optimizer step first (Hugging Face's Trainer with
// gradient_accumulation_steps=2): two waits, then forward, backward, forward, backward, optimizer
// step: 2 micro-batches. Two waits before one forward and backward (zip of two loaders) are one
// batch; so are a GAN's three backward passes after one wait.
TEST(OptimizerStep, WaitsTakenTogetherAreMicroBatchesOnlyWithAPassEach) {
  for (int shape = 0; shape < 3; ++shape) {
    SCOPED_TRACE(shape);
    TraceBuilder b(324);
    PhaseThread m(b, 324);
    uint64_t t = b.start_ns() + 10 * kMs;
    for (int i = 0; i < 4; ++i) {
      const int waits = shape == 2 ? 1 : 2;
      for (int w = 0; w < waits; ++w) {
        m.Range(t, t + kMs, Phase::kDataWait);
        t += kMs;
      }
      const int passes = shape == 0 ? 2 : shape == 1 ? 1 : 3;
      for (int p = 0; p < passes; ++p) {
        m.Range(t, t + 2 * kMs, Phase::kForward);
        m.Range(t + 2 * kMs, t + 4 * kMs, Phase::kBackward);
        t += 4 * kMs;
        if (shape == 2 && p != 1) {
          m.Range(t, t + kMs, Phase::kOptimizerStep);  // the discriminator's, then the generator's
          t += kMs;
        }
      }
      if (shape != 2) {
        m.Range(t, t + kMs, Phase::kOptimizerStep);
        t += kMs;
      }
    }
    Split s = SplitOf(b);
    ASSERT_EQ(s.split.steps.size(), 4u);
    for (const Step& st : s.split.steps) {
      EXPECT_EQ(st.micro_batches, shape == 0 ? 2u : 1u);
      EXPECT_EQ(st.passes, shape == 0 ? 2u : shape == 1 ? 1u : 3u);
    }
  }
}

// A mixed-precision loop whose GradScaler skips optimizer.step() on overflow: GradScaler.step is
// the optimizer step (the shim records it), so the skipped step stays a step.
TEST(OptimizerStep, AStepWhoseScalerSkippedTheUpdateStaysAStep) {
  TraceBuilder b(325);
  PhaseThread m(b, 325);
  uint64_t t = b.start_ns() + 10 * kMs;
  for (int i = 0; i < 6; ++i) {
    t = m.Step(t, StepPlan{.wait = kMs, .forward = 2 * kMs, .backward = 2 * kMs});
    m.Push(t, Phase::kOptimizerStep, "GradScaler.step#GradScaler.step");
    if (i >= 2) m.Range(t + kMs, t + 2 * kMs, Phase::kOptimizerStep, "Optimizer.step#SGD.step");
    m.Pop(t + 3 * kMs);
    t += 3 * kMs;
  }
  Split s = SplitOf(b);
  ASSERT_EQ(s.split.steps.size(), 6u);
  for (const Step& st : s.split.steps) EXPECT_EQ(st.micro_batches, 1u);
}

// Random nesting, categories and gaps: never a crash, and the parts always add up to the step.
TEST(TrainingSteps, RandomPhasesKeepTheInvariants) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 50; ++round) {
    TraceBuilder b(306);
    PhaseThread m(b, 306);
    uint64_t t = b.start_ns();
    int depth = 0;
    for (int i = 0; i < 400; ++i) {
      t += rng() % (2 * kMs);
      if (depth > 0 && rng() % 2 == 0) {
        m.Pop(t);
        --depth;
      } else if (rng() % 25 == 0) {
        m.DataEnd(t);
      } else {
        m.Push(t, static_cast<Phase>(1 + rng() % 13));
        ++depth;
      }
    }
    Split s = SplitOf(b);
    for (size_t k = 0; k < s.split.steps.size(); ++k) {
      const Step& st = s.split.steps[k];
      uint64_t sum = 0;
      for (uint64_t p : st.parts) sum += p;
      ASSERT_EQ(sum, st.duration()) << "round " << round << " step " << k;
      ASSERT_LE(st.begin_ns, st.end_ns);
      if (k > 0) {
        ASSERT_LE(s.split.steps[k - 1].end_ns, st.begin_ns);
      }
    }
  }
}

}  // namespace
}  // namespace trainprof::collector
