// Summary statistics of a sample of durations (ns) or sizes (bytes): the one statistics type of
// every table of the report (NVTX ranges, CUDA API, kernels, memory operations, training steps):
// count, total, mean, sample standard deviation, min, median, p90, max, as `nsys stats` prints
// them, and whether median and p90 are exact.
//
// SummarizeSample selects from the sample (exact); DurationSummary::Stats (duration_summary.h) gives the
// same from a bounded summary, estimated past DurationSummary::kExactSamples values.
#pragma once

#include <cstdint>
#include <vector>

namespace trainprof::collector {

struct SampleStats {
  uint64_t count = 0;
  uint64_t total = 0;  ///< sum (wraps only past 2^64: 584 years of ns)
  uint64_t min = 0;    ///< 0 for an empty sample
  uint64_t max = 0;
  double mean = 0;
  double std = 0;     ///< sample standard deviation (n−1); 0 for fewer than two values
  double median = 0;  ///< the middle value, or the mean of the two middle values for an even count
  double p90 = 0;     ///< the 0.9-quantile (Percentile)
  bool exact = true;  ///< false: median and p90 estimated (DurationSummary::kRelativeError)
};

/// Statistics of `values` (exact), which are reordered in place: median and p90 by selection
/// (std::nth_element, O(n)), not a sort (a CUDA report's launch latencies are one value a kernel).
SampleStats SummarizeSample(std::vector<uint64_t>* values);

/// The q-quantile (0 ≤ q ≤ 1) of sorted values, by linear interpolation between the closest ranks
/// (numpy's default); 0 for an empty sample.
double Percentile(const std::vector<uint64_t>& sorted, double q);

/// The same q-quantile of values in any order, which are reordered in place (selection, O(n)):
/// equal to Percentile of them sorted.
double Quantile(std::vector<uint64_t>* values, double q);

/// part / whole in percent; 0 when whole is 0. The one percentage of the report's tables.
inline double Percent(double part, double whole) { return whole > 0 ? part * 100.0 / whole : 0.0; }

/// Sets each row's `percent` to its share of the table's time: row.time.total / Σ row.time.total
/// (nsys's "Time (%)"). Row: any type with `SampleStats time` and `double percent`.
template <typename Row>
void SetTimeShares(std::vector<Row>* rows) {
  uint64_t all = 0;
  for (const Row& row : *rows) all += row.time.total;
  for (Row& row : *rows) row.percent = Percent(static_cast<double>(row.time.total), static_cast<double>(all));
}

}  // namespace trainprof::collector
