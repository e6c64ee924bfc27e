#include "collector/analysis/slow_steps.h"

#include <algorithm>

namespace trainprof::collector {

SlowSteps FindSlowSteps(const std::vector<StepDuration>& steps, double median_ns) {
  SlowSteps out;
  out.median_ns = median_ns;
  if (median_ns <= 0) return out;
  for (const StepDuration& s : steps) {
    const double d = static_cast<double>(s.duration_ns);
    if (d < kSlowStepTimesMedian * median_ns || d - median_ns < static_cast<double>(kSlowStepMinExcessNs)) continue;
    out.listed.push_back({s.step, s.train_step, s.duration_ns, d / median_ns});
  }
  out.steps = steps.size();
  out.over_threshold = out.listed.size();
  std::stable_sort(out.listed.begin(), out.listed.end(),
                   [](const SlowStep& a, const SlowStep& b) { return a.duration_ns > b.duration_ns; });
  const double allowed = std::max(static_cast<double>(kSlowStepMinAllowed), kSlowStepMaxShare * static_cast<double>(steps.size()));
  if (static_cast<double>(out.over_threshold) > allowed) {
    // Too many for all to be isolated: keep the longest k (k ≤ allowed) only where they stand
    // kSlowStepGap times above every other step (a checkpoint among a noisy loop's hiccups).
    size_t k = 0;
    for (size_t i = static_cast<size_t>(allowed); i >= 1; --i) {
      if (static_cast<double>(out.listed[i - 1].duration_ns) >= kSlowStepGap * static_cast<double>(out.listed[i].duration_ns)) {
        k = i;
        break;
      }
    }
    out.listed.resize(k);
  }
  out.count = out.listed.size();
  if (out.listed.size() > kSlowStepsListed) out.listed.resize(kSlowStepsListed);
  return out;
}

}  // namespace trainprof::collector
