// Interval unions over sorted runs (intervals.h), the runs sort (sort_runs.h) and quantiles by
// selection (sample_stats.h), each against the plain sort-based answer on random inputs shaped
// like GPU records: a few runs in order, or no order at all.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "collector/base/intervals.h"
#include "collector/base/sample_stats.h"
#include "collector/base/sort_runs.h"

namespace trainprof::collector {
namespace {

// Union by the definition: sort by begin, then merge overlapping or touching neighbours.
IntervalSet SortedUnion(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  IntervalSet out;
  for (const Interval& i : v) {
    if (i.end <= i.begin) continue;
    if (!out.empty() && i.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// `runs` runs in order of begin, concatenated (kernels, then copies, then memsets of a device);
// runs == 0: random order.
std::vector<Interval> Records(std::mt19937_64& rng, size_t n, size_t runs) {
  std::vector<Interval> v(n);
  for (Interval& i : v) {
    i.begin = rng() % 1'000'000;
    i.end = i.begin + rng() % 300;  // some empty
  }
  if (runs == 0) return v;
  for (size_t r = 0; r < runs; ++r) {
    auto b = v.begin() + static_cast<std::ptrdiff_t>(n * r / runs), e = v.begin() + static_cast<std::ptrdiff_t>(n * (r + 1) / runs);
    std::sort(b, e, [](const Interval& x, const Interval& y) { return x.begin < y.begin; });
  }
  return v;
}

bool Same(const IntervalSet& a, const IntervalSet& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const Interval& x, const Interval& y) {
           return x.begin == y.begin && x.end == y.end;
         });
}

TEST(SortedRuns, UnionOfRunsEqualsTheSortedUnion) {
  std::mt19937_64 rng(7);
  for (size_t runs : {0, 1, 2, 3, 9, 63, 64, 65, 200}) {
    for (size_t n : {0, 1, 2, 5, 1000, 20000}) {
      std::vector<Interval> v = Records(rng, n, runs);
      EXPECT_TRUE(Same(Union(v), SortedUnion(v))) << "runs " << runs << " n " << n;
    }
  }
}

TEST(SortedRuns, SortRunsIsAStableSort) {
  std::mt19937_64 rng(11);
  struct Item {
    uint64_t key, order;
  };
  auto less = [](const Item& a, const Item& b) { return a.key < b.key; };
  for (size_t runs : {0, 1, 2, 5, 64, 65, 500}) {
    for (size_t n : {0, 1, 3, 4000}) {
      std::vector<Item> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = {rng() % 50, i};  // many equal keys: stability shows
      if (runs > 0) {
        for (size_t r = 0; r < runs; ++r) {
          std::stable_sort(v.begin() + static_cast<std::ptrdiff_t>(n * r / runs),
                           v.begin() + static_cast<std::ptrdiff_t>(n * (r + 1) / runs), less);
        }
      }
      std::vector<Item> want = v;
      std::stable_sort(want.begin(), want.end(), less);
      SortRuns(v, less);
      ASSERT_EQ(v.size(), want.size());
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(v[i].key, want[i].key) << "runs " << runs << " n " << n << " at " << i;
        ASSERT_EQ(v[i].order, want[i].order) << "runs " << runs << " n " << n << " at " << i;
      }
    }
  }
}

// SummarizeSample selects instead of sorting, and Quantile is Percentile without the sort: the
// same doubles, bit for bit, as from the sorted values.
TEST(SortedRuns, QuantilesBySelectionEqualTheSortedOnes) {
  std::mt19937_64 rng(13);
  for (size_t n : {1, 2, 3, 4, 5, 10, 11, 1000, 1001, 65536}) {
    std::vector<uint64_t> v(n);
    for (uint64_t& x : v) x = rng() % (n < 20 ? 10 : 100'000);  // ties
    std::vector<uint64_t> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    const double median = n % 2 == 1 ? static_cast<double>(sorted[n / 2])
                                     : (static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2.0;
    for (double q : {0.0, 0.1, 0.5, 0.9, 0.95, 0.999, 1.0}) {
      std::vector<uint64_t> w = v;
      EXPECT_EQ(Quantile(&w, q), Percentile(sorted, q)) << "n " << n << " q " << q;
    }
    std::vector<uint64_t> w = v;
    const SampleStats s = SummarizeSample(&w);
    EXPECT_EQ(s.count, n);
    EXPECT_EQ(s.min, sorted.front());
    EXPECT_EQ(s.max, sorted.back());
    EXPECT_EQ(s.median, median) << n;
    EXPECT_EQ(s.p90, Percentile(sorted, 0.9)) << n;
  }
  std::vector<uint64_t> none;
  EXPECT_EQ(Quantile(&none, 0.5), 0.0);
  EXPECT_EQ(SummarizeSample(&none).count, 0u);
}

// The mean is taken from the exact sum, so the order of the values never changes it, even where
// their sum passes 2^64 (damaged traces: latencies near 2^62 ns); the windowed analyses gather
// samples window by window, in another order than one pass does.
TEST(SampleStats, TheMeanDoesNotDependOnTheOrder) {
  // Three values of 2^63 and a million of 1: added after the large ones, a 1 is below the
  // rounding step of a 64-bit mantissa, added first they all count.
  std::vector<uint64_t> v(1'000'000, 1);
  v.insert(v.end(), 3, uint64_t{1} << 63);
  std::vector<uint64_t> small_first = v;
  std::vector<uint64_t> large_first(v.rbegin(), v.rend());
  const double exact = (3.0 * 9223372036854775808.0 + 1e6) / 1'000'003.0;
  const double a = SummarizeSample(&small_first).mean, b = SummarizeSample(&large_first).mean;
  EXPECT_EQ(a, b);
  EXPECT_NEAR(a, exact, exact * 1e-15);
  std::mt19937_64 rng(3);
  std::shuffle(v.begin(), v.end(), rng);
  EXPECT_EQ(SummarizeSample(&v).mean, a);
  // Small values: the mean as before (the exact sum divided by the count).
  std::vector<uint64_t> small = {1, 2, 4};
  EXPECT_DOUBLE_EQ(SummarizeSample(&small).mean, 7.0 / 3.0);
}

}  // namespace
}  // namespace trainprof::collector
