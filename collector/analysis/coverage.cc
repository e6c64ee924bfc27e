#include "collector/analysis/coverage.h"

#include <algorithm>

#include "collector/analysis/capture_note.h"
#include "collector/base/sample_stats.h"

namespace trainprof::collector {

Coverage ComputeCoverage(const ProcessFacts& p, const ProcessPhases& phases, const IntervalSet& train_steps,
                         const IntervalSet& eval_steps) {
  Coverage c;
  IntervalSet wall;
  if (p.captured) {
    std::vector<Interval> v;
    for (const CaptureInterval& i : *p.captured) v.push_back({i.start_ns, i.end_ns});
    wall = Union(std::move(v));
  } else {
    wall = Union({{p.start_ns, p.end_ns}});
  }
  c.wall_ns = Length(wall);
  IntervalSet rest = Subtract(wall, train_steps);
  c.steps_ns = c.wall_ns - Length(rest);
  c.percent = Percent(static_cast<double>(c.steps_ns), static_cast<double>(c.wall_ns));

  uint64_t first_phase = UINT64_MAX;
  for (const PhaseThread& t : phases.threads) {
    if (!t.ranges.empty()) first_phase = std::min(first_phase, t.ranges.front().begin_ns);
  }
  IntervalSet evaluation = Union(eval_steps, phases.Union(Phase::kValidationStep));
  const std::pair<const char*, IntervalSet> kinds[] = {
      {"dataloader_start", phases.Union(Phase::kDataLoaderIter)},
      {"checkpoint", phases.Union(Phase::kCheckpoint)},
      {"init_process_group", phases.Union(Phase::kInitProcessGroup)},
      {"evaluation", std::move(evaluation)},
      {"startup", first_phase == UINT64_MAX ? IntervalSet{} : Union({{p.start_ns, first_phase}})},
  };
  for (const auto& [kind, set] : kinds) {
    const IntervalSet part = Intersect(rest, set);
    const uint64_t ns = Length(part);
    if (ns == 0) continue;
    c.uncovered.push_back({kind, ns, Percent(static_cast<double>(ns), static_cast<double>(c.wall_ns))});
    rest = Subtract(rest, part);
  }
  if (const uint64_t ns = Length(rest); ns > 0) {
    c.uncovered.push_back({"unattributed", ns, Percent(static_cast<double>(ns), static_cast<double>(c.wall_ns))});
  }
  std::stable_sort(c.uncovered.begin(), c.uncovered.end(),
                   [](const UncoveredPart& a, const UncoveredPart& b) { return a.ns > b.ns; });
  return c;
}

const char* UncoveredLabel(const std::string& kind) {
  if (kind == "dataloader_start") return "DataLoader iterator start (workers starting)";
  if (kind == "checkpoint") return "checkpoint save/load";
  if (kind == "init_process_group") return "init_process_group";
  if (kind == "evaluation") return "evaluation";
  if (kind == "startup") return "start-up before the first phase (interpreter, imports, set-up)";
  return "unattributed";
}

}  // namespace trainprof::collector
