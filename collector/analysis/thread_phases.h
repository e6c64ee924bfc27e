// The training phase at a time on a thread, for the by-phase splits: the function table of CPU
// samples (`trainprof run --sample`; stats/functions.h) and the operator table of
// `--trace=torch-ops` (operator_phases.h); docs/report.md, "Functions" and "Operators". The
// phase is the innermost phase range (training_steps.h, the shim's ranges in domain "trainprof")
// of that thread that holds the time. Innermost, so that a DataLoader worker's sample inside
// `__getitem__` inside a batch fetch is "getitem", and one in the main process's data wait with
// num_workers=0 is the fetch, item or collate it was in; a time outside every phase range is
// "other" to the tables.
//
//   per thread: ranges by (begin, -end) ──sweep with a stack──► disjoint segments [b, e) → phase
//   a time t ──binary search──► the segment holding t
//
// Phase labels, in the tables' order (kPhaseLabels): data_wait, fetch, getitem, collate,
// worker_init, forward, training_step, validation_step, backward, optimizer (Optimizer.step and
// zero_grad), collective, checkpoint, dataloader_iter, init_process_group. Ranges that overlap
// without nesting (the shim's are nested) are cut at their parent's end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

#include "collector/model/model.h"
#include "trainprof/phases.h"

namespace trainprof::collector {

/// The label a phase is shown with ("forward"), "" for a phase that is no span of work (marks,
/// kProfilerStep, kNone).
std::string_view PhaseLabel(format::Phase phase);

/// Every label PhaseLabel gives, in the order the operator table lists phases (the function
/// table orders them by their samples, these breaking ties).
inline constexpr std::string_view kPhaseLabels[] = {
    "data_wait", "fetch", "getitem", "collate", "worker_init", "forward", "training_step", "validation_step",
    "backward", "optimizer", "collective", "checkpoint", "dataloader_iter", "init_process_group"};

/// The index of `label` in kPhaseLabels; its size for any other label ("other").
size_t PhaseLabelRank(std::string_view label);

class ThreadPhases {
 public:
  /// The phase segments of every thread with phase ranges in `trace` (its NVTX events must have
  /// been kept: KeepNvtx::kPhases).
  explicit ThreadPhases(const Trace& trace);
  /// The same for trace.processes[process] only (At answers "" for the others).
  ThreadPhases(const Trace& trace, size_t process);
  /// The phase of process `process`, image `image`, thread index `thread` at `t_ns` (a sample's
  /// time, an operator call's start): a label of kPhaseLabels, "" outside every phase range.
  std::string_view At(size_t process, size_t image, uint32_t thread, uint64_t t_ns) const;

 private:
  struct Segment {
    uint64_t begin_ns = 0;
    uint64_t end_ns = 0;
    std::string_view phase;
  };
  void AddProcess(const Trace& trace, size_t process);
  std::map<std::tuple<size_t, size_t, uint32_t>, std::vector<Segment>> threads_;
};

}  // namespace trainprof::collector
