#include "export_steps.h"

#include "collector/analysis/collectives.h"
#include "collector/analysis/training_steps.h"
#include "trainprof/phases.h"

namespace trainprof::launcher {

std::vector<std::vector<collector::StepSpan>> ExportSteps(const collector::Trace& trace,
                                                          const collector::Selection& selection) {
  std::vector<std::vector<collector::StepSpan>> out(trace.processes.size());
  const collector::StringId domain = trace.strings.Find(format::kPhaseDomain);
  if (domain == 0) return out;
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    if (!selection.Process(i)) continue;
    const collector::Process& p = trace.processes[i];
    const collector::ProcessPhases phases = collector::CollectPhases(p, domain, &trace.strings);
    if (phases.empty() || phases.Count(format::Phase::kProfilerStep) > 0) continue;
    const collector::StepSplit split = collector::SplitSteps(phases, collector::DdpBackend(p).has_value());
    uint64_t n = 0;
    for (const collector::Step& s : split.steps) out[i].push_back({s.begin_ns, s.end_ns, s.tid, n++});
  }
  return out;
}

}  // namespace trainprof::launcher
