#include "collector/base/sample_stats.h"

#include <algorithm>
#include <cmath>

namespace trainprof::collector {

SampleStats SummarizeSample(std::vector<uint64_t>* values) {
  SampleStats s;
  std::vector<uint64_t>& d = *values;
  s.count = d.size();
  if (d.empty()) return s;
  std::sort(d.begin(), d.end());
  long double sum = 0;
  for (uint64_t v : d) {
    sum += static_cast<long double>(v);
    s.total += v;
  }
  s.min = d.front();
  s.max = d.back();
  const long double mean = sum / static_cast<long double>(d.size());
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
  s.median = n % 2 == 1 ? static_cast<double>(d[n / 2])
                        : (static_cast<double>(d[n / 2 - 1]) + static_cast<double>(d[n / 2])) / 2.0;
  s.p90 = Percentile(d, 0.9);
  return s;
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
