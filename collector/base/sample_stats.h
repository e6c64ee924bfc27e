// Summary statistics of a sample of durations (ns) or sizes (bytes): the columns every statistics
// table of the report prints, as `nsys stats` prints them (count, total, mean, sample standard
// deviation, min, median, max), and percentiles.
//
// Exact: the sample is sorted (another change may replace medians and percentiles with a sketch).
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
};

/// Statistics of `values`, which are sorted in place.
SampleStats SummarizeSample(std::vector<uint64_t>* values);

/// The q-quantile (0 ≤ q ≤ 1) of sorted values, by linear interpolation between the closest ranks
/// (numpy's default); 0 for an empty sample.
double Percentile(const std::vector<uint64_t>& sorted, double q);

}  // namespace trainprof::collector
