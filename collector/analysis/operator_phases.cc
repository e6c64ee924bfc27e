#include "collector/analysis/operator_phases.h"

#include <algorithm>
#include <map>
#include <utility>

#include "collector/analysis/training_steps.h"
#include "collector/stats/host_ops.h"

namespace trainprof::collector {
namespace {

// Phase → row label (their order is the table's).
constexpr const char* kLabels[] = {"data_wait", "data_loading", "forward", "backward", "optimizer",
                                   "collective", "checkpoint", "other"};
constexpr size_t kOther = 7;

size_t LabelOf(Phase p) {
  switch (p) {
    case Phase::kDataWait: return 0;
    case Phase::kFetch:
    case Phase::kGetItem:
    case Phase::kCollate:
    case Phase::kWorkerInit: return 1;
    case Phase::kForward:
    case Phase::kTrainingStep:
    case Phase::kValidationStep: return 2;
    case Phase::kBackward: return 3;
    case Phase::kOptimizerStep:
    case Phase::kZeroGrad: return 4;
    case Phase::kCollective: return 5;
    case Phase::kCheckpoint: return 6;
    default: return kOther;
  }
}

// The label of each call's start on one thread: a sweep over the thread's (nested) phase ranges,
// by begin, with the stack of those open. `calls` are (start, index) sorted by start.
void LabelCalls(const std::vector<PhaseRange>& ranges, const std::vector<std::pair<uint64_t, uint32_t>>& calls,
                std::vector<uint8_t>* label) {
  std::vector<const PhaseRange*> open;
  size_t next = 0;
  for (const auto& [t, i] : calls) {
    while (next < ranges.size() && ranges[next].begin_ns <= t) {
      while (!open.empty() && open.back()->end_ns <= ranges[next].begin_ns) open.pop_back();
      open.push_back(&ranges[next++]);
    }
    while (!open.empty() && open.back()->end_ns <= t) open.pop_back();
    (*label)[i] = static_cast<uint8_t>(open.empty() ? kOther : LabelOf(open.back()->phase));
  }
}

}  // namespace

std::vector<OperatorPhaseRow> OperatorsByPhase(const Trace& trace, size_t top, size_t* omitted) {
  *omitted = 0;
  const StringId domain = trace.strings.Find(format::kPhaseDomain);
  std::map<std::pair<size_t, StringId>, OperatorPhaseRow> sums;
  bool in_phase = false;
  for (const Process& process : trace.processes) {
    bool has_ops = false;
    for (const TraceImage& img : process.images) has_ops |= img.source == ImageSource::kTrainprof && !img.host_ops.empty();
    if (!has_ops) continue;
    const ProcessPhases phases = CollectPhases(process, domain, &trace.strings);
    for (uint32_t im = 0; im < process.images.size(); ++im) {
      const TraceImage& img = process.images[im];
      if (img.source != ImageSource::kTrainprof || img.host_ops.empty()) continue;
      const std::vector<HostOpCall> calls = HostOpCallsOf(img.host_ops);
      std::vector<uint8_t> label(calls.size(), kOther);
      std::map<uint32_t, std::vector<std::pair<uint64_t, uint32_t>>> by_thread;
      for (uint32_t k = 0; k < calls.size(); ++k) {
        const HostOp& op = img.host_ops[calls[k].op];
        by_thread[op.thread].push_back({op.begin_ns, k});
      }
      for (auto& [thread, starts] : by_thread) {
        std::sort(starts.begin(), starts.end());
        for (const PhaseThread& pt : phases.threads) {
          if (pt.image == im && pt.thread == thread) LabelCalls(pt.ranges, starts, &label);
        }
      }
      for (uint32_t k = 0; k < calls.size(); ++k) {
        const HostOp& op = img.host_ops[calls[k].op];
        OperatorPhaseRow& r = sums[{label[k], op.name}];
        r.calls += 1;
        r.self_ns += calls[k].self_ns;
        r.total_ns += calls[k].total_ns;
        in_phase |= label[k] != kOther;
      }
    }
  }
  std::vector<OperatorPhaseRow> rows;
  if (!in_phase) return rows;
  std::vector<std::vector<OperatorPhaseRow>> by_label(kOther + 1);
  for (auto& [key, r] : sums) {
    r.phase = kLabels[key.first];
    r.name = std::string(trace.strings.Get(key.second));
    by_label[key.first].push_back(std::move(r));
  }
  for (auto& v : by_label) {
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
