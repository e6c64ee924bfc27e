#include "collector/read/tsc_convert.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace trainprof::collector {

namespace {

constexpr uint64_t kMaxClockValue = 1ull << 62;

using F = long double;  // 64-bit mantissa: intercepts of ~2^62 ns to well under 1 ns

// The pairs near the line of slope `rate` (ns per tick) through their median intercept: within
// 1 ms + 5% of a pair's distance from the median pair. `pairs` sorted by ticks.
std::vector<TscPair> NearTheLine(const std::vector<TscPair>& pairs, F rate) {
  const size_t n = pairs.size();
  std::vector<std::pair<F, size_t>> intercept(n);
  for (size_t i = 0; i < n; ++i) intercept[i] = {static_cast<F>(pairs[i].ns) - static_cast<F>(pairs[i].ticks) * rate, i};
  std::nth_element(intercept.begin(), intercept.begin() + static_cast<std::ptrdiff_t>(n / 2), intercept.end());
  const auto [mid_intercept, mid] = intercept[n / 2];
  const F mid_ticks = static_cast<F>(pairs[mid].ticks);
  std::vector<TscPair> kept;
  kept.reserve(n);
  for (const TscPair& p : pairs) {
    const F off = static_cast<F>(p.ns) - static_cast<F>(p.ticks) * rate - mid_intercept;
    const F allowed = 1e6L + 0.05L * std::abs(static_cast<F>(p.ticks) - mid_ticks) * rate;
    if (std::abs(off) <= allowed) kept.push_back(p);
  }
  return kept;
}

// Drops the pairs far off the line the others lie on (see the constructor's comment); returns
// how many. `pairs` sorted by ticks, distinct ticks. Two rates are tried, the writer's (tsc_khz)
// and the median slope between neighbouring pairs, and the one that keeps more pairs wins (ties:
// the writer's): damaged pairs can bend the median slope of a file with few pairs, and a damaged
// tsc_khz is one number against many pairs. Only rates a TSC can have are tried: with none,
// *no_rate is set (and *slope_khz to the pairs' slope, 0 for a single pair) and nothing dropped.
// *pairs_khz: the median slope's rate where it was used against a tsc_khz that was not 0.
size_t DropPairsOffTheLine(std::vector<TscPair>& pairs, uint32_t tsc_khz, double* pairs_khz, bool* no_rate,
                           double* slope_khz) {
  const size_t n = pairs.size();
  if (n == 0) return 0;
  const bool writer = TscConverter::PlausibleKhz(tsc_khz);
  auto khz_of = [](F ns_per_tick) { return ns_per_tick > 0 ? static_cast<double>(1e6L / ns_per_tick) : 0.0; };
  std::vector<TscPair> best;
  bool have = false;
  if (writer && n >= 2) {
    best = NearTheLine(pairs, static_cast<F>(1e6) / static_cast<F>(tsc_khz));
    have = true;
  }
  if (n >= 3) {
    std::vector<F> slopes;
    slopes.reserve(n - 1);
    for (size_t i = 0; i + 1 < n; ++i) {
      slopes.push_back((static_cast<F>(pairs[i + 1].ns) - static_cast<F>(pairs[i].ns)) /
                       static_cast<F>(pairs[i + 1].ticks - pairs[i].ticks));
    }
    std::nth_element(slopes.begin(), slopes.begin() + static_cast<std::ptrdiff_t>(slopes.size() / 2), slopes.end());
    const F median = slopes[slopes.size() / 2];
    if (TscConverter::PlausibleKhz(khz_of(median))) {
      std::vector<TscPair> kept = NearTheLine(pairs, median);
      if (!have || kept.size() > best.size()) {
        best = std::move(kept);
        if (tsc_khz != 0) *pairs_khz = khz_of(median);  // the writer's rate lost, or none a TSC has
      }
      have = true;
    } else if (!have) {
      *slope_khz = khz_of(median);
    }
  } else if (n == 2 && !have) {
    const F slope = (static_cast<F>(pairs[1].ns) - static_cast<F>(pairs[0].ns)) / static_cast<F>(pairs[1].ticks - pairs[0].ticks);
    if (TscConverter::PlausibleKhz(khz_of(slope))) return 0;  // the one line there is, a TSC's
    *slope_khz = khz_of(slope);
  }
  if (!have) {
    if (n == 1 && writer) return 0;  // one pair and the writer's rate
    *no_rate = true;
    return 0;
  }
  const size_t dropped = n - best.size();
  pairs = std::move(best);
  return dropped;
}

}  // namespace

TscConverter::TscConverter(std::vector<TscPair> pairs, uint32_t tsc_khz, Rejected* rejected) {
  std::erase_if(pairs, [](const TscPair& p) { return p.ticks == 0; });
  const size_t given = pairs.size();
  std::erase_if(pairs, [](const TscPair& p) { return p.ticks >= kMaxClockValue || p.ns >= kMaxClockValue; });
  size_t off_line = given - pairs.size();
  std::stable_sort(pairs.begin(), pairs.end(), [](const TscPair& a, const TscPair& b) { return a.ticks < b.ticks; });
  // Equal ticks: the first pair kept; one that says another time is damage.
  pairs.erase(std::unique(pairs.begin(), pairs.end(),
                          [&off_line](const TscPair& a, const TscPair& b) {
                            if (a.ticks != b.ticks) return false;
                            if ((a.ns > b.ns ? a.ns - b.ns : b.ns - a.ns) > kSameTimeNs) ++off_line;
                            return true;
                          }),
              pairs.end());
  double pairs_khz = 0, slope_khz = 0;
  bool no_rate = false;
  off_line += DropPairsOffTheLine(pairs, tsc_khz, &pairs_khz, &no_rate, &slope_khz);
  if (no_rate) {  // nothing converts: no pair is kept, and ToNs is never asked (usable() false)
    if (rejected != nullptr) *rejected = {.off_line = off_line, .no_rate = pairs.size(), .no_rate_khz = slope_khz};
    return;
  }
  // The longest subsequence with non-decreasing ns (patience sorting, O(n log n)): one damaged
  // pair is dropped instead of everything after it.
  const size_t n = pairs.size();
  std::vector<size_t> tail_of_len;  // index of the smallest tail of a run of each length
  std::vector<size_t> prev(n, SIZE_MAX);
  for (size_t i = 0; i < n; ++i) {
    auto it = std::upper_bound(tail_of_len.begin(), tail_of_len.end(), pairs[i].ns,
                               [&](uint64_t ns, size_t j) { return ns < pairs[j].ns; });
    if (it != tail_of_len.begin()) prev[i] = *(it - 1);
    if (it == tail_of_len.end()) {
      tail_of_len.push_back(i);
    } else {
      *it = i;
    }
  }
  std::vector<TscPair> kept;
  for (size_t i = tail_of_len.empty() ? SIZE_MAX : tail_of_len.back(); i != SIZE_MAX; i = prev[i]) kept.push_back(pairs[i]);
  std::reverse(kept.begin(), kept.end());
  if (rejected != nullptr) *rejected = {.out_of_order = n - kept.size(), .off_line = off_line, .rate_khz = pairs_khz};
  pts_ = std::move(kept);

  // Slopes as fixed point, ns per tick × 2^40, rounded up: a line through integer points (3 ticks
  // per ns) is then exact at them, the error stays below 1 ns over 2^40 ticks (6 min at 3 GHz,
  // a few ns over hours), and the floor never passes the segment's next pair (monotone).
  const unsigned __int128 one = static_cast<unsigned __int128>(1) << kShift;
  auto slope = [](unsigned __int128 dns_shifted, uint64_t dticks) {
    return static_cast<uint64_t>((dns_shifted + dticks - 1) / dticks);
  };
  // A single pair is kept only with a rate a TSC has (DropPairsOffTheLine).
  const uint64_t single = PlausibleKhz(tsc_khz) ? slope(one * 1000000u, tsc_khz) : static_cast<uint64_t>(one);
  seg_.reserve(pts_.size());
  for (size_t i = 0; i < pts_.size(); ++i) {
    uint64_t mult = single;
    if (pts_.size() >= 2) {
      const size_t a = i + 1 < pts_.size() ? i : i - 1;  // the last pair continues the segment before it
      const unsigned __int128 dns = pts_[a + 1].ns - pts_[a].ns;
      mult = slope(dns << kShift, pts_[a + 1].ticks - pts_[a].ticks);
    }
    seg_.push_back({pts_[i].ticks, pts_[i].ns, mult});
  }
  if (!seg_.empty()) SetHint(0);
}

void TscConverter::SetHint(size_t i) const {
  hint_ = i;
  hint_begin_ = seg_[i].ticks;
  hint_width_ = i + 1 < seg_.size() ? seg_[i + 1].ticks - seg_[i].ticks : UINT64_MAX - seg_[i].ticks;
}

size_t TscConverter::Find(uint64_t ticks) const {
  // The segment whose first pair is the last one at or before `ticks` (0 before the first pair).
  auto it = std::upper_bound(seg_.begin(), seg_.end(), ticks, [](uint64_t t, const Segment& s) { return t < s.ticks; });
  const size_t i = it == seg_.begin() ? 0 : static_cast<size_t>(it - seg_.begin()) - 1;
  SetHint(i);
  return i;
}

uint64_t TscConverter::ToNsSlow(uint64_t ticks) const {
  if (seg_.empty()) return ticks;
  const Segment& s = seg_[Find(ticks)];
  if (ticks >= s.ticks) {
    const unsigned __int128 d = static_cast<unsigned __int128>(ticks - s.ticks) * s.mult;
    return s.ns + static_cast<uint64_t>(d >> kShift);
  }
  // Before the first pair: its line continued backwards (still monotone).
  const unsigned __int128 d = static_cast<unsigned __int128>(s.ticks - ticks) * s.mult;
  const uint64_t back = static_cast<uint64_t>(d >> kShift);
  return back > s.ns ? 0 : s.ns - back;
}

}  // namespace trainprof::collector
