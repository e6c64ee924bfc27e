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

/// The rows of the trainprof-recorded operators (ImageSource::kTrainprof) of `trace` when some of
/// them ran inside a phase range: by phase (in kPhaseLabels' order, "other" last), then self time descending, then
/// name; at most `top` rows per phase (0: all), `*omitted` the rest. Empty otherwise.
std::vector<OperatorPhaseRow> OperatorsByPhase(const Trace& trace, size_t top, size_t* omitted);

}  // namespace trainprof::collector
