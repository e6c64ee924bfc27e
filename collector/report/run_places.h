// The first step of the report's merge: the processes of a run's summaries put in their places.
//
//   summaries (any order, from traces and summary files) ─► each process once (a process in two
//   inputs: the first kept, said) ─► parents linked (from each summary's place; a process
//   summarised apart from its parent by its ppid) ─► a child its parent's file alone made up
//   ("not recorded") gives way to the child's own summary, which takes the exit status the
//   parent's wait saw ─► roles named on the linked tree (read/process_tree.h RoleOf) ─► every host
//   on one clock (analysis/host_clocks.h EstimateHostClocks, from every process) ─► tree order
//   (read/process_tree.h TreeOrder) ─► cut to --rank (read/rank_filter.h's rule: a process whose
//   parent is left out becomes a root; the files and host rows of left-out processes go)
//
// What one run over all the trace files gives (BuildProcesses, AlignHostClocks, KeepRanks), from
// summaries made of any split of the files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/analysis/host_clocks.h"
#include "collector/report/report.h"

namespace trainprof::collector {

/// The processes in report order with their tree, the files and hosts' clocks that remain.
struct RunPlaces {
  std::vector<ProcessSummary> summaries;  ///< in tree order; facts.children and start_realtime_ns set
  std::vector<StepSplit> splits;          ///< one per summary where every process had one, else empty
  std::vector<int> parent;                ///< per summary: its parent's index, -1 for a root
  std::vector<int> depth;
  std::vector<FileStatus> files;
  HostClockEstimate clocks;               ///< clocks cut to the remaining hosts and the reference
  std::vector<std::string> warnings;      ///< "pid 7 on node-a is in two of the inputs ...", each
};

/// Puts the processes of *run (consumed) in their places (see the file comment), cut to `ranks`
/// (none: every process). Throws std::invalid_argument where a rank of `ranks` has no process
/// (read/rank_filter.h MissingRank's message).
RunPlaces PlaceRun(RunSummaries* run, const std::vector<int64_t>& ranks);

}  // namespace trainprof::collector
