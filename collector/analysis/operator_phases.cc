#include "collector/analysis/operator_phases.h"

#include <algorithm>
#include <map>
#include <utility>

#include "collector/analysis/thread_phases.h"
#include "collector/stats/host_ops.h"

namespace trainprof::collector {

std::vector<OperatorPhaseRow> OperatorsByPhase(const Trace& trace, size_t top, size_t* omitted) {
  *omitted = 0;
  bool has_ops = false;
  for (const Process& process : trace.processes) {
    for (const TraceImage& img : process.images) has_ops |= img.source == ImageSource::kTrainprof && !img.host_ops.empty();
  }
  std::vector<OperatorPhaseRow> rows;
  if (!has_ops) return rows;
  const ThreadPhases phases(trace);
  const size_t other = PhaseLabelRank("");  // after every phase
  std::map<std::pair<size_t, StringId>, OperatorPhaseRow> sums;
  bool in_phase = false;
  for (size_t pi = 0; pi < trace.processes.size(); ++pi) {
    const Process& process = trace.processes[pi];
    for (size_t im = 0; im < process.images.size(); ++im) {
      const TraceImage& img = process.images[im];
      if (img.source != ImageSource::kTrainprof || img.host_ops.empty()) continue;
      for (const HostOpCall& call : HostOpCallsOf(img.host_ops)) {
        const HostOp& op = img.host_ops[call.op];
        const std::string_view phase = phases.At(pi, im, op.thread, op.begin_ns);
        const size_t rank = phase.empty() ? other : PhaseLabelRank(phase);
        OperatorPhaseRow& r = sums[{rank, op.name}];
        r.phase = phase.empty() ? "other" : std::string(phase);
        r.calls += 1;
        r.self_ns += call.self_ns;
        r.total_ns += call.total_ns;
        in_phase |= !phase.empty();
      }
    }
  }
  if (!in_phase) return rows;
  std::map<size_t, std::vector<OperatorPhaseRow>> by_phase;
  for (auto& [key, r] : sums) {
    r.name = std::string(trace.strings.Get(key.second));
    by_phase[key.first].push_back(std::move(r));
  }
  for (auto& [rank, v] : by_phase) {
    std::sort(v.begin(), v.end(), [](const OperatorPhaseRow& a, const OperatorPhaseRow& b) {
      return a.self_ns != b.self_ns ? a.self_ns > b.self_ns : a.name < b.name;
    });
    if (top > 0 && v.size() > top) {
      *omitted += v.size() - top;
      v.resize(top);
    }
    for (auto& r : v) rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace trainprof::collector
