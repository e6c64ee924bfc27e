#include "collector/analysis/training_steps.h"

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

template <typename It>
IntervalSet UnionOf(const PhaseThread& t, It first, It last) {
  std::vector<Interval> v;
  for (It p = first; p != last; ++p) v.insert(v.end(), t.by_phase[Slot(*p)].begin(), t.by_phase[Slot(*p)].end());
  return Union(std::move(v));
}

// The step part a compute phase's own time goes to (docs/analysis.md, "Step breakdown").
Part PartOf(Phase p) {
  switch (p) {
    case Phase::kBackward: return Part::kBackward;
    case Phase::kOptimizerStep:
    case Phase::kZeroGrad: return Part::kOptimizer;
    case Phase::kCollective: return Part::kCollective;
    default: return Part::kForward;  // kForward, kTrainingStep, kValidationStep
  }
}

using SelfTime = std::array<IntervalSet, kPartCount>;

// Each instant covered by compute phases goes to the innermost one (its self time), except that
// everything inside a backward range is backward. Ranges of one thread nest (push/pop); one that
// overhangs its parent (not possible from push/pop) is cut at the parent's end.
SelfTime InnermostSelfTime(const PhaseThread& t) {
  std::vector<const PhaseRange*> ranges;
  for (const PhaseRange& r : t.ranges) {
    if (IsCompute(r.phase) && r.end_ns > r.begin_ns) ranges.push_back(&r);
  }
  std::sort(ranges.begin(), ranges.end(), [](const PhaseRange* a, const PhaseRange* b) {
    return std::tie(a->begin_ns, b->end_ns) < std::tie(b->begin_ns, a->end_ns);
  });
  std::array<std::vector<Interval>, kPartCount> pieces;
  struct Open {
    uint64_t end;
    Part part;
  };
  std::vector<Open> stack;
  uint64_t cursor = 0;
  auto emit = [&](uint64_t until) {  // [cursor, until) belongs to the innermost open range
    if (!stack.empty() && until > cursor) pieces[static_cast<size_t>(stack.back().part)].push_back({cursor, until});
    cursor = std::max(cursor, until);
  };
  auto close_until = [&](uint64_t time) {
    while (!stack.empty() && stack.back().end <= time) {
      emit(stack.back().end);
      stack.pop_back();
    }
  };
  for (const PhaseRange* r : ranges) {
    close_until(r->begin_ns);
    emit(r->begin_ns);
    cursor = std::max(cursor, r->begin_ns);
    if (!stack.empty() && stack.back().part == Part::kBackward) continue;  // inside backward: backward
    const uint64_t end = stack.empty() ? r->end_ns : std::min(r->end_ns, stack.back().end);
    if (end > cursor) stack.push_back({end, PartOf(r->phase)});
  }
  close_until(UINT64_MAX);
  SelfTime out;
  for (size_t i = 0; i < kPartCount; ++i) out[i] = Union(std::move(pieces[i]));
  return out;
}

// What the parts and the arrival of a thread's steps are computed from.
struct PartContext {
  explicit PartContext(const PhaseThread& t)
      : self(InnermostSelfTime(t)),
        backward(t.by_phase[Slot(Phase::kBackward)]),
        collective(t.by_phase[Slot(Phase::kCollective)]),
        forward(UnionOf(t, {Phase::kForward, Phase::kTrainingStep, Phase::kValidationStep})),
        training(UnionOf(t, {Phase::kBackward, Phase::kOptimizerStep, Phase::kZeroGrad, Phase::kTrainingStep})),
        compute(UnionOf(t, std::begin(kComputePhases), std::end(kComputePhases))) {}
  SelfTime self;
  const IntervalSet& backward;
  const IntervalSet& collective;
  IntervalSet forward, training, compute;
};

// The parts of step s (its begin and end set) given its data-wait time, and its arrival point
// (`ddp`: SplitSteps's).
void FillParts(const PartContext& ctx, IntervalSet waits, bool ddp, Step* sp) {
  Step& s = *sp;
  const uint64_t b = s.begin_ns, e = s.end_ns;
  s.waits = std::move(waits);
  IntervalSet covered = s.waits;
  s.parts[static_cast<size_t>(Part::kDataWait)] = Length(covered);
  for (Part part : {Part::kForward, Part::kBackward, Part::kOptimizer, Part::kCollective}) {
    // Self-time sets are disjoint: only the data waits can cover them.
    IntervalSet fresh = Subtract(Clip(ctx.self[static_cast<size_t>(part)], b, e), s.waits);
    s.parts[static_cast<size_t>(part)] = Length(fresh);
    covered = Union(covered, fresh);
  }
  s.parts[static_cast<size_t>(Part::kOther)] = s.duration() - Length(covered);

  if (IntervalSet bw = Clip(ctx.backward, b, e); ddp && !bw.empty()) {
    const IntervalSet c = Intersect(ctx.collective, bw);  // a DDP gradient collective, if recorded
    s.arrival = Arrival::kDdpBackward;
    s.arrival_ns = c.empty() ? bw.front().begin : c.front().begin;
  } else if (IntervalSet c = Clip(ctx.collective, b, e); !c.empty()) {
    s.arrival = Arrival::kCollective;
    s.arrival_ns = c.front().begin;
  } else if (IntervalSet bw = Clip(ctx.backward, b, e); !bw.empty()) {
    s.arrival = Arrival::kBackward;
    s.arrival_ns = bw.front().begin;
  } else if (IntervalSet fw = Clip(ctx.forward, b, e); !fw.empty()) {
    s.arrival = Arrival::kForwardEnd;
    s.arrival_ns = fw.back().end;
  }
}

void IntoOptimizerSteps(const PhaseThread& t, const PartContext& ctx, bool ddp, std::vector<Step>* steps);

// Steps from the loop's rhythm, on a thread without data waits (docs/analysis.md, "Steps"):
// the top-level phase ranges (inside no other compute range) are cut into cycles at each forward
// that follows a backward or optimizer step. Within a cycle, a forward of the same module as the
// cycle's first forward (same range name) starts a new cycle too, and so does the first untagged
// forward after forwards tagged "[eval]": an evaluation loop (forwards only) before a training
// forward. A cycle with a backward or optimizer step is a training step, the others evaluation
// steps. A step ends at the end of its last backward or optimizer step (evaluation: its last
// forward); the next one starts there — a training step after evaluation steps after a DataLoader
// iterator start, checkpoint or init_process_group range that ends before its first forward (the
// time between epochs is in no step) — and the thread's first step starts at its first forward. A step's data wait is the time before its first
// forward that no compute phase covers: the loop's own batch preparation (get_batch), and whatever
// else the loop does there. An optimizer step that runs forward or backward itself
// (optimizer.step(closure)) starts a cycle, whatever came before it: a training cycle by itself.
void RhythmThread(const PhaseThread& t, bool ddp, StepSplit* out) {
  if (t.by_phase[Slot(Phase::kBackward)].empty()) return;  // no training on this thread
  std::vector<const PhaseRange*> all;
  for (const PhaseRange& r : t.ranges) {
    if (IsCompute(r.phase)) all.push_back(&r);
  }
  std::sort(all.begin(), all.end(), [](const PhaseRange* a, const PhaseRange* b) {
    return std::tie(a->begin_ns, b->end_ns) < std::tie(b->begin_ns, a->end_ns);
  });
  std::vector<const PhaseRange*> top;
  for (const PhaseRange* r : all) {
    if (top.empty() || r->begin_ns >= top.back()->end_ns) top.push_back(r);
  }
  const bool tagged = std::any_of(top.begin(), top.end(), [](const PhaseRange* r) { return r->eval_tag; });
  auto is_forward = [](const PhaseRange* r) { return r->phase == Phase::kForward; };
  auto trains = [](const PhaseRange* r) { return r->phase == Phase::kBackward || r->phase == Phase::kOptimizerStep; };

  // Cycle starts: indices into `top`.
  std::vector<size_t> starts;
  const PhaseRange* first = nullptr;  // the current cycle's first forward
  bool after_training = false, prev_tagged = false;
  const IntervalSet passes = UnionOf(t, {Phase::kForward, Phase::kBackward});
  auto closure = [&](const PhaseRange* r) {
    return r->phase == Phase::kOptimizerStep && LengthWithin(passes, r->begin_ns, r->end_ns) > 0;
  };
  for (size_t i = 0; i < top.size(); ++i) {
    const PhaseRange* r = top[i];
    if (closure(r)) {  // a cycle of its own: forwards before it are another cycle's
      starts.push_back(i);
      first = r;
      after_training = true;
      prev_tagged = false;
      continue;
    }
    if (trains(r)) {
      after_training = true;
      continue;
    }
    if (!is_forward(r)) continue;
    const bool start = first == nullptr || after_training || (tagged && prev_tagged && !r->eval_tag) ||
                       (r->name == first->name && (!tagged || r->eval_tag));
    if (start) {
      starts.push_back(i);
      first = r;
    }
    after_training = false;
    prev_tagged = r->eval_tag;
  }
  if (starts.empty()) return;
  ++out->rhythm_threads;

  const PartContext ctx(t);
  // Ranges between epochs: the first training step after evaluation starts after them.
  const IntervalSet outside =
      UnionOf(t, {Phase::kDataLoaderIter, Phase::kCheckpoint, Phase::kInitProcessGroup});
  std::vector<Step> steps;
  for (size_t c = 0; c < starts.size(); ++c) {
    const size_t from = starts[c], to = c + 1 < starts.size() ? starts[c + 1] : top.size();
    Step s;
    s.tid = t.tid;
    s.by_rhythm = true;
    s.data_waits = 0;
    const uint64_t forward_begin = top[from]->begin_ns;  // the cycle's first forward (or closure step)
    uint64_t last_forward = forward_begin, last_training = 0;
    for (size_t i = from; i < to; ++i) {
      if (trains(top[i])) last_training = std::max(last_training, top[i]->end_ns);
      if (is_forward(top[i])) last_forward = std::max(last_forward, top[i]->end_ns);
    }
    s.eval = last_training == 0;
    s.begin_ns = steps.empty() ? forward_begin : std::min(steps.back().end_ns, forward_begin);
    if (!s.eval && !steps.empty() && steps.back().eval) {  // between epochs: not the next step's data wait
      for (const Interval& o : outside) {
        if (o.end <= forward_begin && o.end > s.begin_ns) s.begin_ns = o.end;
      }
    }
    s.end_ns = std::max(s.eval ? last_forward : last_training, forward_begin);
    IntervalSet waits = Subtract(Union({{s.begin_ns, forward_begin}}), ctx.compute);
    FillParts(ctx, std::move(waits), ddp, &s);
    steps.push_back(std::move(s));
  }
  // No StopIteration marks epochs here: a new epoch starts with the first training step after
  // evaluation steps (the evaluation at the end of each epoch).
  // An evaluation after every training step or two is a per-step check (time_sequence_prediction's
  // prediction after each LBFGS step), not an epoch's end: then no epochs are told apart.
  uint32_t epoch = 0;
  size_t training = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    if (k > 0 && !steps[k].eval && steps[k - 1].eval) ++epoch;
    steps[k].epoch = epoch;
    training += !steps[k].eval;
  }
  if (2 * (static_cast<size_t>(epoch) + 1) > training) {
    for (Step& s : steps) s.epoch = 0;
  }
  IntoOptimizerSteps(t, ctx, ddp, &steps);
  out->rhythm_steps += steps.size();
  out->steps.insert(out->steps.end(), steps.begin(), steps.end());
}

// The outermost ranges of `phase` on a thread, by begin (an enclosing range first when two begin
// together).
std::vector<Interval> Outermost(const PhaseThread& t, Phase phase) {
  std::vector<Interval> all, out;
  for (const PhaseRange& r : t.ranges) {
    if (r.phase == phase) all.push_back({r.begin_ns, r.end_ns});
  }
  std::sort(all.begin(), all.end(),
            [](const Interval& a, const Interval& b) { return std::tie(a.begin, b.end) < std::tie(b.begin, a.end); });
  for (const Interval& w : all) {
    if (!out.empty() && w.begin < out.back().end) continue;  // nested in the previous one
    out.push_back(w);
  }
  return out;
}

// Counts a step's forward/backward passes (its outermost backward ranges, by begin) and those inside
// an optimizer step (a closure's).
void CountPasses(const std::vector<Interval>& backwards, const IntervalSet& optimizer, Step* s) {
  s->passes = s->passes_in_optimizer = 0;
  auto it = std::lower_bound(backwards.begin(), backwards.end(), s->begin_ns,
                             [](const Interval& w, uint64_t x) { return w.begin < x; });
  for (; it != backwards.end() && it->begin < s->end_ns; ++it) {
    ++s->passes;
    if (LengthWithin(optimizer, it->begin, it->begin + 1) > 0) ++s->passes_in_optimizer;
  }
}

// The step is the optimizer step (docs/analysis.md, "Steps"). On a thread that records optimizer
// steps (Optimizer.step, GradScaler.step: a step skipped on overflow is still one), consecutive
// training steps of one epoch that run none are the micro-batches of the next one that does
// (gradient accumulation: forward, backward, forward, backward, optimizer step), and become one
// step with it; a run that no optimizer step ends (an evaluation or the epoch's end comes first)
// becomes one step of its own. Waits taken together before the compute (data_waits ≥ 2) count as
// micro-batches when the step runs at least as many backward passes outside its optimizer steps (a
// loop that fetches every micro-batch first, as Hugging Face's Trainer does); else they are one
// batch from several loaders (zip). A merged step's arrival is its last micro-batch's: the
// gradient synchronisation of accumulation happens there (DDP's no_sync before it).
void IntoOptimizerSteps(const PhaseThread& t, const PartContext& ctx, bool ddp, std::vector<Step>* steps) {
  const IntervalSet& optimizer = t.by_phase[Slot(Phase::kOptimizerStep)];
  const std::vector<Interval> backwards = Outermost(t, Phase::kBackward);
  for (Step& s : *steps) {
    CountPasses(backwards, optimizer, &s);
    const uint32_t outside = s.passes - s.passes_in_optimizer;
    s.micro_batches = s.data_waits >= 2 && outside >= s.data_waits ? s.data_waits : 1;
  }
  if (optimizer.empty()) return;
  auto steps_optimizer = [&](const Step& s) { return LengthWithin(optimizer, s.begin_ns, s.end_ns) > 0; };
  std::vector<Step> out;
  out.reserve(steps->size());
  std::vector<Step>& in = *steps;
  for (size_t i = 0; i < in.size();) {
    if (in[i].eval || steps_optimizer(in[i])) {
      out.push_back(std::move(in[i++]));
      continue;
    }
    size_t j = i;  // [i, j): micro-batches without an optimizer step
    while (j < in.size() && !in[j].eval && !steps_optimizer(in[j]) && in[j].epoch == in[i].epoch) ++j;
    const size_t last = j < in.size() && !in[j].eval && in[j].epoch == in[i].epoch ? j : j - 1;
    if (last == i) {
      out.push_back(std::move(in[i++]));
      continue;
    }
    Step m = in[last];
    m.begin_ns = in[i].begin_ns;
    m.data_waits = m.micro_batches = 0;
    std::vector<Interval> waits;
    for (size_t k = i; k <= last; ++k) {
      m.data_waits += in[k].data_waits;
      m.micro_batches += in[k].micro_batches;
      waits.insert(waits.end(), in[k].waits.begin(), in[k].waits.end());
    }
    FillParts(ctx, Union(std::move(waits)), ddp, &m);
    m.arrival = in[last].arrival;
    m.arrival_ns = in[last].arrival_ns;
    CountPasses(backwards, optimizer, &m);
    out.push_back(std::move(m));
    i = last + 1;
  }
  *steps = std::move(out);
}

// Steps from torch.profiler's ProfilerStep#N spans (`prof.step()` to `prof.step()`), on a thread
// that has them, unless one span holds two data waits or more (prof.step() called less often than
// once a batch: the waits then mark the steps better). Returns false when not used.
bool ProfilerStepThread(const PhaseThread& t, const std::vector<Interval>& waits, bool ddp, StepSplit* out) {
  const std::vector<Interval> spans = Outermost(t, Phase::kProfilerStep);
  if (spans.empty()) return false;
  std::vector<uint32_t> held(spans.size(), 0);
  for (const Interval& w : waits) {
    auto it = std::upper_bound(spans.begin(), spans.end(), w.begin,
                               [](uint64_t x, const Interval& s) { return x < s.begin; });
    if (it == spans.begin()) continue;
    const size_t k = static_cast<size_t>(it - spans.begin()) - 1;
    if (w.begin < spans[k].end && ++held[k] > 1) return false;
  }
  out->data_waits += waits.size();
  const PartContext ctx(t);
  const IntervalSet all_waits = Union(std::vector<Interval>(waits));
  std::vector<Step> steps;
  for (size_t k = 0; k < spans.size(); ++k) {
    Step s;
    s.tid = t.tid;
    s.begin_ns = spans[k].begin;
    s.end_ns = std::max(spans[k].end, spans[k].begin);
    s.data_waits = held[k];
    s.profiler_step = true;
    FillParts(ctx, Clip(all_waits, s.begin_ns, s.end_ns), ddp, &s);
    s.eval = LengthWithin(ctx.training, s.begin_ns, s.end_ns) == 0;
    steps.push_back(std::move(s));
  }
  if (std::none_of(steps.begin(), steps.end(), [](const Step& s) { return !s.eval; })) {
    for (Step& s : steps) s.eval = false;  // a thread that never trains has only steps
  }
  const std::vector<Interval> backwards = Outermost(t, Phase::kBackward);
  for (Step& s : steps) CountPasses(backwards, t.by_phase[Slot(Phase::kOptimizerStep)], &s);
  out->profiler_steps += steps.size();
  out->steps.insert(out->steps.end(), steps.begin(), steps.end());
  return true;
}

void SplitThread(const PhaseThread& t, bool ddp, StepSplit* out) {
  // Outermost data waits, by begin.
  const std::vector<Interval> waits = Outermost(t, Phase::kDataWait);
  if (ProfilerStepThread(t, waits, ddp, out)) return;
  if (waits.empty()) {
    RhythmThread(t, ddp, out);
    return;
  }
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

  const PartContext ctx(t);
  const IntervalSet& training = ctx.training;
  const IntervalSet& compute = ctx.compute;

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
      // A DataLoader iterator created after the step's work, with no compute after it before the
      // next wait, starts what follows (the validation loop, the next epoch's workers: Lightning
      // prefetches, so its last training batch is followed by no StopIteration call): the step
      // ends there, and the start-up is outside the steps (docs/analysis.md, "Steps").
      const uint64_t after = waits[j - 1].end;
      for (const Interval& it : t.by_phase[Slot(Phase::kDataLoaderIter)]) {
        if (it.begin <= after || it.begin >= s.end_ns) continue;
        const bool compute_after = std::any_of(t.ranges.begin(), t.ranges.end(), [&](const PhaseRange& r) {
          return IsCompute(r.phase) && r.begin_ns >= it.end && r.begin_ns < waits[j].begin;
        });
        if (!compute_after) {
          s.end_ns = it.begin;
          break;
        }
      }
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
    FillParts(ctx, Clip(Union(std::move(group)), b, e), ddp, &s);
    s.eval = LengthWithin(training, b, e) == 0;  // corrected below for threads that never train
    steps.push_back(std::move(s));
    before_epoch_end.push_back(j < waits.size() && epoch_end[j]);
    i = j;
  }
  // Evaluation steps exist only beside training steps: a thread that never records backward or
  // optimizer (inference, a loop the shim does not see into) has only steps. Unless every forward
  // it ran was an evaluation's (under torch.no_grad() or eval(): "[eval]"): a thread that only
  // evaluates (a parent testing the model its children trained) has evaluation steps only.
  const bool trains = std::any_of(steps.begin(), steps.end(), [](const Step& s) { return !s.eval; });
  bool forwards = false, all_eval = true;
  for (const PhaseRange& r : t.ranges) {
    if (r.phase != Phase::kForward) continue;
    forwards = true;
    all_eval = all_eval && r.eval_tag;
  }
  if (!trains && !(forwards && all_eval)) {
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
  IntoOptimizerSteps(t, ctx, ddp, &steps);
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
    case Arrival::kDdpBackward: return "ddp_backward";
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

ProcessPhases CollectPhases(const Process& process, StringId phase_domain, const StringPool* strings) {
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
          PhaseRange r{push->time_ns, std::max(e.time_ns, push->time_ns), static_cast<Phase>(push->category),
                       push->name};
          if (strings != nullptr && r.phase == Phase::kForward) {
            const std::string_view name = strings->Get(push->name);
            r.eval_tag = name.size() >= 6 && name.substr(name.size() - 6) == "[eval]";
          }
          thread(e.thread).ranges.push_back(r);
          break;
        }
        case NvtxKind::kMark:
          if (e.category == static_cast<uint32_t>(Phase::kDataEnd))
            thread(e.thread).data_end_marks.push_back(e.time_ns);
          if (e.category == static_cast<uint32_t>(Phase::kDataLoader) ||
              e.category == static_cast<uint32_t>(Phase::kDataLoaderBatch))
            thread(e.thread).loader_marks.push_back({e.time_ns, e.name, static_cast<Phase>(e.category)});
          break;
        default: break;  // the shim records push/pop ranges only
      }
    }
  }
  for (auto& [key, t] : threads) {
    FinishPhaseThread(&t);
    out.threads.push_back(std::move(t));
  }
  return out;
}

void FinishPhaseThread(PhaseThread* t) {
  std::stable_sort(t->ranges.begin(), t->ranges.end(),
                   [](const PhaseRange& a, const PhaseRange& b) { return a.begin_ns < b.begin_ns; });
  std::sort(t->data_end_marks.begin(), t->data_end_marks.end());
  std::stable_sort(t->loader_marks.begin(), t->loader_marks.end(),
                   [](const LoaderMark& a, const LoaderMark& b) { return a.time_ns < b.time_ns; });
  std::array<std::vector<Interval>, kPhaseSlots> raw;
  t->count = {};
  t->total_ns = {};
  for (const PhaseRange& r : t->ranges) {
    raw[Slot(r.phase)].push_back({r.begin_ns, r.end_ns});
    ++t->count[Slot(r.phase)];
    t->total_ns[Slot(r.phase)] += r.end_ns - r.begin_ns;
  }
  for (size_t p = 0; p < kPhaseSlots; ++p) t->by_phase[p] = collector::Union(std::move(raw[p]));
}

StepSplit SplitSteps(const ProcessPhases& phases, bool ddp) {
  StepSplit out;
  for (const PhaseThread& t : phases.threads) SplitThread(t, ddp, &out);
  std::stable_sort(out.steps.begin(), out.steps.end(),
                   [](const Step& a, const Step& b) { return a.begin_ns < b.begin_ns; });
  return out;
}

}  // namespace trainprof::collector
