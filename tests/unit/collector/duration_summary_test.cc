// DurationSummary: exact up to kExactSamples values, then a log-linear histogram whose median is
// within kRelativeError of the exact one; mergeable.
#include "collector/base/duration_summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "collector/base/sample_stats.h"

namespace trainprof::collector {
namespace {

// Durations spread over four decades, as kernel and range durations are.
std::vector<uint64_t> Spread(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(std::log(50'000.0), 1.5);
  std::vector<uint64_t> v(n);
  for (uint64_t& x : v) x = static_cast<uint64_t>(dist(rng));
  return v;
}

// What a DurationSummary keeps exact at any size, against SummarizeSample of the same values: count,
// total, min, max, and the mean (from the exact total, whatever the order of the values).
void ExpectExactMoments(const DurationSummary& d, const SampleStats& s) {
  EXPECT_EQ(d.count(), s.count);
  EXPECT_EQ(d.total(), s.total);
  EXPECT_EQ(d.min(), s.min);
  EXPECT_EQ(d.max(), s.max);
  EXPECT_DOUBLE_EQ(d.mean(), s.mean);
}

TEST(DurationSummary, ExactWhileSmall) {
  std::vector<uint64_t> v = Spread(DurationSummary::kExactSamples, 1);
  DurationSummary d;
  for (uint64_t x : v) d.Add(x);
  ASSERT_TRUE(d.exact());
  SampleStats s = SummarizeSample(&v);
  ExpectExactMoments(d, s);
  EXPECT_DOUBLE_EQ(d.std_dev(), s.std);
  EXPECT_DOUBLE_EQ(d.median(), s.median);
}

TEST(DurationSummary, BucketsCoverEveryValueWithinTheStatedWidth) {
  std::vector<uint64_t> probes = {0, 1, 127, 128, 129, 255, 256, 1000, 65'535, 65'536, 1'000'000'007,
                                  uint64_t{1} << 40, (uint64_t{1} << 63) + 12345, UINT64_MAX};
  for (uint64_t v : Spread(10'000, 2)) probes.push_back(v);
  for (uint64_t v : probes) {
    const uint32_t b = DurationBucket(v);
    const uint64_t lo = DurationBucketLow(b), w = DurationBucketWidth(b);
    EXPECT_LE(lo, v) << v;
    EXPECT_LE(v - lo, w - 1) << v;  // v < lo + w without overflow
    if (v >= 128) {
      EXPECT_LE(static_cast<double>(w) / static_cast<double>(lo), 1.0 / 128) << v;
    }
    if (v > 0) {
      EXPECT_LE(DurationBucket(v - 1), b) << v;  // monotonic
    }
  }
  EXPECT_EQ(DurationBucket(127), 127u);
  EXPECT_EQ(DurationBucket(128), 128u);
  EXPECT_EQ(DurationBucket(256), 256u);
  EXPECT_EQ(DurationBucketLow(DurationBucket(300)), 300u);  // width 2 from 256: 300 starts a bucket
}

TEST(DurationSummary, LargeSampleMedianWithinTheStatedError) {
  for (size_t n : {1025u, 2'000u, 99'999u, 100'000u}) {
    std::vector<uint64_t> v = Spread(n, static_cast<uint32_t>(n));
    DurationSummary d;
    for (uint64_t x : v) d.Add(x);
    ASSERT_FALSE(d.exact());
    SampleStats s = SummarizeSample(&v);
    SCOPED_TRACE(n);
    ExpectExactMoments(d, s);
    EXPECT_NEAR(d.std_dev(), s.std, s.std * 1e-9);
    // Each middle value is estimated within kRelativeError, hence their mean too.
    EXPECT_NEAR(d.median(), s.median, s.median * DurationSummary::kRelativeError) << n;
    EXPECT_NE(d.median(), s.median) << "an estimate equal to the exact median: was the histogram used?";
  }
}

TEST(DurationSummary, QuantilesExactWhileSmallThenWithinTheStatedError) {
  // The launch tables' p95 (gpu_devices.h, kernel_launches.h): Quantile's interpolation, exact up
  // to kExactSamples values, between two estimated ranks past that.
  for (size_t n : {1u, 2u, 3u, 4u, 17u, 1024u, 1025u, 50'000u}) {
    std::vector<uint64_t> v = Spread(n, static_cast<uint32_t>(n) + 7);
    DurationSummary d;
    for (uint64_t x : v) d.Add(x);
    for (double q : {0.0, 0.5, 0.9, 0.95, 1.0}) {
      std::vector<uint64_t> copy = v;
      const double exact = Quantile(&copy, q);
      if (d.exact()) {
        EXPECT_DOUBLE_EQ(d.Quantile(q), exact) << n << " q " << q;
      } else {
        EXPECT_NEAR(d.Quantile(q), exact, exact * DurationSummary::kRelativeError) << n << " q " << q;
      }
    }
    EXPECT_EQ(d.Quantile(0.9), d.Stats().p90) << n;
  }
  EXPECT_EQ(DurationSummary().Quantile(0.95), 0.0);
}

TEST(DurationSummary, WhatTheReportShowsIsTheSameWhateverTheOrderOfTheValues) {
  // A windowed report adds a row's values window by window, the whole one image by image: count,
  // total, min, max, mean, median and the quantiles must not depend on that order.
  std::vector<uint64_t> v = Spread(5'000, 11);
  std::vector<std::vector<uint64_t>> orders = {v, v, v};
  std::sort(orders[1].begin(), orders[1].end());
  std::shuffle(orders[2].begin(), orders[2].end(), std::mt19937_64(3));
  DurationSummary first;
  for (uint64_t x : orders[0]) first.Add(x);
  for (size_t o = 1; o < orders.size(); ++o) {
    DurationSummary d;
    for (uint64_t x : orders[o]) d.Add(x);
    const SampleStats a = first.Stats(), b = d.Stats();
    EXPECT_EQ(a.count, b.count);
    EXPECT_EQ(a.total, b.total);
    EXPECT_EQ(a.min, b.min);
    EXPECT_EQ(a.max, b.max);
    EXPECT_EQ(a.mean, b.mean) << o;
    EXPECT_EQ(a.median, b.median) << o;
    EXPECT_EQ(first.Quantile(0.95), d.Quantile(0.95)) << o;
  }
}

TEST(DurationSummary, MergeEqualsOneSummaryOfEverything) {
  std::vector<uint64_t> a = Spread(3'000, 3), b = Spread(500, 4), c = Spread(700, 5);
  DurationSummary all, sa, sb, sc;
  for (auto* v : {&a, &b, &c})
    for (uint64_t x : *v) all.Add(x);
  for (uint64_t x : a) sa.Add(x);
  for (uint64_t x : b) sb.Add(x);
  for (uint64_t x : c) sc.Add(x);
  // b + c stay exact (1200 > 1024: no, they turn into a histogram): both paths are covered.
  DurationSummary bc = sb;
  bc.Merge(sc);
  EXPECT_FALSE(bc.exact());
  DurationSummary merged = sa;
  merged.Merge(bc);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.total(), all.total());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_DOUBLE_EQ(merged.median(), all.median());  // same buckets, same counts
  EXPECT_NEAR(merged.mean(), all.mean(), all.mean() * 1e-12);
  EXPECT_NEAR(merged.std_dev(), all.std_dev(), all.std_dev() * 1e-9);
  // Two small exact ones stay exact.
  DurationSummary x, y;
  x.Add(10);
  x.Add(30);
  y.Add(20);
  x.Merge(y);
  EXPECT_TRUE(x.exact());
  EXPECT_DOUBLE_EQ(x.median(), 20.0);
  EXPECT_DOUBLE_EQ(x.std_dev(), 10.0);
}

TEST(DurationSummary, EmptyAndConstant) {
  DurationSummary e;
  EXPECT_EQ(e.count(), 0u);
  EXPECT_EQ(e.min(), 0u);
  EXPECT_DOUBLE_EQ(e.median(), 0.0);
  DurationSummary k;
  for (int i = 0; i < 5'000; ++i) k.Add(777'777);
  EXPECT_FALSE(k.exact());
  EXPECT_DOUBLE_EQ(k.median(), 777'777.0);  // clamped to [min, max]
  EXPECT_DOUBLE_EQ(k.std_dev(), 0.0);
}

// A summary of a few values holds no buffer (they follow from min, max and total) and stays exact
// through adds and merges; a million one-call names are a million 64-byte summaries.
TEST(DurationSummary, FewValuesExactWithoutABuffer) {
  EXPECT_LE(sizeof(DurationSummary), 64u);
  for (size_t n = 1; n <= 9; ++n) {
    DurationSummary d, a, b;
    std::vector<uint64_t> v;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t x = (i * 7919) % 13 + 1;
      v.push_back(x);
      d.Add(x);
      (i % 2 == 0 ? a : b).Add(x);
    }
    a.Merge(b);
    std::vector<uint64_t> sorted = v;
    const SampleStats want = SummarizeSample(&sorted);
    for (const DurationSummary* s : {&d, &a}) {
      const SampleStats got = s->Stats();
      EXPECT_EQ(got.count, want.count) << n;
      EXPECT_EQ(got.total, want.total) << n;
      EXPECT_EQ(got.min, want.min) << n;
      EXPECT_EQ(got.max, want.max) << n;
      EXPECT_DOUBLE_EQ(got.median, want.median) << n;
      EXPECT_NEAR(got.std, want.std, 1e-9) << n;
      EXPECT_TRUE(s->exact());
    }
    DurationSummary copy = d, moved = std::move(copy);
    EXPECT_DOUBLE_EQ(moved.median(), want.median);
  }
}

}  // namespace
}  // namespace trainprof::collector
