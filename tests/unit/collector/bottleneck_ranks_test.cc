// The ranks part of the bottleneck analysis on synthetic two-rank runs with exact timings: the
// straggler and its lateness, a rank bound by it, ranks that do not meet inside a step, several
// hosts; the sentences, the Ranks table and the JSON (docs/analysis.md, "Ranks and the straggler").
#include "collector/analysis/bottleneck.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "collector/render/render.h"
#include "collector/report/report.h"
#include "phase_builder.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::kMs;
using test::PhaseThread;
using test::Says;
using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

constexpr uint64_t T0 = 1'000'000'000;

// Two DDP ranks; rank 1 does 40 ms of extra work between forward and backward, and rank 0 waits
// for it inside its backward (the all-reduce).
struct TwoRanks {
  TraceBuilder r0{401, 1, T0};
  TraceBuilder r1{402, 1, T0};
  /// `ddp`: the forwards are DistributedDataParallel's (else "Net.forward": replicas trained apart).
  /// `all_reduce`: rank 1's backward holds a dist.all_reduce (its own gradient averaging).
  TwoRanks(uint64_t extra, int steps = 6, bool ddp = true, bool all_reduce = false, uint64_t wait0 = kMs) {
    r0.Env("RANK", "0").Env("WORLD_SIZE", "2").HeaderEnd(fmt::EndKind::kExit, 0, T0 + 2'000 * kMs);
    r1.Env("RANK", "1").Env("WORLD_SIZE", "2").HeaderEnd(fmt::EndKind::kExit, 0, T0 + 2'000 * kMs);
    PhaseThread a(r0, 401), b(r1, 402);
    const char* forward = ddp ? "DistributedDataParallel.forward" : "Net.forward";
    a.forward_name = forward;  // DDP: the ranks meet in each step
    uint64_t t = T0 + 10 * kMs;
    for (int i = 0; i < steps; ++i) {
      // rank 0: wait 1, forward 10, backward 20 + extra (waiting), optimizer 2
      a.Step(t, {.wait = wait0, .forward = 10 * kMs, .backward = 20 * kMs + extra - (wait0 - kMs), .optimizer = 2 * kMs});
      // rank 1: wait 1, forward 10, extra (unrecorded), backward 20, optimizer 2
      b.Range(t, t + kMs, Phase::kDataWait);
      b.Range(t + kMs, t + 11 * kMs, Phase::kForward, forward);
      b.Push(t + 11 * kMs + extra, Phase::kBackward);
      if (all_reduce) b.Range(t + 29 * kMs + extra, t + 30 * kMs + extra, Phase::kCollective, "all_reduce");
      b.Pop(t + 31 * kMs + extra);
      b.Range(t + 31 * kMs + extra, t + 33 * kMs + extra, Phase::kOptimizerStep);
      t += 33 * kMs + extra;
    }
  }
  Report Analyze() const { return collector::Analyze(TraceOf({&r0, &r1}), {}); }
};

TEST(Bottleneck, StragglerNamedWithItsLateness) {
  Report report = TwoRanks(40 * kMs).Analyze();
  const Bottleneck& b = report.bottleneck;
  ASSERT_EQ(b.processes.size(), 2u);
  ASSERT_TRUE(b.ranks);
  const RankSync& rs = *b.ranks;
  EXPECT_EQ(rs.clock, "monotonic");
  EXPECT_EQ(rs.matched_steps, 5u);
  EXPECT_TRUE(rs.warmup_skipped);
  ASSERT_EQ(rs.ranks.size(), 2u);
  EXPECT_TRUE(rs.straggler);
  ASSERT_EQ(rs.latest, 1);
  const RankRow& s = rs.ranks[1];
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.arrival, "backward");
  EXPECT_DOUBLE_EQ(*s.mean_lateness_ns, 40.0 * kMs);
  EXPECT_DOUBLE_EQ(*s.median_lateness_ns, 40.0 * kMs);
  EXPECT_EQ(s.last_steps, 5u);
  EXPECT_DOUBLE_EQ(*rs.ranks[0].wait_ns, 40.0 * kMs);
  EXPECT_DOUBLE_EQ(*rs.ranks[0].mean_lateness_ns, 0.0);
  EXPECT_DOUBLE_EQ(rs.ranks[0].mean_compute_ns, 72.0 * kMs);
  EXPECT_DOUBLE_EQ(rs.ranks[1].mean_compute_ns, 32.0 * kMs);
  EXPECT_DOUBLE_EQ(rs.mean_step_ns, 73.0 * kMs);
  EXPECT_TRUE(Says(b.rank_text,
                   "rank 1 is the straggler: it reaches the gradient synchronisation (start of backward) 40.0 ms "
                   "(median; mean 40.0 ms, 54.8% of the mean step 73.0 ms) after rank 0 and arrives last in "
                   "100.0% of steps (5 of 5); rank 0 waits 40.0 ms per step for it (backward+collective beyond "
                   "rank 1's) over 5 matched steps (step 0 left out)."));
  // Rank 0's own verdict starts with the straggler it waits for (issue 37, class 4); rank 1's does not.
  const TrainingProcess& p0 = b.processes[0];
  EXPECT_EQ(p0.waits_for_rank, 1);
  EXPECT_DOUBLE_EQ(p0.straggler_wait_ns, 40.0 * kMs);
  ASSERT_GE(p0.text.size(), 2u);
  EXPECT_EQ(p0.text[1], "Bound by waiting for rank 1, the straggler (Ranks): 40.0 ms of its 73.0 ms step (54.8%) is "
                        "backward and collective time beyond rank 1's; faster data or compute here would gain nothing "
                        "until rank 1 is faster.");
  EXPECT_FALSE(b.processes[1].waits_for_rank);
  // Per-step lateness lands in steps.csv rows.
  const TrainingProcess& p1 = b.processes[1];
  EXPECT_EQ(p1.rank, 1);
  EXPECT_FALSE(p1.step_rows[0].lateness_ns);  // warm-up: not matched
  EXPECT_EQ(p1.step_rows[3].lateness_ns, 40 * kMs);

  std::string text = RenderText(report);
  EXPECT_NE(text.find("\n  Ranks\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 1 is the straggler"), std::string::npos) << text;
}

// A rank bound by the straggler gets no input advice, in the text or the JSON, even where its data
// wait alone would make it partly input-bound.
TEST(Bottleneck, ARankBoundByTheStragglerIsAdvisedNoInputCause) {
  Report report = TwoRanks(40 * kMs, 6, true, false, /*wait0=*/8 * kMs).Analyze();
  const TrainingProcess& p0 = report.bottleneck.processes.at(0);
  ASSERT_EQ(p0.rank, 0);
  EXPECT_EQ(p0.waits_for_rank, 1);
  EXPECT_GE(p0.part(Part::kDataWait).percent, kPartlyInputBoundPercent);
  EXPECT_EQ(p0.advice.cause, InputCause::kNone);
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_TRUE(j["bottleneck"]["processes"][0]["advice"]["cause"].is_null());
  EXPECT_TRUE(j["bottleneck"]["processes"][0]["advice"]["workers_needed"].is_null());
  for (const std::string& line : p0.text) EXPECT_EQ(line.find("DataLoader(num_workers"), std::string::npos) << line;
  // Without the straggler the same wait gets its cause.
  Report alone = TwoRanks(0, 6, true, false, /*wait0=*/8 * kMs).Analyze();
  EXPECT_FALSE(alone.bottleneck.processes.at(0).waits_for_rank);
  EXPECT_NE(alone.bottleneck.processes.at(0).advice.cause, InputCause::kNone);
}

TEST(Bottleneck, NoStragglerBelowTheThresholds) {
  Report report = TwoRanks(500'000).Analyze();  // 0.5 ms late: under 1 ms
  const RankSync& rs = *report.bottleneck.ranks;
  EXPECT_FALSE(rs.straggler);
  EXPECT_FALSE(report.bottleneck.processes[0].waits_for_rank);  // no straggler: nobody is bound by one
  EXPECT_EQ(rs.latest, 1);
  EXPECT_TRUE(Says(report.bottleneck.rank_text,
                   "No straggler: the latest rank, rank 1, reaches the gradient synchronisation "
                   "(start of backward) 500 µs after the first on average (median 500 µs), 1.5% of the mean "
                   "step 33.5 ms over 5 matched steps (step 0 left out) (a straggler is late by 10.0% of the mean "
                   "step and 1.00 ms or more at the median, and last in 50.0% or more of the matched steps)."));
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_TRUE(j["bottleneck"]["ranks"]["straggler"].is_null());
  EXPECT_EQ(j["bottleneck"]["ranks"]["latest_rank"], 1);
}

TEST(Bottleneck, RanksMeetInAStepThroughDdpOrACollective) {
  // Without DDP, collective or NCCL kernel in a step, rank 1's 40 ms of extra work makes it no
  // straggler and rank 0 no waiter: they train apart.
  TwoRanks apart(40 * kMs, 6, /*ddp=*/false);
  Report report = apart.Analyze();
  ASSERT_TRUE(report.bottleneck.ranks);
  EXPECT_FALSE(report.bottleneck.ranks->synchronised);
  EXPECT_FALSE(report.bottleneck.ranks->straggler);
  EXPECT_TRUE(Says(report.bottleneck.rank_text, "The ranks do not synchronise inside a step"));
  EXPECT_FALSE(Says(report.bottleneck.rank_text, "rank 0 waits"));
  // Never late for one another: no lateness, last-arrival or waiting columns, nor a lateness row
  // across ranks (JSON keeps the figures, with synchronised false).
  const std::string text = RenderText(report);
  const size_t table = text.find("\n  Ranks\n");
  ASSERT_NE(table, std::string::npos) << text;
  const std::string header = text.substr(table + 9, text.find('\n', table + 9) - table - 9);
  EXPECT_NE(header.find("Mean step"), std::string::npos) << header;
  EXPECT_NE(header.find("Data wait"), std::string::npos) << header;
  EXPECT_EQ(header.find("Late"), std::string::npos) << header;
  EXPECT_EQ(header.find("Last"), std::string::npos) << header;
  EXPECT_EQ(header.find("Waits for straggler"), std::string::npos) << header;
  ASSERT_TRUE(report.bottleneck.spread);
  for (const RankSpreadRow& row : report.bottleneck.spread->rows) EXPECT_NE(row.measure, "late_median_ns");
  EXPECT_TRUE(report.bottleneck.ranks->ranks[1].median_lateness_ns.has_value());
  // The shim's DDP variable on one rank, or a collective inside the steps, says they meet.
  TwoRanks env(40 * kMs, 6, /*ddp=*/false);
  env.r0.Env("TRAINPROF_DDP", "gloo");
  EXPECT_TRUE(env.Analyze().bottleneck.ranks->synchronised);
  TwoRanks collective(40 * kMs, 6, /*ddp=*/false, /*all_reduce=*/true);
  const Report met = collective.Analyze();
  EXPECT_TRUE(met.bottleneck.ranks->synchronised);
  const std::string met_text = RenderText(met);
  EXPECT_NE(met_text.find("Late (median)"), std::string::npos) << met_text;
  EXPECT_NE(met_text.find("Waits for straggler"), std::string::npos) << met_text;
}

TEST(Bottleneck, RanksOnSeveralHostsUseRealtime) {
  TwoRanks run(40 * kMs);
  run.r1.Host("node1");
  Report report = run.Analyze();
  ASSERT_TRUE(report.bottleneck.ranks);
  EXPECT_EQ(report.bottleneck.ranks->clock, "realtime");
  EXPECT_TRUE(report.bottleneck.ranks->straggler);  // same start pairs: the same answer
  EXPECT_TRUE(Says(report.bottleneck.rank_text, "CLOCK_REALTIME"));
}

TEST(Bottleneck, JsonRanks) {
  nlohmann::json j = nlohmann::json::parse(RenderJson(TwoRanks(40 * kMs).Analyze()));
  const auto& r = j["bottleneck"]["ranks"];
  EXPECT_EQ(r["clock"], "monotonic");
  EXPECT_EQ(r["matched_steps"], 5);
  EXPECT_EQ(r["straggler"]["rank"], 1);
  EXPECT_EQ(r["straggler"]["pid"], 402);
  EXPECT_DOUBLE_EQ(r["straggler"]["mean_lateness_ns"].get<double>(), 40.0 * kMs);
  EXPECT_DOUBLE_EQ(r["straggler"]["last_percent"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(r["ranks"][1]["last_share"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r["ranks"][0]["last_share"].get<double>(), 0.0);
  EXPECT_EQ(r["ranks"][1]["late_steps"], 5);
  ASSERT_EQ(r["ranks"].size(), 2u);
  EXPECT_EQ(r["ranks"][0]["rank"], 0);
  EXPECT_DOUBLE_EQ(r["ranks"][0]["wait_ns"].get<double>(), 40.0 * kMs);
  EXPECT_TRUE(r["ranks"][1]["wait_ns"].is_null());
  EXPECT_EQ(r["text"].size(), 1u);
  EXPECT_EQ(j["bottleneck"]["processes"][1]["verdict"], "compute_bound");
}

}  // namespace
}  // namespace trainprof::collector
