// What the bottleneck analyses read of a run besides its CUDA records, process by process: each
// process's facts (identity, place in the tree, lifetime, settings) and training phases
// (training_steps.h). A report makes them once per process into its summary (collector/summary/)
// and runs the analyses on the summaries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collector/analysis/capture_note.h"
#include "collector/analysis/training_steps.h"
#include "collector/model/model.h"

namespace trainprof::collector {

struct StepsGpu;  // steps_gpu.h

struct ProcessFacts {
  int32_t pid = 0;
  std::string host;
  std::optional<int64_t> rank;
  std::string role;
  /// Its children's indices in the run (the process tree: read/process_tree.h), set by the merge.
  std::vector<int> children;
  uint64_t start_ns = 0;           ///< CLOCK_MONOTONIC
  uint64_t end_ns = 0;             ///< CLOCK_MONOTONIC
  uint64_t start_realtime_ns = 0;  ///< CLOCK_REALTIME at start_ns (0: unknown)
  /// TRAINPROF_DDP of its environment: the DistributedDataParallel backend, "" when unnamed;
  /// nullopt without DDP (collectives.h).
  std::optional<std::string> ddp_backend;
  bool recorded_from_delay = false;  ///< capture_note.h RecordedFromDelay
  /// Recording limited to capture ranges or a window: the intervals captured (capture_note.h).
  std::optional<std::vector<CaptureInterval>> captured;
  bool kineto = false;   ///< read from a torch.profiler (Kineto) trace
  bool spawned = false;  ///< started by multiprocessing's spawn (an image with --multiprocessing-fork)
  bool python = false;   ///< some image ran an executable named python*
  std::string python_shim_off;  ///< python_shim_note.h PythonShimOff
  bool cuda = false;            ///< some CUDA record (calls, GPU activity or a GPU status)
  bool operator==(const ProcessFacts&) const = default;
};

/// The facts of trace.processes[i] (children from its tree).
ProcessFacts FactsOf(const Trace& trace, size_t i);

/// The phases of trace.processes[i] (CollectPhases with the trace's phase domain, eval tags set).
ProcessPhases PhasesOf(const Trace& trace, size_t i);

/// A run's processes as the analyses read them, by process index; names in `strings`; the hosts'
/// clocks as AlignHostClocks found them (analysis/host_clocks.h; empty on one host).
struct RunView {
  std::vector<const ProcessFacts*> facts;
  std::vector<const ProcessPhases*> phases;
  /// What each process's CUDA records give over its steps (steps_gpu.h: its collectives, GPU idle);
  /// empty: none made (the analysis then has no GPU parts).
  std::vector<const StepsGpu*> gpu;
  /// Each process's SplitSteps of its phases where already made (StepsGpuSweep::Results); empty:
  /// the analysis splits them.
  std::vector<const StepSplit*> splits;
  const StringPool* strings = nullptr;
  const std::vector<HostClock>* host_clocks = nullptr;
  const std::string* clock_reference = nullptr;
  size_t size() const { return facts.size(); }
};

}  // namespace trainprof::collector
