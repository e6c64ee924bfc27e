// Training phases and steps of one process, from the ranges the Python shim records
// (format/trainprof/phases.h). Definitions and their reasons: docs/analysis.md, "Steps".
//
//   NVTX push/pop in domain "trainprof" ─► PhaseRange (completed ranges only, keyed by category)
//                                      ─► per thread: one IntervalSet per phase (union)
//   kDataWait ranges of a thread       ─► Step: [start of a data wait, start of the next data wait)
//
//   thread: |wait|fwd|bwd|opt|   |wait|fwd|bwd|opt|   |wait| + kDataEnd mark   (validation)   |wait|...
//           ^ step 0             ^ step 1             ^ epoch end: ends step 1, starts none ^ step 2
//
// On a thread that records optimizer steps, the step is the optimizer step: training steps that
// run none are micro-batches of the next one that does (gradient accumulation), and an optimizer
// step that runs forward and backward itself (optimizer.step(closure)) holds them.
//
// A thread with no data wait (batches sliced from a tensor) gets its steps from the loop's rhythm
// (LoopRhythm below): a step starts at each top-level forward that follows a backward or optimizer
// step, and its "data wait" is the unrecorded time between its last backward/optimizer step and
// the next step's forward:
//
//   thread: |fwd|fwd|bwd|opt| get_batch |fwd|fwd|bwd|opt| get_batch |fwd|fwd| |fwd|fwd|  (no backward)
//           ^ step 0        [ data wait ]^ step 1        [data wait] ^ eval   ^ eval
//
// A step's time is split into parts that never overlap: each instant goes to the innermost
// compute phase covering it (self time), except that data wait wins over everything and that all
// of a backward range is backward; the rest is "other". So Lightning's training_step (forward)
// keeps only what is not backward or optimizer inside it, and a closure run inside
// Optimizer.step is forward and backward, not optimizer.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "collector/base/intervals.h"
#include "collector/model/model.h"
#include "trainprof/phases.h"

namespace trainprof::collector {

using format::Phase;
inline constexpr size_t kPhaseSlots = static_cast<size_t>(Phase::kPhaseCount);

/// One completed phase range (push and pop seen, in domain "trainprof").
struct PhaseRange {
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  Phase phase = Phase::kNone;
  StringId name = 0;       ///< the range's name (compared, never interpreted, except `eval_tag`)
  bool eval_tag = false;   ///< a forward named "... [eval]" (under no_grad / eval(), by the shim)
};

/// A kDataLoader or kDataLoaderBatch mark: its name describes a DataLoader (dataloaders.h).
struct LoaderMark {
  uint64_t time_ns = 0;
  StringId name = 0;
  Phase phase = Phase::kNone;
};

/// The phase ranges of one thread of one process image.
struct PhaseThread {
  uint32_t image = 0;   ///< index into Process::images
  uint32_t thread = 0;  ///< index into TraceImage::threads
  uint32_t tid = 0;
  std::vector<PhaseRange> ranges;                 ///< by begin
  std::vector<uint64_t> data_end_marks;           ///< kDataEnd marks, by time
  std::vector<LoaderMark> loader_marks;           ///< kDataLoader and kDataLoaderBatch marks, by time
  std::array<IntervalSet, kPhaseSlots> by_phase;  ///< union of the ranges of each phase
  std::array<uint64_t, kPhaseSlots> count{};      ///< completed ranges per phase
  std::array<uint64_t, kPhaseSlots> total_ns{};   ///< summed durations per phase (not a union)
};

/// Every phase range of one process.
struct ProcessPhases {
  std::vector<PhaseThread> threads;  ///< threads with at least one phase range or mark
  bool empty() const { return threads.empty(); }
  uint64_t Count(Phase p) const;
  uint64_t TotalNs(Phase p) const;
  /// Union over all threads.
  IntervalSet Union(Phase p) const;
};

/// Sorts a thread's ranges and marks by time and makes what follows from its ranges: by_phase,
/// count, total_ns (a thread read back from a summary has its ranges and marks only).
void FinishPhaseThread(PhaseThread* t);

/// Phase ranges of a process. `phase_domain` is the StringId of "trainprof" (0: none recorded);
/// with `strings` (the trace's), forwards whose name ends in "[eval]" get PhaseRange::eval_tag.
ProcessPhases CollectPhases(const Process& process, StringId phase_domain, const StringPool* strings = nullptr);

/// The parts of a step (docs/analysis.md, "Step breakdown").
enum class Part : uint8_t { kDataWait, kForward, kBackward, kOptimizer, kCollective, kOther, kCount };
inline constexpr size_t kPartCount = static_cast<size_t>(Part::kCount);
const char* PartName(Part part);   ///< "data_wait", "forward", ...
const char* PartLabel(Part part);  ///< "data wait", "forward", ...

/// Where a rank reaches the point at which ranks synchronise in a step (docs/analysis.md, "Ranks").
/// kDdpBackward: a DistributedDataParallel process, whose ranks wait in DDP's gradient all-reduce
/// inside backward: the first collective recorded inside the step's backward, else its start.
enum class Arrival : uint8_t { kNone, kCollective, kBackward, kForwardEnd, kDdpBackward };
const char* ArrivalName(Arrival a);  ///< "collective", "backward", "forward_end", "ddp_backward", "none"

struct Step {
  uint32_t tid = 0;
  uint32_t epoch = 0;  ///< training epochs (ended by StopIteration) before this step on its thread
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  bool eval = false;                         ///< no backward or optimizer step on a thread that has them
  bool ended_by_phase = false;               ///< the thread's last step: ends at its last phase range
  bool by_rhythm = false;                    ///< found from the loop's rhythm (no DataLoader wait)
  bool profiler_step = false;                ///< a torch.profiler ProfilerStep#N span (imported traces)
  uint32_t data_waits = 1;                   ///< DataLoader waits merged into this step (zip of loaders)
  /// Micro-batches of this optimizer step: the steps a thread that records optimizer steps merged
  /// into it because they ran none (gradient accumulation), or its waits taken together before a
  /// backward each (a loop that fetches every micro-batch first). 1 for an ordinary step.
  uint32_t micro_batches = 1;
  uint32_t passes = 0;               ///< outermost backward ranges in the step (forward/backward passes)
  uint32_t passes_in_optimizer = 0;  ///< of them, inside an optimizer step (optimizer.step(closure))
  std::array<uint64_t, kPartCount> parts{};  ///< ns; they add up to the duration
  IntervalSet waits;                         ///< the data-wait time of this step
  Arrival arrival = Arrival::kNone;
  uint64_t arrival_ns = 0;  ///< CLOCK_MONOTONIC, when arrival != kNone
  uint64_t duration() const { return end_ns - begin_ns; }
  uint64_t part(Part p) const { return parts[static_cast<size_t>(p)]; }
};

struct StepSplit {
  std::vector<Step> steps;  ///< every thread's steps, by begin
  uint64_t data_waits = 0;  ///< kDataWait ranges (outermost)
  uint64_t epoch_ends = 0;  ///< of which StopIteration calls (followed by kDataEnd)
  uint64_t dropped = 0;     ///< last steps with no phase range after their data wait
  uint64_t rhythm_steps = 0;  ///< of the steps, those found from the loop's rhythm (train and eval)
  uint64_t rhythm_threads = 0;  ///< threads without data waits that have a backward (steps by rhythm)
  uint64_t profiler_steps = 0;  ///< of the steps, ProfilerStep#N spans (torch.profiler's own steps)
};

/// Steps of every thread with kDataWait ranges; on a thread without any, steps from the loop's
/// rhythm (forward → backward → optimizer step) when it has a backward (docs/analysis.md, "Steps").
/// A thread with kProfilerStep ranges (torch.profiler's ProfilerStep#N, from imported Kineto
/// traces) has those spans as its steps, unless one of them holds two data waits or more.
/// `ddp`: the process uses DistributedDataParallel (collectives.h), so a step with a backward
/// arrives at kDdpBackward, not at its first collective (the script's own dist.all_reduce for
/// logging comes after the ranks already waited).
StepSplit SplitSteps(const ProcessPhases& phases, bool ddp = false);

}  // namespace trainprof::collector
