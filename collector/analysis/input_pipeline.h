// The input pipeline of one training process: its DataLoader workers (or the main process itself
// with num_workers=0), measured from their phase ranges. Definitions: docs/analysis.md,
// "Input pipeline". The verdict and advice built on these numbers live in bottleneck.cc.
//
//   main process   |wait······|fwd|bwd|opt|wait·|fwd|bwd|opt|       waits: what the workers
//   worker 1       |start-up|fetch[getitem getitem ... collate]|   fetch[...]     are judged on
//   worker 2       |start-up|   fetch[getitem ...   collate]|   fetch[...]
//
//   busy %     = Σ |worker's fetches ∩ main's waits| / Σ |main's waits ∩ worker's life after start-up|
//   start-up   = a worker's start → its first fetch (fork/spawn, imports, worker_init_fn)
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "collector/base/intervals.h"
#include "collector/base/sample_stats.h"
#include "collector/model/model.h"
#include "collector/analysis/dataloaders.h"
#include "collector/analysis/training_steps.h"

namespace trainprof::collector {

/// Role the Python shim gives DataLoader worker processes.
inline constexpr const char* kWorkerRole = "DataLoader worker";

enum class Loading : uint8_t {
  kNone,         ///< no batch fetch recorded: workers not traced (no --follow-children) or not recording
  kWorkers,      ///< DataLoader workers fetched the batches
  kMainProcess,  ///< num_workers=0: the main process fetched them inside its waits
};
const char* LoadingName(Loading l);  ///< "none", "workers", "main_process"

/// Batch fetches of one process (a worker, or the main process).
struct FetchStats {
  uint64_t fetches = 0;           ///< kFetch ranges
  uint64_t fetch_ns = 0;          ///< summed kFetch durations
  uint64_t getitem_ns = 0;        ///< time in kGetItem inside fetches (union)
  uint64_t collate_ns = 0;        ///< time in kCollate inside fetches, not in kGetItem (union)
  uint64_t getitem_calls = 0;     ///< kGetItem ranges
  uint64_t getitem_total_ns = 0;  ///< their summed durations
  void Add(const FetchStats& o);
  /// Fetch time outside __getitem__ and collate_fn (sampler, __getitems__, iteration).
  uint64_t other_ns() const { return fetch_ns - std::min(fetch_ns, getitem_ns + collate_ns); }
  /// Shares of the fetch time (0 without fetch time).
  double getitem_percent() const { return Percent(static_cast<double>(getitem_ns), static_cast<double>(fetch_ns)); }
  double collate_percent() const { return Percent(static_cast<double>(collate_ns), static_cast<double>(fetch_ns)); }
  double other_percent() const { return Percent(static_cast<double>(other_ns()), static_cast<double>(fetch_ns)); }
  double mean_ns() const { return fetches ? static_cast<double>(fetch_ns) / fetches : 0; }
  double getitem_mean_ns() const { return getitem_calls ? static_cast<double>(getitem_total_ns) / getitem_calls : 0; }
  double items_per_batch() const { return fetches ? static_cast<double>(getitem_calls) / fetches : 0; }
};
/// The batch fetches of a process; with `within`, only the fetches that begin inside it (and the
/// items and collates inside those).
FetchStats MeasureFetches(const ProcessPhases& phases, const IntervalSet* within = nullptr);

struct WorkerStats {
  int process = -1;  ///< index into Trace::processes
  int32_t pid = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  FetchStats fetch;
  uint64_t startup_ns = 0;     ///< start → first fetch (→ end without fetches)
  uint64_t init_fn_calls = 0;  ///< kWorkerInit ranges (worker_init_fn)
  uint64_t init_fn_ns = 0;
  /// Started by multiprocessing's spawn method (a fresh interpreter: `--multiprocessing-fork` in
  /// its argv), which imports the program's modules again, rather than forked.
  bool spawned = false;
  uint64_t window_ns = 0;                       ///< the main's waits (steps in the statistics) while it was up
  uint64_t busy_ns = 0;                         ///< its fetches within that window
  std::optional<double> busy_percent;           ///< busy / window; none for an empty window
  std::optional<double> lifetime_busy_percent;  ///< fetch time / (end − end of start-up)
};

/// One DataLoader of the training process (dataloaders.h; docs/analysis.md, "Input pipeline").
struct LoaderStats {
  LoaderDescription description;
  bool feeds_training = false;  ///< some of its waits are the data waits of training steps
  uint64_t waits = 0;           ///< its kDataWait ranges in the main process (StopIteration included)
  uint64_t wait_ns = 0;         ///< their summed durations
  uint64_t training_waits = 0;  ///< of which inside training steps
  size_t worker_processes = 0;  ///< worker processes tied to it
  size_t concurrent_workers = 0;  ///< most of them alive at one time
  FetchStats fetch;             ///< its workers' fetches, or with num_workers=0 the main's inside its waits
  double mean_wait_ns() const { return waits ? static_cast<double>(wait_ns) / waits : 0; }
};

struct InputPipeline {
  Loading loading = Loading::kNone;
  size_t worker_processes = 0;       ///< worker processes seen (re-created workers count again)
  size_t other_workers = 0;          ///< worker processes alive during no training step (validation loaders)
  size_t concurrent_workers = 0;     ///< most worker processes alive at one time (≈ num_workers)
  std::vector<WorkerStats> workers;  ///< by start
  FetchStats fetch;                  ///< over the workers, or the main process's own fetches
  uint64_t window_ns = 0;            ///< Σ WorkerStats::window_ns
  uint64_t busy_ns = 0;              ///< Σ WorkerStats::busy_ns
  std::optional<double> busy_percent;
  uint64_t startup_ns = 0;  ///< Σ WorkerStats::startup_ns
  uint64_t init_fn_calls = 0;
  uint64_t init_fn_ns = 0;
  size_t spawned_workers = 0;            ///< of `workers`, those WorkerStats::spawned
  uint64_t startup_wait_ns = 0;          ///< the main's data wait (all training steps) while a worker started
  uint64_t startup_wait_counted_ns = 0;  ///< ... in the steps of the statistics
  /// The DataLoaders the shim named, those feeding training steps first (then by first use);
  /// empty without DataLoader marks. With them, `workers` are those of the feeding loaders.
  std::vector<LoaderStats> loaders;

  double fetch_mean_ns() const { return fetch.mean_ns(); }
  double getitem_mean_ns() const { return fetch.getitem_mean_ns(); }
  double items_per_batch() const { return fetch.items_per_batch(); }
  bool workers_recreated() const { return worker_processes > concurrent_workers; }
  /// Every loader feeding the training steps says persistent_workers=True (false without loaders).
  bool workers_persistent() const;
};

/// Inputs of one training process's input-pipeline analysis.
struct InputContext {
  int process = -1;                          ///< the training process (index into Trace::processes)
  const std::vector<bool>* training;         ///< whether each process is a training process
  IntervalSet waits_counted;                 ///< data waits of the steps in the statistics
  IntervalSet waits_all;                     ///< data waits of all training steps (warm-up included)
  IntervalSet steps;                         ///< all training steps (warm-up included)
};

/// The workers are the traced descendants of the training process (not descending into other
/// training processes) with the role kWorkerRole or kFetch ranges, alive during a training step:
/// the workers of a validation loader (started after the epoch's last step) are left out, and when
/// the workers are tied to DataLoaders (dataloaders.h), those of loaders feeding no training step.
InputPipeline AnalyzeInput(const RunView& run, const InputContext& ctx);

}  // namespace trainprof::collector
