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
  const double allowed = std::max(static_cast<double>(kSlowStepMinAllowed), kSlowStepMaxShare * static_cast<double>(steps.size()));
  if (static_cast<double>(out.over_threshold) > allowed) {
    out.listed.clear();
    return out;
  }
  out.count = out.listed.size();
  std::stable_sort(out.listed.begin(), out.listed.end(),
                   [](const SlowStep& a, const SlowStep& b) { return a.duration_ns > b.duration_ns; });
  if (out.listed.size() > kSlowStepsListed) out.listed.resize(kSlowStepsListed);
  return out;
}

}  // namespace trainprof::collector
