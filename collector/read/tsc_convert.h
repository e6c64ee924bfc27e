// TSC ticks → CLOCK_MONOTONIC ns for a trace file on the TSC recording clock (kFlagTscClock; docs/trace-format.md, "Time"): piecewise-linear interpolation between the
// file's calibration pairs, so that every analysis sees ns on the one axis.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace trainprof::collector {

/// A TSC value and the CLOCK_MONOTONIC ns read together with it (the writer's ClockPair).
struct TscPair {
  uint64_t ticks = 0;
  uint64_t ns = 0;
};

/// The conversion of one file. Between two pairs: the straight line through them; before the
/// first and after the last: the nearest segment's line continued (a single pair: the slope of
/// the header's tsc_khz). Monotone: later ticks never give an earlier ns.
class TscConverter {
 public:
  /// Two ns values of one TSC reading closer than this are the same time (a pair's rounding).
  static constexpr uint64_t kSameTimeNs = 1000;
  /// The rates a TSC can have, kHz (100 MHz to 20 GHz; x86 invariant TSCs run at 1-5 GHz): a
  /// tsc_khz or a line through pairs outside them converts no TSC.
  static constexpr uint32_t kMinTscKhz = 100'000;
  static constexpr uint32_t kMaxTscKhz = 20'000'000;
  /// Whether `khz` is a rate a TSC can have.
  static bool PlausibleKhz(double khz) { return khz >= kMinTscKhz && khz <= kMaxTscKhz; }

  /// Pairs left out of the conversion as damage, by why.
  struct Rejected {
    size_t out_of_order = 0;  ///< ns going back as ticks go forward
    size_t off_line = 0;      ///< not clock values (≥ 2^62), or far off the line through the others
    /// No TSC rate: neither tsc_khz nor the pairs' own slope is one (kMinTscKhz..kMaxTscKhz),
    /// so no pair is kept; the pairs left after the ≥ 2^62 ones are counted here.
    size_t no_rate = 0;
    /// The pairs' slope, kHz, when no_rate is set (0: no slope, a single pair).
    double no_rate_khz = 0;
    /// The pairs' own rate (kHz) where it was used against a tsc_khz that is not 0: it kept more
    /// pairs than the writer's tsc_khz (a damaged tsc_khz), or tsc_khz is no TSC's rate; else 0.
    double rate_khz = 0;
    size_t total() const { return out_of_order + off_line + no_rate; }
  };

  /// Builds from `pairs` in any order (ticks 0: no pair, ignored; equal ticks: the first kept, a
  /// later one with other ns counted off the line).
  /// Damaged pairs are rejected and counted in *rejected (if given):
  /// - ticks or ns at or past 2^62 (146 years at 1 GHz; 0xFF bytes, random ones);
  /// - pairs far off the line the others lie on: a line through the pairs' median intercept,
  ///   of the writer's rate (`tsc_khz`) or of the median slope between neighbouring pairs,
  ///   whichever keeps more pairs; a pair is kept within 1 ms + 5% of its distance from the
  ///   median pair, far wider than a TSC's drift against CLOCK_MONOTONIC (NTP slews it by at most
  ///   500 ppm) or the error of the writer's rate (~2e-4);
  /// - pairs whose ns go back as ticks go forward: the longest run that is in order is kept;
  /// - all of them when no TSC rate fits: neither `tsc_khz` nor the median slope between
  ///   neighbouring pairs (nor, of two pairs, their slope) is a rate a TSC can have (PlausibleKhz),
  ///   or a single pair and no such tsc_khz (nothing to convert with: ticks are never read as ns).
  /// `tsc_khz`: the writer's measured rate, kHz, for a file with one pair (0 or outside
  /// kMinTscKhz..kMaxTscKhz: unknown).
  TscConverter(std::vector<TscPair> pairs, uint32_t tsc_khz, Rejected* rejected = nullptr);

  /// Whether any pair was usable (otherwise ToNs returns its input).
  bool usable() const { return !pts_.empty(); }
  /// The pairs kept, in order of ticks.
  const std::vector<TscPair>& pairs() const { return pts_; }

  /// `ticks` as CLOCK_MONOTONIC ns: on the line through the pairs, exact at them and at points
  /// of the line with integer coordinates, otherwise within 1 ns (segments under 2^40 ticks).
  /// Fast for ticks that come in order: the last segment used is tried first, inline (the
  /// reader converts every timed record: out of line, it was 15% of a report's CPU). Not
  /// thread-safe.
  uint64_t ToNs(uint64_t ticks) const {
    if (ticks - hint_begin_ < hint_width_) {  // unsigned: also false before hint_begin_
      const Segment& s = seg_[hint_];
      return s.ns + static_cast<uint64_t>((static_cast<unsigned __int128>(ticks - s.ticks) * s.mult) >> kShift);
    }
    return ToNsSlow(ticks);
  }

  /// ToNs for a loop that converts many ticks in order (the reader's, per chunk): a copy of the
  /// segment used last, kept in the loop's registers, not reloaded from the converter after each
  /// store the loop makes elsewhere. The same answers as ToNs; a tick outside the copy goes to
  /// ToNs, and the copy follows it. Valid while the converter lives.
  class Cursor {
   public:
    explicit Cursor(const TscConverter& c) : c_(&c) { Load(); }
    uint64_t ToNs(uint64_t ticks) {
      if (ticks - begin_ < width_) {
        return ns_ + static_cast<uint64_t>((static_cast<unsigned __int128>(ticks - begin_) * mult_) >> kShift);
      }
      const uint64_t ns = c_->ToNs(ticks);
      Load();
      return ns;
    }

   private:
    void Load() {
      width_ = c_->hint_width_;
      if (width_ == 0) return;
      const Segment& s = c_->seg_[c_->hint_];
      begin_ = s.ticks;
      ns_ = s.ns;
      mult_ = s.mult;
    }
    const TscConverter* c_;
    uint64_t begin_ = 0, width_ = 0, ns_ = 0, mult_ = 0;
  };

 private:
  struct Segment {
    uint64_t ticks;  ///< the segment's first pair
    uint64_t ns;
    uint64_t mult;   ///< ns per tick × 2^kShift (a TSC slower than 2^-24 GHz is not one)
  };
  static constexpr int kShift = 40;
  size_t Find(uint64_t ticks) const;
  uint64_t ToNsSlow(uint64_t ticks) const;
  void SetHint(size_t i) const;  ///< hint_ and the tick range [hint_begin_, +hint_width_) it covers

  std::vector<TscPair> pts_;
  std::vector<Segment> seg_;  ///< one per pair: pair i's line is segment i's (the last: the one before's slope)
  mutable size_t hint_ = 0;
  mutable uint64_t hint_begin_ = 0;
  mutable uint64_t hint_width_ = 0;  ///< 0: no segment (seg_ empty), every call goes to ToNsSlow
};

}  // namespace trainprof::collector
