#include "collector/base/duration_summary.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>


namespace trainprof::collector {

namespace {
constexpr uint64_t kSub = uint64_t{1} << DurationSummary::kSubBits;
}  // namespace

uint32_t DurationBucket(uint64_t v) { return DurationSummary::Bucket(v); }

uint64_t DurationBucketLow(uint32_t bucket) {
  if (bucket < kSub) return bucket;
  const uint32_t shift = (bucket >> DurationSummary::kSubBits) - 1;
  return (kSub + (bucket & (kSub - 1))) << shift;
}

uint64_t DurationBucketWidth(uint32_t bucket) {
  if (bucket < kSub) return 1;
  return uint64_t{1} << ((bucket >> DurationSummary::kSubBits) - 1);
}

DurationSummary::DurationSummary(const DurationSummary& o)
    : count_(o.count_), total_(o.total_), min_(o.min_), max_(o.max_), shift_(o.shift_), s2_(o.s2_), first_(o.first_) {
  if (o.data_ == nullptr) return;
  const size_t used = o.count_ <= kExactSamples ? o.count_ : o.cap_;
  Reserve(used);
  std::memcpy(data_, o.data_, used * sizeof(uint64_t));
  if (o.count_ > kExactSamples) cap_ = o.cap_;
}

DurationSummary::DurationSummary(DurationSummary&& o) noexcept
    : count_(o.count_), total_(o.total_), min_(o.min_), max_(o.max_), shift_(o.shift_), s2_(o.s2_), data_(o.data_),
      cap_(o.cap_), first_(o.first_) {
  o.data_ = nullptr;
  o.cap_ = 0;
  o.count_ = 0;
}

DurationSummary& DurationSummary::operator=(DurationSummary o) noexcept {
  std::swap(count_, o.count_);
  std::swap(total_, o.total_);
  std::swap(min_, o.min_);
  std::swap(max_, o.max_);
  std::swap(shift_, o.shift_);
  std::swap(s2_, o.s2_);
  std::swap(data_, o.data_);
  std::swap(cap_, o.cap_);
  std::swap(first_, o.first_);
  return *this;
}

DurationSummary::~DurationSummary() { std::free(data_); }

void DurationSummary::Reserve(size_t slots) {
  if (slots <= cap_) return;
  size_t cap = cap_ == 0 ? 4 : cap_;
  while (cap < slots) cap *= 2;
  void* p = std::realloc(data_, cap * sizeof(uint64_t));
  if (p == nullptr) throw std::bad_alloc();
  data_ = static_cast<uint64_t*>(p);
  cap_ = static_cast<uint32_t>(cap);
}

size_t DurationSummary::ExactValues(uint64_t* out) const {
  if (count_ > kImplicit) {
    std::memcpy(out, data_, count_ * sizeof(uint64_t));
    return count_;
  }
  // Up to three values: min, max and (total - min - max, exact also when total wrapped) between.
  if (count_ >= 1) out[0] = min_;
  if (count_ >= 2) out[1] = max_;
  if (count_ == 3) out[2] = total_ - min_ - max_;
  return count_;
}

void DurationSummary::Moments(double* mean, double* m2) const {
  *mean = 0;
  *m2 = 0;
  if (count_ == 0) return;
  const double n = static_cast<double>(count_);
  if (count_ > kExactSamples) {
    const double s1 = static_cast<double>(ShiftedSum());
    // The mean from the exact total, as SummarizeSample's: the same whatever order the values came
    // in (the windowed analyses add them window by window).
    *mean = static_cast<double>(static_cast<long double>(total_) / static_cast<long double>(count_));
    *m2 = std::max(0.0, s2_ - s1 * s1 / n);
    return;
  }
  uint64_t v[kExactSamples];
  const size_t k = ExactValues(v);
  const double m = static_cast<double>(total_) / n;  // total_ of <= 1024 values: no wrap in practice
  double sum = 0;
  for (size_t i = 0; i < k; ++i) {
    const double d = static_cast<double>(v[i]) - m;
    sum += d * d;
  }
  *mean = m;
  *m2 = sum;
}

void DurationSummary::SetMoments(double mean, double m2) {
  // K: the mean rounded down to an integer (clamped to the values' range), so that the shifted
  // values are small and their squares lose nothing to cancellation.
  const double k = std::clamp(std::floor(mean), static_cast<double>(min_), static_cast<double>(max_));
  shift_ = k >= 18446744073709551615.0 ? UINT64_MAX : static_cast<uint64_t>(k);
  const double s1 = static_cast<double>(ShiftedSum());
  s2_ = m2 + s1 * s1 / static_cast<double>(count_);
}

void DurationSummary::AddSlow(uint64_t ns) {
  const uint64_t before = count_;
  uint64_t implicit[kImplicit];
  if (before == kImplicit) ExactValues(implicit);
  ++count_;
  total_ += ns;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
  if (count_ <= kImplicit) return;
  if (count_ <= kExactSamples) {
    Reserve(count_);
    if (before == kImplicit) std::memcpy(data_, implicit, sizeof implicit);
    data_[count_ - 1] = ns;
    return;
  }
  if (before == kExactSamples) {
    // The moments of the exact values, then K from them; the new value joins below.
    --count_;
    total_ -= ns;
    double mean, m2;
    Moments(&mean, &m2);
    SetMoments(mean, m2);
    ++count_;
    total_ += ns;
    uint64_t* values = data_;
    data_ = nullptr;
    cap_ = 0;
    ToHistogram(values, kExactSamples);
    std::free(values);
  }
  const double d = static_cast<double>(static_cast<int64_t>(ns - shift_));
  s2_ += d * d;
  AddToHistogram(ns, 1);
}

void DurationSummary::Merge(const DurationSummary& o) {
  if (o.count_ == 0) return;
  if (count_ == 0) {
    *this = o;
    return;
  }
  uint64_t mine[kExactSamples], theirs[kExactSamples];
  const size_t n_mine = count_ <= kExactSamples ? ExactValues(mine) : 0;
  const size_t n_theirs = o.count_ <= kExactSamples ? o.ExactValues(theirs) : 0;
  const bool was_exact = count_ <= kExactSamples;
  double mean1, m2_1, mean2, m2_2;
  Moments(&mean1, &m2_1);
  o.Moments(&mean2, &m2_2);
  const double n1 = static_cast<double>(count_), n2 = static_cast<double>(o.count_);
  const double delta = mean2 - mean1;
  const double mean = mean1 + delta * n2 / (n1 + n2);
  const double m2 = m2_1 + m2_2 + delta * delta * n1 * n2 / (n1 + n2);
  count_ += o.count_;
  total_ += o.total_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  if (count_ <= kExactSamples) {
    if (count_ <= kImplicit) return;
    Reserve(count_);
    std::memcpy(data_, mine, n_mine * sizeof(uint64_t));
    std::memcpy(data_ + n_mine, theirs, n_theirs * sizeof(uint64_t));
    return;
  }
  SetMoments(mean, m2);
  if (was_exact) {
    std::free(data_);
    data_ = nullptr;
    cap_ = 0;
    ToHistogram(mine, n_mine);
  }
  if (o.count_ <= kExactSamples) {
    for (size_t i = 0; i < n_theirs; ++i) AddToHistogram(theirs[i], 1);
    return;
  }
  for (size_t i = 0; i < o.cap_; ++i) {
    if (o.data_[i] != 0) AddToHistogram(DurationBucketLow(o.first_ + static_cast<uint32_t>(i)), o.data_[i]);
  }
}

void DurationSummary::ToHistogram(const uint64_t* values, size_t n) {
  for (size_t i = 0; i < n; ++i) AddToHistogram(values[i], 1);
}

void DurationSummary::AddToHistogram(uint64_t ns, uint64_t n) {
  // Only called once count_ > kExactSamples: data_ holds cap_ bucket counts from first_.
  const uint32_t b = DurationBucket(ns);
  if (cap_ == 0) {
    data_ = static_cast<uint64_t*>(std::calloc(1, sizeof(uint64_t)));
    if (data_ == nullptr) throw std::bad_alloc();
    first_ = b;
    cap_ = 1;
  } else if (b < first_ || b - first_ >= cap_) {
    const uint32_t lo = std::min(first_, b);
    const uint32_t hi = std::max(first_ + cap_ - 1, b);
    const uint32_t size = hi - lo + 1;
    auto* grown = static_cast<uint64_t*>(std::calloc(size, sizeof(uint64_t)));
    if (grown == nullptr) throw std::bad_alloc();
    std::memcpy(grown + (first_ - lo), data_, cap_ * sizeof(uint64_t));
    std::free(data_);
    data_ = grown;
    first_ = lo;
    cap_ = size;
  }
  data_[b - first_] += n;
}

double DurationSummary::ValueAtRank(uint64_t rank) const {
  uint64_t seen = 0;
  for (size_t i = 0; i < cap_; ++i) {
    seen += data_[i];
    if (seen > rank) {
      const uint32_t b = first_ + static_cast<uint32_t>(i);
      const double mid = static_cast<double>(DurationBucketLow(b)) + static_cast<double>(DurationBucketWidth(b) - 1) / 2.0;
      return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

SampleStats DurationSummary::Stats() const {
  if (count_ <= kExactSamples) {
    std::vector<uint64_t> v(count_);
    ExactValues(v.data());
    return SummarizeSample(&v);
  }
  SampleStats s;
  s.count = count_;
  s.total = total_;
  s.min = min();
  s.max = max_;
  double m2;
  Moments(&s.mean, &m2);
  s.std = count_ < 2 ? 0 : std::sqrt(m2 / static_cast<double>(count_ - 1));
  s.median = count_ % 2 == 1 ? ValueAtRank(count_ / 2) : (ValueAtRank(count_ / 2 - 1) + ValueAtRank(count_ / 2)) / 2.0;
  s.p90 = Quantile(0.9);
  s.exact = false;
  return s;
}

double DurationSummary::Quantile(double q) const {
  if (count_ == 0) return 0;
  if (count_ <= kExactSamples) {
    std::vector<uint64_t> v(count_);
    ExactValues(v.data());
    return collector::Quantile(&v, q);
  }
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * static_cast<double>(count_ - 1);  // as Percentile, between estimated ranks
  const uint64_t lo = static_cast<uint64_t>(pos);
  const double a = ValueAtRank(lo);
  return lo + 1 < count_ ? a + (pos - static_cast<double>(lo)) * (ValueAtRank(lo + 1) - a) : a;
}

DurationSummary::State DurationSummary::Save() const {
  State s{.count = count_, .total = total_, .min = min(), .max = max_, .shift = shift_, .s2 = s2_, .first = first_, .data = {}};
  if (count_ > kExactSamples) {
    s.data.assign(data_, data_ + cap_);
  } else if (count_ > kImplicit) {
    s.data.assign(data_, data_ + count_);
  }
  return s;
}

bool DurationSummary::Load(const State& s, DurationSummary* out) {
  DurationSummary d;
  if (s.count == 0) {
    if (s.total != 0 || !s.data.empty()) return false;
    *out = std::move(d);
    return true;
  }
  if (s.min > s.max) return false;
  d.count_ = s.count;
  d.total_ = s.total;
  d.min_ = s.min;
  d.max_ = s.max;
  if (s.count <= kImplicit) {
    // The values are min, max and the rest of the total: they must be within [min, max].
    if (!s.data.empty()) return false;
    if (s.shift != 0 || s.s2 != 0 || s.first != 0) return false;
    const bool ok = s.count == 1   ? s.min == s.max && s.total == s.min
                    : s.count == 2 ? s.total == s.min + s.max
                                   : s.total - s.min - s.max >= s.min && s.total - s.min - s.max <= s.max;
    if (!ok) return false;
    *out = std::move(d);
    return true;
  }
  if (s.count <= kExactSamples) {
    if (s.data.size() != s.count) return false;
    uint64_t total = 0, lo = UINT64_MAX, hi = 0;
    for (uint64_t v : s.data) {
      total += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (total != s.total || lo != s.min || hi != s.max) return false;
    if (s.shift != 0 || s.s2 != 0 || s.first != 0) return false;  // what Save writes for exact values
    d.Reserve(s.count);
    std::memcpy(d.data_, s.data.data(), s.count * sizeof(uint64_t));
    *out = std::move(d);
    return true;
  }
  // The histogram: buckets within the last one, counts summing to count, min and max in the first
  // and last bucket that count anything.
  constexpr uint64_t kBuckets = uint64_t{64 - kSubBits + 1} << kSubBits;
  if (s.data.empty() || s.first >= kBuckets || s.data.size() > kBuckets - s.first) return false;
  uint64_t sum = 0;
  size_t first_used = s.data.size(), last_used = 0;
  for (size_t i = 0; i < s.data.size(); ++i) {
    if (s.data[i] == 0) continue;
    if (__builtin_add_overflow(sum, s.data[i], &sum)) return false;
    first_used = std::min(first_used, i);
    last_used = i;
  }
  // Save leaves no empty bucket at either end: the first counts min, the last max.
  if (sum != s.count || first_used != 0 || last_used + 1 != s.data.size() || DurationBucket(s.min) != s.first ||
      DurationBucket(s.max) != s.first + last_used) {
    return false;
  }
  // The total of count values within [min, max] (in 128 bits: it wraps in 64 only past 584 years).
  const unsigned __int128 n = s.count, total = s.total;
  if (total < n * s.min || total > n * s.max) return false;
  if (!std::isfinite(s.s2) || s.s2 < 0 || s.shift < s.min || s.shift > s.max) return false;
  d.shift_ = s.shift;
  d.s2_ = s.s2;
  d.first_ = s.first;
  d.data_ = static_cast<uint64_t*>(std::malloc(s.data.size() * sizeof(uint64_t)));
  if (d.data_ == nullptr) throw std::bad_alloc();
  std::memcpy(d.data_, s.data.data(), s.data.size() * sizeof(uint64_t));
  d.cap_ = static_cast<uint32_t>(s.data.size());
  *out = std::move(d);
  return true;
}

double DurationSummary::mean() const { return Stats().mean; }
double DurationSummary::std_dev() const { return Stats().std; }
double DurationSummary::median() const { return Stats().median; }

}  // namespace trainprof::collector
