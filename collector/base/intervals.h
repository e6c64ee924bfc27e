// Time intervals and interval sets, the arithmetic of the step breakdown (docs/analysis.md).
//
//   Interval     [begin, end) in ns on one clock
//   IntervalSet  sorted, disjoint, non-empty intervals: the union of some ranges
//
// Phases are measured as unions, never as sums of durations, so nested or repeated ranges of one
// category (a module called inside another, a range recorded twice) are never counted twice.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace trainprof::collector {

struct Interval {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t length() const { return end > begin ? end - begin : 0; }
  bool operator==(const Interval&) const = default;
};

using IntervalSet = std::vector<Interval>;

/// The union of any intervals (empty ones dropped) as a set. Intervals that come as a few runs
/// in order of begin (GPU records: per stream, per CUPTI buffer) are merged run by run as the set
/// is built, O(n log runs) and no buffer; others are sorted first.
inline IntervalSet Union(std::vector<Interval> v) {
  auto by_begin = [](const Interval& a, const Interval& b) { return a.begin < b.begin; };
  IntervalSet out;
  auto add = [&out](const Interval& i) {
    if (i.end <= i.begin) return;
    if (!out.empty() && i.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  };
  constexpr size_t kMaxRuns = 64;
  std::vector<std::pair<size_t, size_t>> runs;  // [begin, end) of each run in order
  size_t start = 0;
  for (size_t i = 1; i <= v.size() && runs.size() < kMaxRuns; ++i) {
    if (i == v.size() || v[i].begin < v[i - 1].begin) {
      runs.push_back({start, i});
      start = i;
    }
  }
  if (runs.size() >= kMaxRuns && start < v.size()) {  // many runs: sort
    std::sort(v.begin(), v.end(), by_begin);
    for (const Interval& i : v) add(i);
    return out;
  }
  // A k-way merge: a min-heap of the runs' cursors by their next interval's begin.
  auto later = [&v](const std::pair<size_t, size_t>& a, const std::pair<size_t, size_t>& b) {
    return v[a.first].begin > v[b.first].begin;
  };
  std::erase_if(runs, [](const std::pair<size_t, size_t>& r) { return r.first == r.second; });
  std::make_heap(runs.begin(), runs.end(), later);
  while (!runs.empty()) {
    std::pop_heap(runs.begin(), runs.end(), later);
    add(v[runs.back().first]);
    if (++runs.back().first == runs.back().second) {
      runs.pop_back();
    } else {
      std::push_heap(runs.begin(), runs.end(), later);
    }
  }
  return out;
}

inline IntervalSet Union(const IntervalSet& a, const IntervalSet& b) {
  std::vector<Interval> v(a);
  v.insert(v.end(), b.begin(), b.end());
  return Union(std::move(v));
}

inline uint64_t Length(const IntervalSet& s) {
  uint64_t n = 0;
  for (const Interval& i : s) n += i.length();
  return n;
}

/// The part of `s` inside [begin, end); O(log n + pieces).
inline IntervalSet Clip(const IntervalSet& s, uint64_t begin, uint64_t end) {
  IntervalSet out;
  if (end <= begin) return out;
  // First interval that ends after `begin`.
  auto it = std::upper_bound(s.begin(), s.end(), begin, [](uint64_t t, const Interval& i) { return t < i.end; });
  for (; it != s.end() && it->begin < end; ++it) {
    Interval c{std::max(it->begin, begin), std::min(it->end, end)};
    if (c.end > c.begin) out.push_back(c);
  }
  return out;
}

inline uint64_t LengthWithin(const IntervalSet& s, uint64_t begin, uint64_t end) { return Length(Clip(s, begin, end)); }

inline IntervalSet Intersect(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    uint64_t lo = std::max(a[i].begin, b[j].begin), hi = std::min(a[i].end, b[j].end);
    if (hi > lo) out.push_back({lo, hi});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

/// a \ b.
inline IntervalSet Subtract(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t j = 0;
  for (Interval cur : a) {
    while (j < b.size() && b[j].end <= cur.begin) ++j;
    size_t k = j;
    while (k < b.size() && b[k].begin < cur.end) {
      if (b[k].begin > cur.begin) out.push_back({cur.begin, b[k].begin});
      cur.begin = std::max(cur.begin, b[k].end);
      if (cur.begin >= cur.end) break;
      ++k;
    }
    if (cur.end > cur.begin) out.push_back(cur);
  }
  return out;
}

}  // namespace trainprof::collector
