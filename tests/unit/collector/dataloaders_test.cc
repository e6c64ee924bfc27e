// DataLoader identities (dataloaders.h) and the input pipeline per DataLoader (input_pipeline.h):
// waits and worker processes tied to the loader the shim's marks name, on synthetic runs with a
// train loader and an evaluation loader (docs/analysis.md, "Input pipeline").
#include "collector/analysis/dataloaders.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "collector/analysis/bottleneck.h"
#include "collector/render/render.h"
#include "collector/report/report.h"
#include "phase_builder.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::kMs;
using test::PhaseThread;
using test::TraceBuilder;
namespace fmt = trainprof::format;

constexpr uint64_t T0 = 1'000'000'000;
constexpr test::StepPlan kCompute = {.forward = 4 * kMs, .backward = 5 * kMs, .optimizer = 1 * kMs};
constexpr const char* kTrain =
    "DataLoader#1 dataset=TensorDataset batch_size=16 num_workers=2 persistent_workers=0 pin_memory=0";
constexpr const char* kTest = "DataLoader#2 dataset=Digits batch_size=32 num_workers=2 persistent_workers=1 pin_memory=1";

TEST(DataLoaders, ParsesTheMainProcessDescription) {
  const auto d = ParseLoaderName(kTrain);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, 1);
  EXPECT_EQ(d->dataset, "TensorDataset");
  EXPECT_EQ(d->batch_size, 16);
  EXPECT_EQ(d->num_workers, 2);
  EXPECT_EQ(d->persistent_workers, false);
  EXPECT_EQ(d->pin_memory, false);
  EXPECT_FALSE(d->worker_id);
}

TEST(DataLoaders, ParsesWorkerMarksAndUnknownValues) {
  const auto w = ParseLoaderName("DataLoader#? dataset=Digits num_workers=3 worker_id=2 future=x");
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->id);
  EXPECT_EQ(w->dataset, "Digits");
  EXPECT_EQ(w->num_workers, 3);
  EXPECT_EQ(w->worker_id, 2);
  const auto none = ParseLoaderName("DataLoader#7 batch_size=none persistent_workers=yes");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->id, 7);
  EXPECT_FALSE(none->batch_size);
  EXPECT_FALSE(none->persistent_workers);
  EXPECT_FALSE(ParseLoaderName("DataLoader StopIteration"));
  EXPECT_FALSE(ParseLoaderName(""));
}

/// MNIST-style: epoch 1 trains 5 steps on loader #1 (2 workers forked in its iter()), then
/// evaluates 3 batches of loader #2 (persistent workers: one forked, one spawned, so it names no
/// loader id), then epoch 2 trains 5 steps on new workers of loader #1 while #2's workers live on.
struct TwoLoaders {
  TraceBuilder main{200, 1, T0};
  PhaseThread m{main, 200};
  std::vector<std::unique_ptr<TraceBuilder>> workers;

  PhaseThread Worker(uint64_t start, uint64_t end, const std::string& mark) {
    PhaseThread t = test::WorkerProcess(&workers, 201 + static_cast<int32_t>(workers.size()), 200, start, end);
    t.Mark(start + kMs, Phase::kDataLoader, mark);
    return t;
  }

  uint64_t TrainEpoch(uint64_t t, int fetches_per_worker) {
    m.Mark(t, Phase::kDataLoader, kTrain);
    for (int k = 0; k < 2; ++k) {
      PhaseThread w = Worker(t + kMs, t + 80 * kMs,
                             "DataLoader#1 dataset=TensorDataset num_workers=2 worker_id=" + std::to_string(k));
      uint64_t f = t + 5 * kMs;
      for (int i = 0; i < fetches_per_worker; ++i) f = w.Fetch(f, 16, kMs / 2, kMs) + kMs;
    }
    t += 10 * kMs;
    for (int i = 0; i < 5; ++i) t = m.Step(m.LoaderWait(t, 3 * kMs, kTrain), kCompute);
    m.Range(t, t + kMs, Phase::kDataWait);  // the StopIteration call: no batch mark needed
    m.DataEnd(t + kMs);
    return t + 2 * kMs;
  }

  Trace Load() {
    uint64_t t = TrainEpoch(T0 + 10 * kMs, 3);
    m.Mark(t, Phase::kDataLoader, kTest);
    PhaseThread a = Worker(t + kMs, T0 + 900 * kMs, "DataLoader#2 dataset=Digits num_workers=2 worker_id=0");
    PhaseThread b = Worker(t + 2 * kMs, T0 + 900 * kMs, "DataLoader#? dataset=Digits num_workers=2 worker_id=1");
    a.Fetch(t + 5 * kMs, 32, kMs / 4, kMs);
    a.Fetch(t + 20 * kMs, 32, kMs / 4, kMs);
    b.Fetch(t + 6 * kMs, 32, kMs / 4, kMs);
    t += 15 * kMs;
    for (int i = 0; i < 3; ++i) {
      t = m.LoaderWait(t, 4 * kMs, kTest);
      m.Range(t, t + 2 * kMs, Phase::kForward, "Net.forward [eval]");
      t += 2 * kMs;
    }
    t = TrainEpoch(t + 5 * kMs, 2);
    main.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 1'000 * kMs);
    std::vector<const TraceBuilder*> all = {&main};
    for (const auto& w : workers) all.push_back(w.get());
    return test::TraceOf(all);
  }
};

TEST(DataLoaders, TrainAndEvalLoadersAreReportedApart) {
  TwoLoaders run;
  const Report report = collector::Analyze(run.Load(), {});
  ASSERT_EQ(report.bottleneck.processes.size(), 1u);
  const TrainingProcess& t = report.bottleneck.processes[0];
  EXPECT_EQ(t.steps, 10u);
  EXPECT_EQ(t.eval_steps, 3u);
  ASSERT_TRUE(t.input);
  const InputPipeline& in = *t.input;
  ASSERT_EQ(in.loaders.size(), 2u);
  const LoaderStats& train = in.loaders[0];
  EXPECT_EQ(train.description.id, 1);
  EXPECT_EQ(train.description.dataset, "TensorDataset");
  EXPECT_EQ(train.description.batch_size, 16);
  EXPECT_TRUE(train.feeds_training);
  EXPECT_EQ(train.waits, 10u);  // the StopIteration calls carry no mark here
  EXPECT_EQ(train.training_waits, 10u);
  EXPECT_EQ(train.wait_ns, 30 * kMs);
  EXPECT_EQ(train.worker_processes, 4u);
  EXPECT_EQ(train.concurrent_workers, 2u);
  EXPECT_EQ(train.fetch.fetches, 10u);
  EXPECT_EQ(train.fetch.getitem_calls, 160u);
  const LoaderStats& eval = in.loaders[1];
  EXPECT_EQ(eval.description.id, 2);
  EXPECT_EQ(eval.description.dataset, "Digits");
  EXPECT_EQ(eval.description.batch_size, 32);
  EXPECT_EQ(eval.description.persistent_workers, true);
  EXPECT_EQ(eval.description.pin_memory, true);
  EXPECT_FALSE(eval.feeds_training);
  EXPECT_EQ(eval.waits, 3u);
  EXPECT_DOUBLE_EQ(eval.mean_wait_ns(), 4.0 * kMs);
  EXPECT_EQ(eval.worker_processes, 2u);  // the spawned one tied by time, dataset and num_workers
  EXPECT_EQ(eval.fetch.fetches, 3u);
  // The pipeline of the training steps holds the train loader's workers only, though the evaluation
  // workers live through epoch 2.
  EXPECT_EQ(in.worker_processes, 4u);
  EXPECT_EQ(in.concurrent_workers, 2u);
  EXPECT_EQ(in.other_workers, 2u);
  EXPECT_EQ(in.fetch.fetches, 10u);

  const auto j = nlohmann::json::parse(RenderJson(report));
  const auto& loaders = j["bottleneck"]["processes"][0]["input"]["loaders"];
  ASSERT_EQ(loaders.size(), 2u);
  EXPECT_EQ(loaders[0]["id"], 1);
  EXPECT_EQ(loaders[0]["dataset"], "TensorDataset");
  EXPECT_EQ(loaders[0]["batch_size"], 16);
  EXPECT_EQ(loaders[0]["num_workers"], 2);
  EXPECT_EQ(loaders[0]["persistent_workers"], false);
  EXPECT_EQ(loaders[0]["pin_memory"], false);
  EXPECT_EQ(loaders[0]["feeds_training"], true);
  EXPECT_EQ(loaders[0]["waits"], 10);
  EXPECT_EQ(loaders[0]["mean_wait_ns"], 3.0 * kMs);
  EXPECT_EQ(loaders[0]["worker_processes"], 4);
  EXPECT_EQ(loaders[0]["fetch"]["count"], 10);
  EXPECT_EQ(loaders[1]["id"], 2);
  EXPECT_EQ(loaders[1]["feeds_training"], false);
  EXPECT_EQ(loaders[1]["worker_processes"], 2);
  EXPECT_EQ(loaders[1]["fetch"]["count"], 3);

  EXPECT_TRUE(test::Says(t.text,
                         "Input pipeline (DataLoader #1, TensorDataset): 2 DataLoader workers (4 worker processes: "
                         "re-created for each iterator);"));
  EXPECT_TRUE(test::Says(t.text,
                         "DataLoader #1 (feeds the training steps): TensorDataset, batch_size 16, 2 workers, not "
                         "persistent, pin_memory off; 10 waits, mean 3.00 ms; 4 worker processes; a batch fetch "
                         "takes"));
  EXPECT_TRUE(test::Says(t.text,
                         "DataLoader #2 (no training step): Digits, batch_size 32, 2 workers, persistent, pin_memory "
                         "on; 3 waits, mean 4.00 ms; 2 worker processes; a batch fetch takes"));
}

// num_workers=0: each loader's batches are fetched in the main process inside its own waits.
TEST(DataLoaders, MainProcessFetchesGoToTheLoaderWaitedOn) {
  TraceBuilder main{200, 1, T0};
  PhaseThread m{main, 200};
  const char* train = "DataLoader#1 dataset=Items batch_size=8 num_workers=0 persistent_workers=0 pin_memory=0";
  const char* val = "DataLoader#2 dataset=Items batch_size=64 num_workers=0 persistent_workers=0 pin_memory=0";
  uint64_t t = T0 + 10 * kMs;
  m.Mark(t, Phase::kDataLoader, train);
  for (int i = 0; i < 6; ++i) {
    m.Push(t, Phase::kDataWait);
    m.Mark(t + 1, Phase::kDataLoaderBatch, train);
    m.Fetch(t + 2, 8, kMs / 4, kMs / 2);
    m.Pop(t + 3 * kMs);
    t = m.Step(t + 3 * kMs, kCompute);
  }
  m.Mark(t, Phase::kDataLoader, val);
  for (int i = 0; i < 2; ++i) {
    m.Push(t, Phase::kDataWait);
    m.Mark(t + 1, Phase::kDataLoaderBatch, val);
    m.Fetch(t + 2, 64, kMs / 8, kMs);
    m.Pop(t + 10 * kMs);
    m.Range(t + 10 * kMs, t + 12 * kMs, Phase::kForward, "Net.forward [eval]");
    t += 12 * kMs;
  }
  main.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 500 * kMs);
  const Report report = collector::Analyze(test::TraceOf({&main}), {});
  const InputPipeline& in = *report.bottleneck.processes.at(0).input;
  EXPECT_EQ(in.loading, Loading::kMainProcess);
  EXPECT_EQ(in.fetch.fetches, 6u);  // the training loader's only
  ASSERT_EQ(in.loaders.size(), 2u);
  EXPECT_EQ(in.loaders[0].fetch.fetches, 6u);
  EXPECT_EQ(in.loaders[0].fetch.getitem_calls, 48u);
  EXPECT_EQ(in.loaders[0].worker_processes, 0u);
  EXPECT_EQ(in.loaders[1].fetch.fetches, 2u);
  EXPECT_EQ(in.loaders[1].fetch.getitem_calls, 128u);
  EXPECT_FALSE(in.loaders[1].feeds_training);
}

// A trace without DataLoader marks (an older shim) has no loaders and the pipeline as before.
TEST(DataLoaders, NoMarksNoLoaders) {
  TraceBuilder main{200, 1, T0};
  PhaseThread m{main, 200};
  uint64_t t = T0 + 10 * kMs;
  for (int i = 0; i < 6; ++i) t = m.Step(t, {.wait = 3 * kMs, .forward = 4 * kMs, .backward = 5 * kMs});
  main.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 500 * kMs);
  const Report report = collector::Analyze(test::TraceOf({&main}), {});
  EXPECT_TRUE(report.bottleneck.processes.at(0).input->loaders.empty());
}

}  // namespace
}  // namespace trainprof::collector
