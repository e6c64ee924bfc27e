// The operator table split by training phase (`trainprof run --trace=torch-ops` with the Python
// shim's phases): each operator call counted in the phase it ran in, the innermost phase range of
// its thread containing its start (thread_phases.h, the same labels as the function table's
// --by-phase; none: "other"). Calls, self and total
// time as the operator table (collector/stats/host_ops.h: the tree over all the image's calls, so a
// call's self time is the same here and there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/model/model.h"

namespace trainprof::collector {

/// One (phase, operator) row.
struct OperatorPhaseRow {
  std::string phase;  ///< a label of kPhaseLabels (thread_phases.h: "data_wait", "getitem", "forward", ...), or "other"
  std::string name;
  uint64_t calls = 0, self_ns = 0, total_ns = 0;
};

/// One process's calls of one operator in one phase: what the table merges (its share of a
/// report's summaries, collector/summary/).
struct OperatorPhaseStat {
  std::string phase;  ///< a label of kPhaseLabels, "" outside every phase range
  StringId name = 0;
  uint64_t calls = 0, self_ns = 0, total_ns = 0;
  bool operator==(const OperatorPhaseStat&) const = default;
};

/// The trainprof-recorded operators (ImageSource::kTrainprof) of trace.processes[process] per
/// (phase, name), by phase label then name id.
std::vector<OperatorPhaseStat> ProcessOperatorPhases(const Trace& trace, size_t process);

/// The rows of the processes of these stats (names in `strings`) when some call ran inside a
/// phase range, as OperatorsByPhase gives them.
std::vector<OperatorPhaseRow> MergeOperatorPhases(const std::vector<const std::vector<OperatorPhaseStat>*>& per_process,
                                                  const StringPool& strings, size_t top, size_t* omitted);

/// The rows of the trainprof-recorded operators (ImageSource::kTrainprof) of `trace` when some of
/// them ran inside a phase range: by phase (in kPhaseLabels' order, "other" last), then self time descending, then
/// name; at most `top` rows per phase (0: all), `*omitted` the rest. Empty otherwise.
std::vector<OperatorPhaseRow> OperatorsByPhase(const Trace& trace, size_t top, size_t* omitted);

}  // namespace trainprof::collector
