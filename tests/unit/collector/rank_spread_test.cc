// The spread across ranks (collector/analysis/rank_spread.h): quantiles, the ranks at the extremes,
// and outliers by the modified z-score with its floors.
#include "collector/analysis/rank_spread.h"

#include <gtest/gtest.h>

#include <vector>

namespace trainprof::collector {
namespace {

std::vector<RankValue> Values(const std::vector<double>& v) {
  std::vector<RankValue> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back({static_cast<int64_t>(i), v[i]});
  return out;
}

TEST(RankSpread, QuantilesAndTheRanksOfTheExtremes) {
  // Ranks 0..9 with values 10, 20, ..., 100 given in reverse order.
  std::vector<RankValue> v;
  for (int r = 9; r >= 0; --r) v.push_back({r, 10.0 * (r + 1)});
  const RankSpreadRow row = SpreadAcross("step_mean_ns", "Step time (mean)", false, v);
  EXPECT_EQ(row.ranks, 10u);
  EXPECT_DOUBLE_EQ(row.min, 10);
  EXPECT_EQ(row.min_rank, 0);
  EXPECT_DOUBLE_EQ(row.max, 100);
  EXPECT_EQ(row.max_rank, 9);
  EXPECT_DOUBLE_EQ(row.median, 55);  // between 50 and 60
  EXPECT_DOUBLE_EQ(row.p90, 91);     // 0.9 * 9 = 8.1: 90 + 0.1 * 10
  EXPECT_EQ(row.outlier_count, 0u);  // evenly spread: no outlier
}

TEST(RankSpread, TiesNameTheLowestRank) {
  const RankSpreadRow row = SpreadAcross("m", "M", false, {{5, 3.0}, {2, 3.0}, {7, 9.0}, {1, 9.0}});
  EXPECT_EQ(row.min_rank, 2);
  EXPECT_EQ(row.max_rank, 1);
}

TEST(RankSpread, OneSlowRankAmongEqualOnesIsAnOutlierThroughTheFloor) {
  // 63 ranks at exactly 100 ms, one at 106 ms: MAD is 0, its floor 1% of the median (1 ms), the
  // score 0.6745 * 6 = 4.05 > 3.5.
  std::vector<double> v(64, 100e6);
  v[17] = 106e6;
  const RankSpreadRow row = SpreadAcross("step_mean_ns", "Step", false, Values(v));
  EXPECT_EQ(row.outlier_count, 1u);
  ASSERT_EQ(row.outliers.size(), 1u);
  EXPECT_EQ(row.outliers[0], 17);
  // 5% off is inside the floor's 3.5 / 0.6745 = 5.19%: not an outlier.
  v[17] = 105e6;
  EXPECT_EQ(SpreadAcross("step_mean_ns", "Step", false, Values(v)).outlier_count, 0u);
}

TEST(RankSpread, NoisyRanksHaveNoOutliersButAFarOneIs) {
  // Values 97..103 (median 100, MAD 2): none is an outlier; 140 and 60 are (score 13.5).
  std::vector<double> v;
  for (int i = 0; i < 40; ++i) v.push_back(97.0 + (i % 7));
  EXPECT_EQ(SpreadAcross("m", "M", false, Values(v)).outlier_count, 0u);
  v[3] = 140;
  v[30] = 60;  // far below counts too
  const RankSpreadRow row = SpreadAcross("m", "M", false, Values(v));
  EXPECT_EQ(row.outlier_count, 2u);
  ASSERT_EQ(row.outliers.size(), 2u);
  EXPECT_EQ(row.outliers[0], 3);  // both 40 from the median: the lower rank first
  EXPECT_EQ(row.outliers[1], 30);
}

TEST(RankSpread, SharesUseAFloorOfHalfAPoint) {
  // Data wait shares all 0.0% but one at 2.0%: 0.6745 * 2 / 0.5 = 2.7, not an outlier; 3.0% is.
  std::vector<double> v(20, 0.0);
  v[4] = 2.0;
  EXPECT_EQ(SpreadAcross("data_wait_percent", "Data wait", true, Values(v)).outlier_count, 0u);
  v[4] = 3.0;
  const RankSpreadRow row = SpreadAcross("data_wait_percent", "Data wait", true, Values(v));
  ASSERT_EQ(row.outliers.size(), 1u);
  EXPECT_EQ(row.outliers[0], 4);
}

TEST(RankSpread, ListsAtMostFiveOutliersTheFarthestFirstAndCountsAll) {
  std::vector<double> v(100, 50.0);
  for (int i = 0; i < 8; ++i) v[static_cast<size_t>(10 + i)] = 100.0 + i;  // 8 slow ranks, 17 slowest
  const RankSpreadRow row = SpreadAcross("m", "M", false, Values(v));
  EXPECT_EQ(row.outlier_count, 8u);
  EXPECT_EQ(row.outliers, (std::vector<int64_t>{17, 16, 15, 14, 13}));
  RankSpread spread;
  spread.rows = {row, SpreadAcross("n", "N", false, {{3, 1.0}, {1, 1.0}, {99, 1.0}})};
  EXPECT_EQ(OutlierRanks(spread), (std::vector<int64_t>{13, 14, 15, 16, 17}));
}

TEST(RankSpread, AGivenFloorReplacesTheMediansOne) {
  // Lateness: a median near 0 makes 1% of it a floor of nothing; the caller's (1% of a 77 ms step)
  // keeps 99 µs of noise from being an outlier, and a rank 10 ms late is one.
  std::vector<double> late(64, 300e3);
  late[5] = 399e3;
  EXPECT_EQ(SpreadAcross("late_median_ns", "Late", false, Values(late)).outlier_count, 1u);  // floor 3 µs
  EXPECT_EQ(SpreadAcross("late_median_ns", "Late", false, Values(late), 770e3).outlier_count, 0u);
  late[9] = 10e6;
  const RankSpreadRow row = SpreadAcross("late_median_ns", "Late", false, Values(late), 770e3);
  EXPECT_EQ(row.outliers, std::vector<int64_t>{9});
}

}  // namespace
}  // namespace trainprof::collector
