// The GPU parts of a process's steps: what the bottleneck analysis (its collectives and GPU idle:
// collectives.h, gpu_idle.h) and the GPU overlap rows (temporal breakdown, kernel categories and
// each step's communication: stats/gpu_overlap_sweep.h) take from one process's CUDA records. They
// need only that process's own steps, so they are made where the process is summarised
// (collector/summary/) and the merge reads no CUDA record for them.
//
//   ProcessFacts + ProcessPhases ─► CountSteps ─► StepsGpuSweep (window by window over the
//                                                 process's CUDA records) ─► StepsGpu
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "collector/analysis/collectives.h"
#include "collector/analysis/gpu_idle.h"
#include "collector/analysis/process_facts.h"
#include "collector/analysis/training_steps.h"
#include "collector/base/intervals.h"
#include "collector/model/cuda_window.h"
#include "collector/model/model.h"
#include "collector/stats/gpu_overlap_sweep.h"

namespace trainprof::collector {

/// Whether the bottleneck analysis takes a process as a training process: it waits on a
/// DataLoader, runs a backward (steps from the loop's rhythm), or has torch.profiler's steps.
bool IsTrainingProcess(const ProcessPhases& phases);

/// The step the statistics leave out as warm-up: the first training step, where a process has
/// kWarmupMinSteps training steps or more and did not start recording late (a --delay); null for
/// none (docs/analysis.md, "Steps").
const Step* WarmupStep(const StepSplit& split, bool recorded_from_delay);

/// A process's steps as the bottleneck analysis counts them (SplitSteps, WarmupStep).
struct CountedSteps {
  bool training = false;                ///< IsTrainingProcess; else the rest is empty
  StepSplit split;                      ///< SplitSteps of its phases
  std::vector<Interval> in_statistics;  ///< the training steps but the warm-up, by begin
  IntervalSet waits;                    ///< their data waits (union)
  /// Every step, training and evaluation, with its position among the process's steps (steps.csv's
  /// `step`), by begin: the steps of the kernel-category table's communication.
  std::vector<StepWindow> all;
};
CountedSteps CountSteps(const ProcessFacts& facts, const ProcessPhases& phases);

/// What a process's CUDA records give over its steps.
struct StepsGpu {
  /// A training process: its NCCL kernels over its steps in the statistics (the collective source,
  /// CollectiveInfoOf with its DDP backend) and its GPU idle over them (made whether or not the
  /// run has CUDA records; the analysis shows it only where some process has).
  NcclInSteps nccl;
  std::optional<GpuIdle> idle;
  /// A process with GPU activity: its temporal breakdown, kernel categories and, with
  /// communication, each step's.
  std::optional<GpuOverlap> overlap;
};

/// StepsGpu of every process of a trace, made window by window (model/cuda_window.h): each
/// process's sweeps see only its own records. Any cut into windows gives what one window gives.
///
///   StepsGpuSweep sweep(trace, run, /*whole=*/false);
///   for (size_t k = 0; k < windows.size(); ++k) sweep.Add(windows.window(k), data_of_k);
///   std::vector<StepsGpu> per_process = std::move(sweep).Results();
class StepsGpuSweep {
 public:
  /// `run`: the facts and phases of trace.processes, in its order (they must outlive the sweep);
  /// `whole`: one window over the images' own records (look-ups made from the images), else
  /// windows read again (each window's look-ups from its partners: CudaWindowData).
  StepsGpuSweep(const Trace& trace, const RunView& run, bool whole);
  ~StepsGpuSweep();
  StepsGpuSweep(const StepsGpuSweep&) = delete;
  StepsGpuSweep& operator=(const StepsGpuSweep&) = delete;

  /// One window; `data[p]`: its records of trace.processes[p].
  void Add(const TimeWindow& window, const std::vector<const CudaWindowData*>& data);
  /// One per process of the trace, in its order; `splits` (optional): set to each process's step
  /// split (empty for a process that does not train), which the bottleneck analysis can take
  /// instead of splitting its phases again (RunView::splits).
  std::vector<StepsGpu> Results(std::vector<StepSplit>* splits = nullptr) &&;

  struct ProcessSweeps;  // steps_gpu.cc

 private:
  const Trace& trace_;
  bool whole_;
  std::vector<std::unique_ptr<ProcessSweeps>> sweeps_;  // per process
};

/// The same over one window of the records that the trace's images keep.
std::vector<StepsGpu> SweepStepsGpu(const Trace& trace, const RunView& run,
                                    std::vector<StepSplit>* splits = nullptr);

}  // namespace trainprof::collector
