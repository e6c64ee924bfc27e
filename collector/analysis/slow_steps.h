// Isolated slow steps: training steps far above the process's median step (a checkpoint save, an
// evaluation pass inside a step, a long GC pause). They are named as such instead of moving the
// verdict. Rule and reasons: docs/analysis.md, "Slow steps".
//
//   durations of the steps in the statistics ─► median ─► steps with duration ≥ 3 × median and
//   duration − median ≥ 10 ms ─► isolated when they are at most 10% of the steps (at least 2
//   allowed), or else the longest few (as many as allowed) where they take ≥ 3 × the next-longest
//   step ─► the longest kSlowStepsListed, and how many there are
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace trainprof::collector {

inline constexpr double kSlowStepTimesMedian = 3;       ///< a slow step: this many medians or more ...
inline constexpr uint64_t kSlowStepMinExcessNs = 10'000'000;  ///< ... and this much above the median
inline constexpr size_t kSlowStepsListed = 3;                 ///< slow steps listed per process
inline constexpr double kSlowStepMaxShare = 0.10;  ///< isolated: at most this share of the steps ...
inline constexpr uint64_t kSlowStepMinAllowed = 2; ///< ... or this many, whichever is larger
inline constexpr double kSlowStepGap = 3;  ///< when more are slow: the longest few, if this many times the next

/// One training step as the rule sees it.
struct StepDuration {
  uint64_t step = 0;        ///< position among the process's steps (train and eval)
  uint64_t train_step = 0;  ///< k: index among its training steps
  uint64_t duration_ns = 0;
};

struct SlowStep {
  uint64_t step = 0;
  uint64_t train_step = 0;
  uint64_t duration_ns = 0;
  double times_median = 0;  ///< duration / median step
};

struct SlowSteps {
  std::vector<SlowStep> listed;  ///< the longest kSlowStepsListed, longest first (isolated ones only)
  uint64_t count = 0;            ///< all isolated slow steps (0 when they are not isolated)
  uint64_t over_threshold = 0;   ///< steps that meet the duration rule, isolated or not
  uint64_t steps = 0;            ///< steps compared
  double median_ns = 0;          ///< the median they are compared with
};

/// The slow steps among `steps` (the steps in the statistics), against `median_ns` (their median).
/// When more steps than kSlowStepMaxShare (or kSlowStepMinAllowed) meet the rule, the step time is
/// spread (an input pipeline delivering in bursts) and `over_threshold` says so; the longest few
/// (at most as many as allowed) are still isolated where each takes ≥ kSlowStepGap × every other
/// step (a checkpoint save on a loop with scheduler hiccups).
SlowSteps FindSlowSteps(const std::vector<StepDuration>& steps, double median_ns);

}  // namespace trainprof::collector
