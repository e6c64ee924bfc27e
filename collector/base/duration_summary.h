// Streaming, mergeable summary of a sample of durations (ns): the columns of a statistics table
// (count, total, mean, sample std dev, min, median, max) in memory bounded by the spread of the
// values, not by their number. What lets `trainprof report` read 100M records in a fixed budget.
//
// Exact while at most kExactSamples values were added (the values are kept; every statistic is
// then what SummarizeSample gives). Past that, the median comes from a log-linear histogram:
// values below 2^kSubBits have a bucket each; above, each power of two [2^E, 2^(E+1)) is split
// into 2^kSubBits buckets of equal width (the bucketing of HdrHistogram, G. Tene). A bucket's
// midpoint is within width/2 <= 2^E / 2^(kSubBits+1) of any value in it, so an estimated median
// is within kRelativeError (1/256 = 0.39%) of a value of the right rank. Count, total, min and max
// stay exact. Mean and std dev: exact values give them directly (two passes); past kExactSamples,
// the sum of squares of the values shifted by K (the first 1024 values' mean, an integer) is kept
// in a double and the shifted sum follows from total - count * K exactly ("shifted data"
// algorithm; Chan, Golub and LeVeque, "Algorithms for computing the sample variance", 1983, who
// also give the pairwise formula Merge uses). An Add is then two integer operations, a multiply and an add,
// with no division on the summary's dependency chain (Welford's update divides per value).
// Histogram memory: 8 bytes per bucket between the smallest and largest value's bucket (at most
// 64 << kSubBits buckets; ~3.5 KB for values spanning 10x).
// Memory per summary: 64 bytes, and nothing else while at most 3 values were added (they follow
// from min, max and total); then the exact values in a buffer that doubles from 4 slots to
// kExactSamples. A report holds one summary per range name: a million names called once each
// cost 64 MB, not a million 1024-slot buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collector/base/sample_stats.h"

namespace trainprof::collector {

class DurationSummary {
 public:
  static constexpr size_t kExactSamples = 1024;
  static constexpr int kSubBits = 7;
  static constexpr double kRelativeError = 1.0 / (2 << kSubBits);  ///< of an estimated median

  DurationSummary() = default;
  DurationSummary(const DurationSummary& other);
  DurationSummary(DurationSummary&& other) noexcept;
  DurationSummary& operator=(DurationSummary other) noexcept;
  ~DurationSummary();

  /// Adds one value. Inline: a value into the histogram's current span is the common case of a
  /// long trace (one call per matched range); the rest goes to AddSlow.
  [[gnu::always_inline]] void Add(uint64_t ns) {
    if (count_ > kExactSamples) {  // histogram mode: cap_ >= 1
      const uint32_t b = Bucket(ns);
      if (b - first_ < cap_) {  // unsigned: also false below first_
        ++count_;
        total_ += ns;
        min_ = ns < min_ ? ns : min_;
        max_ = ns > max_ ? ns : max_;
        const double d = static_cast<double>(static_cast<int64_t>(ns - shift_));
        s2_ += d * d;
        ++data_[b - first_];
        return;
      }
    }
    AddSlow(ns);
  }
  void Merge(const DurationSummary& other);

  uint64_t count() const { return count_; }
  uint64_t total() const { return total_; }  ///< wraps only past 2^64 ns (584 years)
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  /// Past kExactSamples values, total() / count(): it wraps with total() where damaged durations
  /// sum past 2^64 ns (SummarizeSample sums in 128 bits), the price of 64 bytes a summary.
  double mean() const;
  double std_dev() const;  ///< sample standard deviation (n-1); 0 for fewer than two values
  /// The middle value, or the mean of the two middle values for an even count; estimated (within
  /// kRelativeError of each middle value) when !exact().
  double median() const;
  /// True while every value is kept, so that median() is exact.
  bool exact() const { return count_ <= kExactSamples; }
  /// Every statistic at once (the exact values are sorted once, not once per statistic); median
  /// and p90 estimated (exact false) past kExactSamples.
  SampleStats Stats() const;
  /// The q-quantile (0 ≤ q ≤ 1) by linear interpolation between the closest ranks, as Quantile
  /// (sample_stats.h) of the values: exact while exact(), past that between the histogram's
  /// estimates of the two ranks (each within kRelativeError of a value of that rank). 0 when empty.
  double Quantile(double q) const;

  /// The whole state, for a summary file (collector/summary/): `data` holds the exact values
  /// (4 to kExactSamples of them, in the order added) or, past kExactSamples, the histogram's
  /// bucket counts from bucket `first` on; nothing for 3 values or fewer (they follow from min,
  /// max and total). Load(Save()) is the same summary: every statistic and every later Merge.
  struct State {
    uint64_t count = 0, total = 0, min = 0, max = 0, shift = 0;
    double s2 = 0;
    uint32_t first = 0;
    std::vector<uint64_t> data;
  };
  State Save() const;
  /// The summary of `s`; false (and `*out` untouched) when `s` is not one Save could give: data of
  /// the wrong length, bucket counts that do not sum to count, values outside [min, max], buckets
  /// past the last one, a total that does not match the values.
  static bool Load(const State& s, DurationSummary* out);

 private:
  static constexpr uint64_t kImplicit = 3;  ///< values that follow from min, max and total

 public:
  /// DurationBucket, inline for Add.
  static uint32_t Bucket(uint64_t v) {
    constexpr uint64_t kSub = uint64_t{1} << kSubBits;
    if (v < kSub) return static_cast<uint32_t>(v);
    const int e = 63 - __builtin_clzll(v);  // >= kSubBits
    const int shift = e - kSubBits;
    return static_cast<uint32_t>((static_cast<uint64_t>(shift + 1) << kSubBits) + ((v >> shift) - kSub));
  }

 private:
  void AddSlow(uint64_t ns);
  /// The exact values (count_ <= kExactSamples), unsorted, into `out` (room for kExactSamples).
  size_t ExactValues(uint64_t* out) const;
  void Reserve(size_t slots);              ///< data_ holds at least `slots` values
  void ToHistogram(const uint64_t* values, size_t n);
  void AddToHistogram(uint64_t ns, uint64_t n);
  /// Mean and sum of squared deviations (n * variance) of all values, from the exact values or
  /// from shift_ and s2_.
  void Moments(double* mean, double* m2) const;
  /// Sets shift_ and s2_ (histogram mode) for values of that mean and m2 (count_, total_ set).
  void SetMoments(double mean, double m2);
  /// total_ - count_ * shift_: the sum of the values shifted by shift_ (exact while it fits 63 bits).
  int64_t ShiftedSum() const { return static_cast<int64_t>(total_ - count_ * shift_); }
  double ValueAtRank(uint64_t rank) const;  ///< histogram estimate of the rank-th smallest (0-based)

  uint64_t count_ = 0;
  uint64_t total_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  uint64_t shift_ = 0;  // histogram mode: K, the values' shift
  double s2_ = 0;       // histogram mode: sum of (value - K)^2
  // count_ <= kImplicit: unused. count_ <= kExactSamples: the values (count_ of them, room for
  // cap_). Beyond (the histogram): the counts of buckets first_ .. first_ + cap_ - 1.
  uint64_t* data_ = nullptr;
  uint32_t cap_ = 0;
  uint32_t first_ = 0;
};

/// Bucket index of `v` in DurationSummary's histogram, and the bounds of a bucket (tests use them).
uint32_t DurationBucket(uint64_t v);
uint64_t DurationBucketLow(uint32_t bucket);
uint64_t DurationBucketWidth(uint32_t bucket);

}  // namespace trainprof::collector
