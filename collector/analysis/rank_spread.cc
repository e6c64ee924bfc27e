// rank_spread.h: quantiles and the modified z-score over per-rank values.
#include "collector/analysis/rank_spread.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

namespace trainprof::collector {
namespace {

// The q-quantile of sorted values by linear interpolation between the closest ranks.
double QuantileOf(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

RankSpreadRow SpreadAcross(std::string measure, std::string label, bool percent, std::vector<RankValue> values,
                           std::optional<double> mad_floor) {
  RankSpreadRow row;
  row.measure = std::move(measure);
  row.label = std::move(label);
  row.percent = percent;
  row.ranks = values.size();
  if (values.empty()) return row;
  std::sort(values.begin(), values.end(), [](const RankValue& a, const RankValue& b) {
    return a.value != b.value ? a.value < b.value : a.rank < b.rank;
  });
  std::vector<double> sorted;
  sorted.reserve(values.size());
  for (const RankValue& v : values) sorted.push_back(v.value);
  row.min = sorted.front();
  row.min_rank = values.front().rank;
  row.max = sorted.back();
  row.max_rank = values.back().rank;
  for (const RankValue& v : values) {  // the lowest rank among those with the max
    if (v.value == row.max) {
      row.max_rank = v.rank;
      break;
    }
  }
  row.median = QuantileOf(sorted, 0.5);
  row.p90 = QuantileOf(sorted, 0.9);

  std::vector<double> deviations;
  deviations.reserve(sorted.size());
  for (double v : sorted) deviations.push_back(std::fabs(v - row.median));
  std::sort(deviations.begin(), deviations.end());
  const double floor = mad_floor ? *mad_floor : percent ? 0.5 : 0.01 * std::fabs(row.median);
  const double mad = std::max(QuantileOf(deviations, 0.5), floor);
  std::vector<std::pair<double, int64_t>> far;  // (|score|, rank)
  if (mad > 0) {
    for (const RankValue& v : values) {
      const double score = 0.6745 * (v.value - row.median) / mad;
      if (std::fabs(score) > kOutlierScore) far.push_back({std::fabs(score), v.rank});
    }
  }
  std::sort(far.begin(), far.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  row.outlier_count = far.size();
  for (size_t i = 0; i < far.size() && i < kOutliersListed; ++i) row.outliers.push_back(far[i].second);
  return row;
}

std::vector<int64_t> OutlierRanks(const RankSpread& spread) {
  std::set<int64_t> ranks;
  for (const RankSpreadRow& r : spread.rows) ranks.insert(r.outliers.begin(), r.outliers.end());
  return {ranks.begin(), ranks.end()};
}

}  // namespace trainprof::collector
