#include "collector/training_steps.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace trainprof::collector {
namespace {

size_t Slot(Phase p) { return static_cast<size_t>(p); }

// The phases that make up the compute of a step (everything but the input pipeline).
constexpr Phase kComputePhases[] = {Phase::kForward,    Phase::kBackward,     Phase::kOptimizerStep, Phase::kZeroGrad,
                                    Phase::kCollective, Phase::kTrainingStep, Phase::kValidationStep};

bool IsCompute(Phase p) {
  return std::find(std::begin(kComputePhases), std::end(kComputePhases), p) != std::end(kComputePhases);
}

IntervalSet UnionOf(const PhaseThread& t, std::initializer_list<Phase> phases) {
  std::vector<Interval> v;
  for (Phase p : phases) v.insert(v.end(), t.by_phase[Slot(p)].begin(), t.by_phase[Slot(p)].end());
  return Union(std::move(v));
}

void SplitThread(const PhaseThread& t, StepSplit* out) {
  // Outermost data waits, by begin (an enclosing range first when two begin together).
  std::vector<Interval> waits;
  {
    std::vector<Interval> all;
    for (const PhaseRange& r : t.ranges) {
      if (r.phase == Phase::kDataWait) all.push_back({r.begin_ns, r.end_ns});
    }
    std::sort(all.begin(), all.end(),
              [](const Interval& a, const Interval& b) { return std::tie(a.begin, b.end) < std::tie(b.begin, a.end); });
    for (const Interval& w : all) {
      if (!waits.empty() && w.begin < waits.back().end) continue;  // nested in the previous wait
      waits.push_back(w);
    }
  }
  if (waits.empty()) return;
  out->data_waits += waits.size();

  // A wait followed by a kDataEnd mark before the next wait is the StopIteration call.
  std::vector<bool> epoch_end(waits.size(), false);
  for (uint64_t m : t.data_end_marks) {
    auto it =
        std::upper_bound(waits.begin(), waits.end(), m, [](uint64_t x, const Interval& w) { return x < w.begin; });
    if (it == waits.begin()) continue;
    epoch_end[static_cast<size_t>(it - waits.begin()) - 1] = true;
  }
  for (bool e : epoch_end) out->epoch_ends += e;

  const IntervalSet backward = t.by_phase[Slot(Phase::kBackward)];
  const IntervalSet optimizer = UnionOf(t, {Phase::kOptimizerStep, Phase::kZeroGrad});
  const IntervalSet collective = t.by_phase[Slot(Phase::kCollective)];
  const IntervalSet forward = UnionOf(t, {Phase::kForward, Phase::kTrainingStep, Phase::kValidationStep});
  const IntervalSet training =
      UnionOf(t, {Phase::kBackward, Phase::kOptimizerStep, Phase::kZeroGrad, Phase::kTrainingStep});
  const IntervalSet compute = Union(Union(backward, optimizer), Union(collective, forward));

  std::vector<Step> steps;
  std::vector<bool> before_epoch_end;  // per step: an epoch-end wait ends it
  for (size_t i = 0; i < waits.size();) {
    if (epoch_end[i]) {
      ++i;
      continue;
    }
    // Waits with no compute between them are one step (zip of two loaders, a prefetching
    // wrapper); only on threads that record compute at all (docs/analysis.md, "Steps").
    size_t j = i + 1;
    while (!compute.empty() && j < waits.size() && !epoch_end[j] &&
           LengthWithin(compute, waits[j - 1].end, waits[j].begin) == 0) {
      ++j;
    }
    Step s;
    s.tid = t.tid;
    s.begin_ns = waits[i].begin;
    s.data_waits = static_cast<uint32_t>(j - i);
    if (j < waits.size()) {
      s.end_ns = waits[j].begin;
    } else {
      // The thread's last step ends with the last compute range that starts after its wait.
      const uint64_t after = waits[j - 1].end;
      uint64_t end = 0;
      bool found = false;
      for (const PhaseRange& r : t.ranges) {
        if (IsCompute(r.phase) && r.begin_ns >= after) {
          end = std::max(end, r.end_ns);
          found = true;
        }
      }
      if (!found) {
        ++out->dropped;
        break;
      }
      s.end_ns = end;
      s.ended_by_phase = true;
    }
    if (s.end_ns < s.begin_ns) s.end_ns = s.begin_ns;
    const uint64_t b = s.begin_ns, e = s.end_ns;

    std::vector<Interval> group(waits.begin() + static_cast<ptrdiff_t>(i), waits.begin() + static_cast<ptrdiff_t>(j));
    s.waits = Clip(Union(std::move(group)), b, e);
    IntervalSet covered = s.waits;
    s.parts[static_cast<size_t>(Part::kDataWait)] = Length(covered);
    const std::pair<Part, const IntervalSet*> order[] = {{Part::kBackward, &backward},
                                                         {Part::kOptimizer, &optimizer},
                                                         {Part::kCollective, &collective},
                                                         {Part::kForward, &forward}};
    for (const auto& [part, set] : order) {
      IntervalSet fresh = Subtract(Clip(*set, b, e), covered);
      s.parts[static_cast<size_t>(part)] = Length(fresh);
      covered = Union(covered, fresh);
    }
    s.parts[static_cast<size_t>(Part::kOther)] = s.duration() - Length(covered);

    if (IntervalSet c = Clip(collective, b, e); !c.empty()) {
      s.arrival = Arrival::kCollective;
      s.arrival_ns = c.front().begin;
    } else if (IntervalSet bw = Clip(backward, b, e); !bw.empty()) {
      s.arrival = Arrival::kBackward;
      s.arrival_ns = bw.front().begin;
    } else if (IntervalSet fw = Clip(forward, b, e); !fw.empty()) {
      s.arrival = Arrival::kForwardEnd;
      s.arrival_ns = fw.back().end;
    }
    s.eval = LengthWithin(training, b, e) == 0;  // corrected below for threads that never train
    steps.push_back(std::move(s));
    before_epoch_end.push_back(j < waits.size() && epoch_end[j]);
    i = j;
  }
  // Evaluation steps exist only beside training steps: a thread that never records backward or
  // optimizer (inference, a loop the shim does not see into) has only steps.
  const bool trains = std::any_of(steps.begin(), steps.end(), [](const Step& s) { return !s.eval; });
  if (!trains) {
    for (Step& s : steps) s.eval = false;
  }
  // A new epoch starts with the first training step after a StopIteration that ended a training
  // step: the validation loop between two epochs (its own StopIteration included) stays in the
  // epoch it validates.
  uint32_t epoch = 0;
  bool pending = false;
  for (size_t k = 0; k < steps.size(); ++k) {
    if (!steps[k].eval && pending) {
      ++epoch;
      pending = false;
    }
    steps[k].epoch = epoch;
    if (!steps[k].eval && before_epoch_end[k]) pending = true;
  }
  out->steps.insert(out->steps.end(), steps.begin(), steps.end());
}

}  // namespace

const char* PartName(Part part) {
  switch (part) {
    case Part::kDataWait: return "data_wait";
    case Part::kForward: return "forward";
    case Part::kBackward: return "backward";
    case Part::kOptimizer: return "optimizer";
    case Part::kCollective: return "collective";
    case Part::kOther: return "other";
    default: return "?";
  }
}

const char* PartLabel(Part part) {
  switch (part) {
    case Part::kDataWait: return "data wait";
    default: return PartName(part);
  }
}

const char* ArrivalName(Arrival a) {
  switch (a) {
    case Arrival::kCollective: return "collective";
    case Arrival::kBackward: return "backward";
    case Arrival::kForwardEnd: return "forward_end";
    default: return "none";
  }
}

uint64_t ProcessPhases::Count(Phase p) const {
  uint64_t n = 0;
  for (const PhaseThread& t : threads) n += t.count[Slot(p)];
  return n;
}

uint64_t ProcessPhases::TotalNs(Phase p) const {
  uint64_t n = 0;
  for (const PhaseThread& t : threads) n += t.total_ns[Slot(p)];
  return n;
}

IntervalSet ProcessPhases::Union(Phase p) const {
  std::vector<Interval> v;
  for (const PhaseThread& t : threads) v.insert(v.end(), t.by_phase[Slot(p)].begin(), t.by_phase[Slot(p)].end());
  return collector::Union(std::move(v));
}

ProcessPhases CollectPhases(const Process& process, StringId phase_domain) {
  ProcessPhases out;
  if (phase_domain == 0) return out;
  std::map<std::pair<uint32_t, uint32_t>, PhaseThread> threads;  // (image, thread) → ranges
  for (uint32_t ii = 0; ii < process.images.size(); ++ii) {
    const TraceImage& img = process.images[ii];
    auto thread = [&](uint32_t t) -> PhaseThread& {
      PhaseThread& pt = threads[{ii, t}];
      pt.image = ii;
      pt.thread = t;
      pt.tid = t < img.threads.size() ? img.threads[t].tid : 0;
      return pt;
    };
    // A stack per thread: pops in one domain close the innermost push of that domain, whatever
    // its category (NVTX semantics). Ranges still open at the end are not counted.
    std::unordered_map<uint32_t, std::vector<const NvtxEvent*>> stacks;
    for (const NvtxEvent& e : img.nvtx) {
      if (e.domain != phase_domain) continue;
      switch (e.kind()) {
        case NvtxKind::kPush: stacks[e.thread].push_back(&e); break;
        case NvtxKind::kPop: {
          auto& stack = stacks[e.thread];
          if (stack.empty()) break;  // counted as unbalanced by nvtx_stats
          const NvtxEvent* push = stack.back();
          stack.pop_back();
          if (push->category == 0 || push->category >= kPhaseSlots) break;
          thread(e.thread).ranges.push_back(
              {push->time_ns, std::max(e.time_ns, push->time_ns), static_cast<Phase>(push->category)});
          break;
        }
        case NvtxKind::kMark:
          if (e.category == static_cast<uint32_t>(Phase::kDataEnd))
            thread(e.thread).data_end_marks.push_back(e.time_ns);
          break;
        default: break;  // the shim records push/pop ranges only
      }
    }
  }
  for (auto& [key, t] : threads) {
    std::stable_sort(t.ranges.begin(), t.ranges.end(),
                     [](const PhaseRange& a, const PhaseRange& b) { return a.begin_ns < b.begin_ns; });
    std::sort(t.data_end_marks.begin(), t.data_end_marks.end());
    std::array<std::vector<Interval>, kPhaseSlots> raw;
    for (const PhaseRange& r : t.ranges) {
      raw[Slot(r.phase)].push_back({r.begin_ns, r.end_ns});
      ++t.count[Slot(r.phase)];
      t.total_ns[Slot(r.phase)] += r.end_ns - r.begin_ns;
    }
    for (size_t p = 0; p < kPhaseSlots; ++p) t.by_phase[p] = collector::Union(std::move(raw[p]));
    out.threads.push_back(std::move(t));
  }
  return out;
}

StepSplit SplitSteps(const ProcessPhases& phases) {
  StepSplit out;
  for (const PhaseThread& t : phases.threads) SplitThread(t, &out);
  std::stable_sort(out.steps.begin(), out.steps.end(),
                   [](const Step& a, const Step& b) { return a.begin_ns < b.begin_ns; });
  return out;
}

}  // namespace trainprof::collector
