#include "collector/duration_summary.h"

#include <algorithm>
#include <bit>
#include <cmath>


namespace trainprof::collector {

namespace {
constexpr uint64_t kSub = uint64_t{1} << DurationSummary::kSubBits;
}  // namespace

uint32_t DurationBucket(uint64_t v) {
  if (v < kSub) return static_cast<uint32_t>(v);
  const int e = 63 - std::countl_zero(v);  // >= kSubBits
  const int shift = e - DurationSummary::kSubBits;
  return static_cast<uint32_t>((static_cast<uint64_t>(shift + 1) << DurationSummary::kSubBits) + ((v >> shift) - kSub));
}

uint64_t DurationBucketLow(uint32_t bucket) {
  if (bucket < kSub) return bucket;
  const uint32_t shift = (bucket >> DurationSummary::kSubBits) - 1;
  return (kSub + (bucket & (kSub - 1))) << shift;
}

uint64_t DurationBucketWidth(uint32_t bucket) {
  if (bucket < kSub) return 1;
  return uint64_t{1} << ((bucket >> DurationSummary::kSubBits) - 1);
}

void DurationSummary::Add(uint64_t ns) {
  ++count_;
  total_ += ns;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
  const double x = static_cast<double>(ns);
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (x - mean_);
  if (!histogram_) {
    exact_.push_back(ns);
    if (exact_.size() > kExactSamples) ToHistogram();
    return;
  }
  AddToHistogram(ns, 1);
}

void DurationSummary::Merge(const DurationSummary& o) {
  if (o.count_ == 0) return;
  if (count_ == 0) {
    *this = o;
    return;
  }
  const double n1 = static_cast<double>(count_), n2 = static_cast<double>(o.count_);
  const double delta = o.mean_ - mean_;
  mean_ += delta * n2 / (n1 + n2);
  m2_ += o.m2_ + delta * delta * n1 * n2 / (n1 + n2);
  count_ += o.count_;
  total_ += o.total_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  if (!histogram_ && !o.histogram_ && exact_.size() + o.exact_.size() <= kExactSamples) {
    exact_.insert(exact_.end(), o.exact_.begin(), o.exact_.end());
    return;
  }
  if (!histogram_) ToHistogram();
  if (!o.histogram_) {
    for (uint64_t v : o.exact_) AddToHistogram(v, 1);
    return;
  }
  for (size_t i = 0; i < o.buckets_.size(); ++i) {
    if (o.buckets_[i] != 0) AddToHistogram(DurationBucketLow(o.first_ + static_cast<uint32_t>(i)), o.buckets_[i]);
  }
}

void DurationSummary::ToHistogram() {
  histogram_ = true;
  std::vector<uint64_t> values;
  values.swap(exact_);
  for (uint64_t v : values) AddToHistogram(v, 1);
}

void DurationSummary::AddToHistogram(uint64_t ns, uint64_t n) {
  const uint32_t b = DurationBucket(ns);
  if (buckets_.empty()) {
    first_ = b;
    buckets_.assign(1, 0);
  } else if (b < first_) {
    buckets_.insert(buckets_.begin(), first_ - b, 0);
    first_ = b;
  } else if (b - first_ >= buckets_.size()) {
    buckets_.resize(b - first_ + 1, 0);
  }
  buckets_[b - first_] += n;
}

double DurationSummary::ValueAtRank(uint64_t rank) const {
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen > rank) {
      const uint32_t b = first_ + static_cast<uint32_t>(i);
      const double mid = static_cast<double>(DurationBucketLow(b)) + static_cast<double>(DurationBucketWidth(b) - 1) / 2.0;
      return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

SampleStats DurationSummary::Stats() const {
  if (!histogram_) {
    std::vector<uint64_t> v = exact_;
    return SummarizeSample(&v);
  }
  SampleStats s;
  s.count = count_;
  s.total = total_;
  s.min = min();
  s.max = max_;
  s.mean = mean_;
  s.std = count_ < 2 ? 0 : std::sqrt(std::max(0.0, m2_) / static_cast<double>(count_ - 1));
  s.median = count_ % 2 == 1 ? ValueAtRank(count_ / 2) : (ValueAtRank(count_ / 2 - 1) + ValueAtRank(count_ / 2)) / 2.0;
  return s;
}

double DurationSummary::mean() const { return Stats().mean; }
double DurationSummary::std_dev() const { return Stats().std; }
double DurationSummary::median() const { return Stats().median; }

}  // namespace trainprof::collector
