#include "collector/analysis/thread_phases.h"

#include <algorithm>

#include "collector/analysis/training_steps.h"

namespace trainprof::collector {

std::string_view PhaseLabel(format::Phase phase) {
  switch (phase) {
    case Phase::kDataWait: return "data_wait";
    case Phase::kFetch: return "fetch";
    case Phase::kGetItem: return "getitem";
    case Phase::kCollate: return "collate";
    case Phase::kWorkerInit: return "worker_init";
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kOptimizerStep:
    case Phase::kZeroGrad: return "optimizer";
    case Phase::kCollective: return "collective";
    case Phase::kTrainingStep: return "training_step";
    case Phase::kValidationStep: return "validation_step";
    case Phase::kDataLoaderIter: return "dataloader_iter";
    case Phase::kCheckpoint: return "checkpoint";
    case Phase::kInitProcessGroup: return "init_process_group";
    default: return "";
  }
}

size_t PhaseLabelRank(std::string_view label) {
  const size_t n = sizeof(kPhaseLabels) / sizeof(kPhaseLabels[0]);
  for (size_t i = 0; i < n; ++i) {
    if (kPhaseLabels[i] == label) return i;
  }
  return n;
}

ThreadPhases::ThreadPhases(const Trace& trace) {
  for (size_t pi = 0; pi < trace.processes.size(); ++pi) AddProcess(trace, pi);
}

ThreadPhases::ThreadPhases(const Trace& trace, size_t process) { AddProcess(trace, process); }

void ThreadPhases::AddProcess(const Trace& trace, size_t pi) {
  const StringId domain = trace.strings.Find(format::kPhaseDomain);
  if (domain == 0) return;
  {
    ProcessPhases phases = CollectPhases(trace.processes[pi], domain);
    for (PhaseThread& t : phases.threads) {
      std::vector<PhaseRange> ranges;
      for (const PhaseRange& r : t.ranges) {
        if (!PhaseLabel(r.phase).empty() && r.end_ns > r.begin_ns) ranges.push_back(r);
      }
      if (ranges.empty()) continue;
      // Outer ranges first at equal begins; pushes at the same time stay in push order.
      std::stable_sort(ranges.begin(), ranges.end(), [](const PhaseRange& a, const PhaseRange& b) {
        return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
      });
      std::vector<Segment>& out = threads_[{pi, t.image, t.thread}];
      struct Open {
        uint64_t end_ns;
        std::string_view phase;
      };
      std::vector<Open> open;
      uint64_t cursor = 0;
      auto emit = [&](uint64_t until, std::string_view phase) {
        if (until > cursor) out.push_back({cursor, until, phase});
        cursor = std::max(cursor, until);
      };
      auto close_until = [&](uint64_t t_ns) {
        while (!open.empty() && open.back().end_ns <= t_ns) {
          emit(open.back().end_ns, open.back().phase);
          open.pop_back();
        }
      };
      for (const PhaseRange& r : ranges) {
        close_until(r.begin_ns);
        if (!open.empty()) emit(r.begin_ns, open.back().phase);
        cursor = r.begin_ns;
        const uint64_t end = open.empty() ? r.end_ns : std::min(r.end_ns, open.back().end_ns);
        open.push_back({end, PhaseLabel(r.phase)});
      }
      close_until(UINT64_MAX);
    }
  }
}

std::string_view ThreadPhases::At(size_t process, size_t image, uint32_t thread, uint64_t t_ns) const {
  auto it = threads_.find({process, image, thread});
  if (it == threads_.end()) return {};
  const std::vector<Segment>& v = it->second;
  auto s = std::upper_bound(v.begin(), v.end(), t_ns, [](uint64_t t, const Segment& seg) { return t < seg.begin_ns; });
  if (s == v.begin()) return {};
  --s;
  return t_ns < s->end_ns ? s->phase : std::string_view();
}

}  // namespace trainprof::collector
