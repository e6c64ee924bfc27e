// The straggler rule (collector/analysis/rank_sync.h) and isolated slow steps
// (collector/analysis/slow_steps.h) on synthetic inputs with exact timings (docs/analysis.md,
// "Ranks and the straggler", "Slow steps").
#include "collector/analysis/rank_sync.h"

#include <gtest/gtest.h>

#include "collector/analysis/bottleneck.h"
#include "collector/analysis/slow_steps.h"
#include "collector/base/clock_offset.h"

namespace trainprof::collector {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kUs = 1'000;

// Two symmetric ranks of `steps` 12 ms steps that reach backward together (rank 0 `jitter`
// later), and `late[k]` extra lateness of rank `who` in step k.
std::vector<RankInput> TwoRanks(int steps, uint64_t jitter, int who, const std::vector<std::pair<int, uint64_t>>& late) {
  std::vector<RankInput> in(2);
  for (int r = 0; r < 2; ++r) {
    in[r].rank = r;
    in[r].pid = 100 + r;
    in[r].host = "node0";
    in[r].mean_step_ns = 12.0 * kMs;
  }
  uint64_t t = 1'000 * kMs;
  for (int k = 0; k < steps; ++k) {
    uint64_t extra = 0;
    for (const auto& [step, ns] : late) extra += step == k ? ns : 0;
    for (int r = 0; r < 2; ++r) {
      uint64_t at = t + 4 * kMs + (r == 0 ? jitter : 0) + (r == who ? extra : 0);
      in[r].steps.push_back({Arrival::kBackward, at, 6 * kMs});
    }
    t += 12 * kMs + extra;
  }
  return in;
}

TEST(RankSync, OneOutlierStepIsNoStraggler) {
  // 20 steps; rank 0 is 300 ms late once (a checkpoint save before step 10's backward), 12 µs
  // late otherwise: the mean lateness of rank 0 is 15.8 ms (above 10% of the step and 1 ms), the
  // median 12 µs, and it is last in every step (the case of issue 13, class 3).
  std::vector<RankInput> in = TwoRanks(20, 12 * kUs, 0, {{10, 300 * kMs}});
  in[0].mean_step_ns = in[1].mean_step_ns = (19 * 12.0 + 312) * kMs / 19;  // step 0 left out
  RankSync rs = AnalyzeRanks(in, 5, 10, 1 * kMs);
  EXPECT_EQ(rs.matched_steps, 19u);
  EXPECT_FALSE(rs.straggler);
  ASSERT_EQ(rs.latest, 0);
  const RankRow& r0 = rs.ranks[0];
  EXPECT_GT(*r0.mean_lateness_ns, 15.0 * kMs);
  EXPECT_DOUBLE_EQ(*r0.median_lateness_ns, 12.0 * kUs);
  EXPECT_EQ(r0.late_steps, 1u);
  ASSERT_EQ(r0.late_step_list.size(), 1u);
  EXPECT_EQ(r0.late_step_list[0].train_step, 10u);
  EXPECT_EQ(r0.late_step_list[0].lateness_ns, 300 * kMs + 12 * kUs);
  EXPECT_DOUBLE_EQ(*r0.last_share, 1.0);
  const std::vector<std::string> text = DescribeRanks(rs, {}, "");
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0].rfind("No straggler: rank 0 was late in 1 of 19 matched steps (step 10, 300 ms; late: ", 0), 0u)
      << text[0];
  EXPECT_NE(text[0].find("not consistently: its median lateness is 12.0 µs, its mean"), std::string::npos) << text[0];
}

TEST(RankSync, ConsistentLatenessIsAStraggler) {
  // Rank 1 reaches backward 20 ms after rank 0 in every step; one step of rank 0 is 300 ms late
  // (which makes rank 0 the latest on average): rank 1 is still the straggler.
  std::vector<std::pair<int, uint64_t>> late;
  for (int k = 0; k < 20; ++k) late.push_back({k, 20 * kMs});
  std::vector<RankInput> in = TwoRanks(20, 0, 1, late);
  for (RankStep& s : in[0].steps) s.sync_ns += 20 * kMs;  // rank 0 waits in its backward
  in[0].steps[10].arrival_ns += 400 * kMs;                // once, rank 0 much later
  in[0].mean_step_ns = in[1].mean_step_ns = 32.0 * kMs;
  RankSync rs = AnalyzeRanks(in, 5, 10, 1 * kMs);
  EXPECT_TRUE(rs.straggler);
  ASSERT_EQ(rs.latest, 1);
  const RankRow& r1 = rs.ranks[1];
  EXPECT_DOUBLE_EQ(*r1.median_lateness_ns, 20.0 * kMs);
  EXPECT_EQ(r1.last_steps, 18u);
  EXPECT_NEAR(*r1.last_share, 18.0 / 19, 1e-12);
  EXPECT_EQ(r1.late_steps, 18u);
  EXPECT_LT(*r1.mean_lateness_ns, *rs.ranks[0].mean_lateness_ns);  // the mean alone would name rank 0
  EXPECT_EQ(DescribeRanks(rs, {}, "")[0].rfind("rank 1 is the straggler: it reaches the gradient synchronisation (start "
                                          "of backward) 20.0 ms (median; mean ",
                                          0),
            0u);
}

TEST(RankSync, RanksThatDoNotSynchroniseHaveNoStragglerAndNoWait) {
  // Two replicas trained apart (no DDP, collective or NCCL kernel in a step): rank 1's steps take
  // 30% longer, so its k-th backward comes later every step; nobody waits for it.
  std::vector<std::pair<int, uint64_t>> late;
  for (int k = 0; k < 20; ++k) late.push_back({k, 3'600 * kUs * static_cast<uint64_t>(k)});
  std::vector<RankInput> in = TwoRanks(20, 0, 1, late);
  in[0].mean_step_ns = 12.0 * kMs;
  in[1].mean_step_ns = 15.6 * kMs;
  for (RankInput& r : in) r.synchronises = false;
  RankSync rs = AnalyzeRanks(in, 5, 10, 1 * kMs);
  EXPECT_FALSE(rs.synchronised);
  EXPECT_FALSE(rs.drift);
  EXPECT_FALSE(rs.straggler);
  EXPECT_FALSE(rs.ranks[0].wait_ns.has_value());
  const std::vector<std::string> text = DescribeRanks(rs, {}, "");
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0],
            "The ranks do not synchronise inside a step (no DistributedDataParallel, collective or NCCL kernel in "
            "their training steps): each trains on its own and none waits for another, so no straggler is named; the "
            "slowest, rank 1, takes 15.6 ms a step, 30.0% longer than the fastest, rank 0 (12.0 ms).");
  // Across hosts whose clocks are too uncertain, the ranks' independence is still the reason said.
  RankSync far = rs;
  far.clocks_too_uncertain = true;
  EXPECT_EQ(DescribeRanks(far, {}, "")[0].rfind("The ranks do not synchronise inside a step", 0), 0u);
  // One rank that meets the others (DDP) is enough: the same lateness is then compared.
  in[0].synchronises = true;
  EXPECT_TRUE(AnalyzeRanks(in, 5, 10, 1 * kMs).synchronised);
}

TEST(RankSync, LatenessBeyondAStepIsDriftNotAStraggler) {
  // The ranks synchronise (DDP), yet rank 1's k-th step comes 5 ms later each step, 95 ms at the
  // end against 12 ms steps: the steps matched by index do not line up.
  std::vector<RankInput> in = TwoRanks(20, 0, 1, {});
  for (size_t k = 0; k < in[1].steps.size(); ++k) in[1].steps[k].arrival_ns += 5 * kMs * k;
  RankSync rs = AnalyzeRanks(in, 5, 10, 1 * kMs);
  EXPECT_TRUE(rs.synchronised);
  EXPECT_TRUE(rs.drift);
  EXPECT_FALSE(rs.straggler);
  // Matched steps 1..19: the first third (1..6) late by 17.5 ms on average, the last (14..19) 82.5 ms.
  EXPECT_DOUBLE_EQ(rs.lateness_head_ns, 17.5 * kMs);
  EXPECT_DOUBLE_EQ(rs.lateness_tail_ns, 82.5 * kMs);
  const std::vector<std::string> text = DescribeRanks(rs, {}, "");
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0].rfind("No straggler: the ranks synchronise, yet rank 1's steps drift from the others': it reaches "
                          "the gradient synchronisation (start of backward) 50.0 ms after the first at the median, "
                          "against a mean step of 12.0 ms, 17.5 ms in the first third of the 19 matched steps and "
                          "82.5 ms in the last",
                          0),
            0u)
      << text[0];
  // Below a step at the median, but growing by more than a step: drift too.
  std::vector<RankInput> creeping = TwoRanks(20, 0, 1, {});
  for (size_t k = 0; k < creeping[1].steps.size(); ++k) creeping[1].steps[k].arrival_ns += kMs * k;
  const RankSync cr = AnalyzeRanks(creeping, 5, 10, 1 * kMs);
  EXPECT_TRUE(cr.drift);
  EXPECT_FALSE(cr.straggler);
  EXPECT_EQ(DescribeRanks(cr, {}, "")[0],
            "No straggler: the ranks synchronise, yet rank 1's steps drift from the others': its lateness at the "
            "gradient synchronisation (start of backward) grows from 3.50 ms in the first third of the 19 matched "
            "steps to 16.5 ms in the last, by more than a mean step (12.0 ms): ranks that meet in every step are "
            "never a step apart, so the k-th steps do not line up (a restarted rank, steps skipped on one rank) and "
            "the lateness is no waiting.");
  // Lateness within a step that does not grow is compared as before.
  std::vector<RankInput> steady = TwoRanks(20, 0, 1, {});
  for (RankStep& s : steady[1].steps) s.arrival_ns += 5 * kMs;
  EXPECT_FALSE(AnalyzeRanks(steady, 5, 10, 1 * kMs).drift);
}

TEST(RankSync, SeveralRanksLateTogetherAreNoSingleStraggler) {
  // Four ranks; ranks 1, 2 and 3 are all 20 ms late, one of them 1 ms later in turn: each is late
  // at the median but last in about a third of the steps only (the rule: half of them or more).
  std::vector<RankInput> in(4);
  for (int r = 0; r < 4; ++r) {
    in[r].rank = r;
    in[r].pid = 100 + r;
    in[r].mean_step_ns = 40.0 * kMs;
  }
  for (int k = 0; k < 20; ++k) {
    const uint64_t t = 1'000 * kMs + k * 40 * kMs;
    in[0].steps.push_back({Arrival::kBackward, t, 0});
    for (int r = 1; r < 4; ++r) {
      in[r].steps.push_back({Arrival::kBackward, t + 20 * kMs + (k % 3 == r - 1 ? kMs : 0), 0});
    }
  }
  RankSync rs = AnalyzeRanks(in, 5, 10, 1 * kMs);
  EXPECT_FALSE(rs.straggler);
  for (int r = 1; r < 4; ++r) {
    EXPECT_DOUBLE_EQ(*rs.ranks[r].median_lateness_ns, 20.0 * kMs);
    EXPECT_LT(*rs.ranks[r].last_share, kStragglerLastShare);
  }
  EXPECT_NEAR(*rs.ranks[1].last_share, 6.0 / 19, 1e-12);  // k = 3, 6, ..., 18
  const std::string text = DescribeRanks(rs, {}, "")[0];
  EXPECT_EQ(text,
            "No single straggler: ranks 1, 2 and 3 are late by the threshold (4.00 ms) or more at the median (rank 1 "
            "20.0 ms, rank 2 20.0 ms, rank 3 20.0 ms), but none arrives last in 50.0% or more of the 19 matched steps "
            "(most often last: rank 2, in 36.8%): they are late together (step 0 left out).");
}

// Ranks on two hosts are compared on CLOCK_REALTIME: each one's monotonic arrivals are moved by
// its header's realtime − monotonic offset. A damaged header may give any offset; the arithmetic
// saturates (found by the report fuzzer: a signed overflow in AnalyzeRanks) and the ranks still
// match. The sane part of the same input is exact.
TEST(RankSync, ClockOffsetsOfAnyValueSaturate) {
  EXPECT_EQ(RealtimeOffset(1'700'000'000 * 1'000'000'000ull, 5'000), 1'700'000'000 * 1'000'000'000ll - 5'000);
  EXPECT_EQ(RealtimeOffset(5'000, 7'000), -2'000);
  EXPECT_EQ(RealtimeOffset(UINT64_MAX, 0), INT64_MAX);
  EXPECT_EQ(RealtimeOffset(0, UINT64_MAX), INT64_MIN);
  EXPECT_EQ(ShiftedTime(1'000, -400), 600);
  EXPECT_EQ(ShiftedTime(7'596'833'091'381'242'912ull, 1'795'946'369'109'762'837ll), INT64_MAX);
  EXPECT_EQ(ShiftedTime(UINT64_MAX, INT64_MIN), -1);
  EXPECT_EQ(ShiftedTime(0, INT64_MIN), INT64_MIN);

  std::vector<RankInput> in = TwoRanks(8, 0, 1, {{3, 5 * kMs}});
  in[1].host = "node1";  // two hosts: realtime comparison
  in[0].realtime_offset_ns = 1'000 * kMs;
  in[1].realtime_offset_ns = 1'000 * kMs;
  const RankSync sane = AnalyzeRanks(in, 5, 10.0, 2 * kMs);
  ASSERT_EQ(sane.ranks.size(), 2u);
  EXPECT_EQ(sane.matched_steps, 7u);  // step 0 left out as warm-up
  EXPECT_EQ(sane.ranks[1].lateness_ns[3], 5 * kMs);

  in[0].realtime_offset_ns = INT64_MAX;  // a damaged header
  in[1].realtime_offset_ns = INT64_MIN;
  in[0].steps[2].arrival_ns = UINT64_MAX;
  const RankSync damaged = AnalyzeRanks(in, 5, 10.0, 2 * kMs);
  ASSERT_EQ(damaged.ranks.size(), 2u);
  EXPECT_EQ(damaged.matched_steps, 7u);
  // rank 0 saturated at INT64_MAX, rank 1 at INT64_MIN + its arrival: the whole uint64_t range less that
  EXPECT_EQ(damaged.ranks[0].lateness_ns[3], UINT64_MAX - in[1].steps[3].arrival_ns);
}

TEST(SlowSteps, FarAboveTheMedianAndTheFloor) {
  std::vector<StepDuration> steps;
  for (uint64_t k = 1; k < 20; ++k) steps.push_back({k, k, 12 * kMs});
  steps[9].duration_ns = 312 * kMs;  // train step 10
  steps[3].duration_ns = 40 * kMs;   // 3.33× and 28 ms above: slow
  steps[5].duration_ns = 30 * kMs;   // 2.5×: not slow
  SlowSteps s = FindSlowSteps(steps, 12.0 * kMs);
  EXPECT_EQ(s.count, 2u);
  ASSERT_EQ(s.listed.size(), 2u);
  EXPECT_EQ(s.listed[0].train_step, 10u);
  EXPECT_EQ(s.listed[0].duration_ns, 312 * kMs);
  EXPECT_DOUBLE_EQ(s.listed[0].times_median, 26.0);
  EXPECT_EQ(s.listed[1].train_step, 4u);
  // Short steps: 3× the median but under 10 ms above it is noise.
  std::vector<StepDuration> small = {{0, 0, kMs}, {1, 1, kMs}, {2, 2, 5 * kMs}};
  EXPECT_EQ(FindSlowSteps(small, 1.0 * kMs).count, 0u);
  // Bounded: the longest kSlowStepsListed, all counted (5 of 60 steps: isolated).
  std::vector<StepDuration> many;
  for (uint64_t k = 1; k <= 60; ++k) many.push_back({k, k, k % 12 == 0 ? 100 * kMs + k : 12 * kMs});
  s = FindSlowSteps(many, 12.0 * kMs);
  EXPECT_EQ(s.count, 5u);
  EXPECT_EQ(s.over_threshold, 5u);
  ASSERT_EQ(s.listed.size(), kSlowStepsListed);
  EXPECT_EQ(s.listed[0].train_step, 60u);
  // Not isolated: 9 of 19 steps far above the median is a spread step time, not outliers.
  for (StepDuration& d : steps) d.duration_ns = d.train_step % 2 ? 12 * kMs : 100 * kMs + d.train_step;
  s = FindSlowSteps(steps, 12.0 * kMs);
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.over_threshold, 9u);
  EXPECT_TRUE(s.listed.empty());
}

}  // namespace
}  // namespace trainprof::collector
