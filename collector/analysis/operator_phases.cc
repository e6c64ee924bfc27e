#include "collector/analysis/operator_phases.h"

#include <algorithm>
#include <map>
#include <utility>

#include "collector/analysis/thread_phases.h"
#include "collector/stats/host_ops.h"

namespace trainprof::collector {

std::vector<OperatorPhaseStat> ProcessOperatorPhases(const Trace& trace, size_t pi) {
  const Process& process = trace.processes[pi];
  bool has_ops = false;
  for (const TraceImage& img : process.images) has_ops |= img.source == ImageSource::kTrainprof && !img.host_ops.empty();
  std::vector<OperatorPhaseStat> out;
  if (!has_ops) return out;
  const ThreadPhases phases(trace, pi);
  std::map<std::pair<std::string_view, StringId>, OperatorPhaseStat> sums;
  for (size_t im = 0; im < process.images.size(); ++im) {
    const TraceImage& img = process.images[im];
    if (img.source != ImageSource::kTrainprof || img.host_ops.empty()) continue;
    for (const HostOpCall& call : HostOpCallsOf(img.host_ops)) {
      const HostOp& op = img.host_ops[call.op];
      const std::string_view phase = phases.At(pi, im, op.thread, op.begin_ns);
      OperatorPhaseStat& r = sums[{phase, op.name}];
      r.phase = std::string(phase);
      r.name = op.name;
      r.calls += 1;
      r.self_ns += call.self_ns;
      r.total_ns += call.total_ns;
    }
  }
  for (auto& [key, r] : sums) out.push_back(std::move(r));
  return out;
}

std::vector<OperatorPhaseRow> MergeOperatorPhases(const std::vector<const std::vector<OperatorPhaseStat>*>& per_process,
                                                  const StringPool& strings, size_t top, size_t* omitted) {
  *omitted = 0;
  std::vector<OperatorPhaseRow> rows;
  const size_t other = PhaseLabelRank("");  // after every phase
  std::map<std::pair<size_t, StringId>, OperatorPhaseRow> sums;
  bool in_phase = false;
  for (const std::vector<OperatorPhaseStat>* stats : per_process) {
    for (const OperatorPhaseStat& s : *stats) {
      const size_t rank = s.phase.empty() ? other : PhaseLabelRank(s.phase);
      OperatorPhaseRow& r = sums[{rank, s.name}];
      r.phase = s.phase.empty() ? "other" : s.phase;
      r.calls += s.calls;
      r.self_ns += s.self_ns;
      r.total_ns += s.total_ns;
      in_phase |= !s.phase.empty();
    }
  }
  if (!in_phase) return rows;
  std::map<size_t, std::vector<OperatorPhaseRow>> by_phase;
  for (auto& [key, r] : sums) {
    r.name = std::string(strings.Get(key.second));
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

std::vector<OperatorPhaseRow> OperatorsByPhase(const Trace& trace, size_t top, size_t* omitted) {
  std::vector<std::vector<OperatorPhaseStat>> stats;
  for (size_t pi = 0; pi < trace.processes.size(); ++pi) stats.push_back(ProcessOperatorPhases(trace, pi));
  std::vector<const std::vector<OperatorPhaseStat>*> per_process;
  for (const auto& s : stats) per_process.push_back(&s);
  return MergeOperatorPhases(per_process, trace.strings, top, omitted);
}

}  // namespace trainprof::collector
