// `report --rank` (collector/read/rank_filter.h): the processes of some ranks with their DataLoader
// workers, tree links remapped, files cut to theirs, and the error for a rank no process has.
#include "collector/read/rank_filter.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
using test::TraceOf;
namespace fmt = format;

// torchrun (100) starts rank 0 (110) and rank 1 (111); each forks a DataLoader worker (120, 121)
// that inherits its RANK.
struct Job {
  TraceBuilder launcher{100, 1, 1'000}, rank0{110, 100, 2'000}, rank1{111, 100, 2'100};
  TraceBuilder worker0{120, 110, 3'000}, worker1{121, 111, 3'100};
  Job() {
    rank0.Env("RANK", "0");
    rank1.Env("RANK", "1");
    worker0.Env("RANK", "0").Flags(fmt::kFlagForkedChild);
    worker1.Env("RANK", "1").Flags(fmt::kFlagForkedChild);
    rank0.Fork(rank0.Thread(110), 2'900, 120);
    rank1.Fork(rank1.Thread(111), 3'000, 121);
  }
  Trace Load() const { return TraceOf({&launcher, &rank0, &rank1, &worker0, &worker1}); }
};

TEST(RankFilter, KeepsTheRanksWithTheirWorkersAndRemapsTheTree) {
  Trace t = Job().Load();
  ASSERT_EQ(t.processes.size(), 5u);
  ASSERT_EQ(t.files.size(), 5u);
  ASSERT_EQ(KeepRanks(&t, {1}), "");
  ASSERT_EQ(t.processes.size(), 2u);
  const Process& rank = t.processes[0];
  const Process& worker = t.processes[1];
  EXPECT_EQ(rank.pid, 111);
  EXPECT_EQ(rank.parent, -1);  // its launcher is left out: a root now
  EXPECT_EQ(rank.depth, 0);
  EXPECT_EQ(rank.children, std::vector<int>{1});
  EXPECT_EQ(worker.pid, 121);
  EXPECT_EQ(worker.parent, 0);
  EXPECT_EQ(worker.depth, 1);
  ASSERT_EQ(t.files.size(), 2u);  // theirs only, each image pointing at its own
  for (const Process& p : t.processes) {
    ASSERT_EQ(p.images.size(), 1u);
    EXPECT_NE(t.files[p.images[0].file].path.find("pid-" + std::to_string(p.pid)), std::string::npos);
  }
}

TEST(RankFilter, NoRanksKeepsEverythingAndAMissingRankIsAnErrorThatChangesNothing) {
  Trace t = Job().Load();
  EXPECT_EQ(KeepRanks(&t, {}), "");
  EXPECT_EQ(t.processes.size(), 5u);
  EXPECT_EQ(KeepRanks(&t, {1, 9}), "--rank 9: no process has rank 9 (ranks: 0, 1)");
  EXPECT_EQ(t.processes.size(), 5u);
  EXPECT_EQ(t.files.size(), 5u);
  const Job job;
  Trace none = TraceOf({&job.launcher});
  EXPECT_EQ(KeepRanks(&none, {0}), "--rank 0: no process has rank 0 (no process has a rank)");
}

TEST(RankFilter, RanksInTheMessageAreRuns) {
  std::vector<std::unique_ptr<TraceBuilder>> b;
  std::vector<const TraceBuilder*> all;
  for (int r : {0, 1, 2, 3, 5, 7, 8}) {
    b.push_back(std::make_unique<TraceBuilder>(200 + r, 1, 1'000));
    b.back()->Env("RANK", std::to_string(r));
    all.push_back(b.back().get());
  }
  Trace t = TraceOf(all);
  EXPECT_EQ(KeepRanks(&t, {4}), "--rank 4: no process has rank 4 (ranks: 0-3, 5, 7, 8)");
}

}  // namespace
}  // namespace trainprof::collector
