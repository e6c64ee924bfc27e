// Several ranks: per-rank step time and compute, and the straggler — the rank the others wait
// for. Definitions and thresholds: docs/analysis.md, "Ranks and the straggler".
//
//   step k     rank 0  |wait|fwd|··········|bwd (waits in the all-reduce)···|opt|
//              rank 1  |wait|fwd|extra work|bwd|opt|
//                                ^ arrival 0 ^ arrival 1: lateness of rank 1 = arrival 1 − arrival 0
//
// Steps are matched by index (the k-th training step of every rank); a rank's arrival is where DDP
// synchronises: its first collective in the step, else the start of its backward, else the end of
// its forward. Ranks on one host share CLOCK_MONOTONIC; across hosts arrivals are put on
// CLOCK_REALTIME with each process's (realtime, monotonic) start pair.
//
// The straggler is named on consistent lateness only: median lateness at or above the threshold
// and last in at least kStragglerLastShare of the matched steps. A rank that is latest on average
// only because of a few late steps (a checkpoint save, a GC pause) gets those steps listed instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collector/analysis/training_steps.h"

namespace trainprof::collector {

/// What the straggler analysis needs of one training step.
struct RankStep {
  Arrival arrival = Arrival::kNone;
  uint64_t arrival_ns = 0;  ///< CLOCK_MONOTONIC of the rank's host
  uint64_t sync_ns = 0;     ///< backward + collective time of the step
};

/// One rank's training steps (evaluation steps left out), in order.
struct RankInput {
  int64_t rank = 0;
  int32_t pid = 0;
  std::string host;
  int64_t realtime_offset_ns = 0;  ///< start_realtime_ns − start_ns of the process (RealtimeOffset, base/clock_offset.h)
  std::vector<RankStep> steps;
  double mean_step_ns = 0;     ///< over the steps in its statistics
  double mean_compute_ns = 0;  ///< forward + backward + optimizer
  double mean_data_wait_ns = 0;
  /// Whether the rank meets the others inside its steps: it uses DistributedDataParallel (or
  /// FSDP), runs a collective or NCCL kernels in its steps. false: each step is its own (an
  /// ensemble, a sweep, replicas trained apart under one launcher), and no rank waits for another.
  bool synchronises = true;
};

/// A matched step in which a rank was late by the straggler threshold or more.
struct LateStep {
  uint64_t train_step = 0;  ///< k: index among the rank's training steps
  uint64_t lateness_ns = 0;
};

/// Share of the matched steps (0..1) in which the straggler must arrive last (docs/analysis.md).
inline constexpr double kStragglerLastShare = 0.5;
/// Late steps listed per rank (the latest first); RankRow::late_steps counts them all.
inline constexpr size_t kLateStepsListed = 3;

struct RankRow {
  int64_t rank = 0;
  int32_t pid = 0;
  std::string host;
  uint64_t steps = 0;
  double mean_step_ns = 0;
  double mean_compute_ns = 0;
  double mean_data_wait_ns = 0;
  std::string arrival;                     ///< the arrival kind of most matched steps
  std::optional<double> mean_lateness_ns;  ///< none without matched steps
  std::optional<double> median_lateness_ns;
  uint64_t last_steps = 0;                           ///< matched steps in which it arrived last (and late)
  std::optional<double> last_share;                  ///< last_steps / matched steps (0..1); none without
  uint64_t late_steps = 0;                 ///< matched steps late by the straggler threshold or more
  std::vector<LateStep> late_step_list;    ///< the kLateStepsListed latest of them, latest first
  std::optional<double> wait_ns;                     ///< mean backward+collective beyond the straggler's
  std::vector<std::optional<uint64_t>> lateness_ns;  ///< per training step index k (matched ones)
};

struct RankSync {
  std::vector<RankRow> ranks;            ///< by rank
  std::string clock;                     ///< "monotonic" (one host) or "realtime" (several hosts)
  uint64_t matched_steps = 0;            ///< steps compared (all ranks have an arrival)
  bool warmup_skipped = false;           ///< step 0 left out (5 or more steps per rank)
  double mean_step_ns = 0;               ///< mean of the ranks' mean steps
  double late_threshold_ns = 0;          ///< max(straggler_step_percent of mean_step_ns, straggler_min_ns)
  int latest = -1;  ///< index into ranks: the straggler (or the drifting rank), else the largest mean lateness
  bool straggler = false;                ///< latest is a straggler (consistent lateness, see above)
  std::vector<int64_t> duplicate_ranks;  ///< ranks seen in several processes: the one with most steps kept
  /// Several hosts: ranks left out of the comparison because their host has no wall clock (damaged
  /// headers) and shares no instant with the reference (Trace::host_clocks, source "unknown").
  std::vector<int64_t> unplaced_ranks;
  /// Several hosts: the largest uncertainty of the compared ranks' hosts' clocks (host_clocks.h);
  /// when it is the lateness threshold or more, no straggler is named (straggler false).
  uint64_t clock_uncertainty_ns = 0;
  bool clocks_too_uncertain = false;
  /// Some rank meets the others inside its steps (RankInput::synchronises). false: the ranks train
  /// apart; no straggler is named and no rank waits (wait_ns none); lateness is only how far apart
  /// their steps run.
  bool synchronised = true;
  /// The ranks synchronise, yet the candidate's (largest median) lateness is a mean step or more
  /// at the median, or grows by a mean step or more from the first third of the matched steps to
  /// the last: their steps drift apart rather than meet (steps matched across a restart, a rank
  /// that skips steps), so no straggler is named and no rank waits.
  bool drift = false;
  /// The straggler candidate's (largest median lateness) mean lateness over the first and the last
  /// third of the matched steps (ns; 0 with fewer than 3 matched steps).
  double lateness_head_ns = 0, lateness_tail_ns = 0;
};

/// Matches steps across ranks (at least two) and finds the straggler: the rank with the largest
/// median lateness when that median is ≥ straggler_step_percent of the mean step and ≥
/// straggler_min_ns and the rank arrived last in ≥ kStragglerLastShare of the matched steps; none
/// where the ranks do not synchronise in a step or drift apart (RankSync::synchronised, drift).
RankSync AnalyzeRanks(std::vector<RankInput> ranks, size_t warmup_min_steps, double straggler_step_percent,
                      uint64_t straggler_min_ns);

}  // namespace trainprof::collector
