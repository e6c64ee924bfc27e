#include "collector/base/sample_stats.h"

#include <algorithm>
#include <cmath>

namespace trainprof::collector {

SampleStats SummarizeSample(std::vector<uint64_t>* values) {
  SampleStats s;
  std::vector<uint64_t>& d = *values;
  s.count = d.size();
  if (d.empty()) return s;
  // The sum exactly (128 bits: values up to 2^64 each), so that the mean does not depend on the
  // order of the values (the windowed analyses gather them window by window, model/cuda_window.h).
  unsigned __int128 sum = 0;
  s.min = d.front();
  s.max = d.front();
  for (uint64_t v : d) {
    sum += v;
    s.total += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  const long double mean = static_cast<long double>(sum) / static_cast<long double>(d.size());
  s.mean = static_cast<double>(mean);
  if (d.size() > 1) {
    long double sq = 0;
    for (uint64_t v : d) {
      const long double diff = static_cast<long double>(v) - mean;
      sq += diff * diff;
    }
    s.std = static_cast<double>(std::sqrt(sq / static_cast<long double>(d.size() - 1)));
  }
  const size_t n = d.size();
  const auto mid = d.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(d.begin(), mid, d.end());
  // Even count: the other middle value is the largest of the lower half.
  s.median = n % 2 == 1 ? static_cast<double>(*mid)
                        : (static_cast<double>(*std::max_element(d.begin(), mid)) + static_cast<double>(*mid)) / 2.0;
  s.p90 = Quantile(&d, 0.9);
  return s;
}

double Quantile(std::vector<uint64_t>* values, double q) {
  std::vector<uint64_t>& d = *values;
  if (d.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // The ranks and the interpolation exactly as Percentile's.
  const double pos = q * static_cast<double>(d.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const double frac = pos - static_cast<double>(lo);
  const auto at = d.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(d.begin(), at, d.end());
  if (lo + 1 >= d.size()) return static_cast<double>(*at);
  const double a = static_cast<double>(*at), b = static_cast<double>(*std::min_element(at + 1, d.end()));
  return a + frac * (b - a);
}

double Percentile(const std::vector<uint64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const double frac = pos - static_cast<double>(lo);
  if (lo + 1 >= sorted.size()) return static_cast<double>(sorted[lo]);
  const double a = static_cast<double>(sorted[lo]), b = static_cast<double>(sorted[lo + 1]);
  return a + frac * (b - a);
}

}  // namespace trainprof::collector
