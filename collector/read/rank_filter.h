// `trainprof report --rank R[,R...]`: the trace cut down to the processes of some ranks (DataLoader
// workers carry their rank's RANK variable, so they stay with it), as `export --rank` selects them
// (export/selection.h). The processes' tree links are remapped (a process whose parent is left out
// becomes a root), the files that held only left-out processes are dropped (a file with no usable
// image stays: its damage is still reported), and Trace::host_clocks keeps the rows of the hosts
// that remain, with the reference's.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "collector/model/model.h"

namespace trainprof::collector {

/// Keeps the processes whose rank is one of `ranks` (none: every process). Returns "" or, leaving
/// the trace as it was, what is wrong: "--rank 9: no process has rank 9 (ranks: 0-7)" (every
/// rank asked for must exist; runs of ranks as ranges; "(no process has a rank)" when none has one).
std::string KeepRanks(Trace* trace, const std::vector<int64_t>& ranks);

/// KeepRanks' error for the first of `ranks` that is not among the ranks `present`; "" if all are.
std::string MissingRank(const std::set<int64_t>& present, const std::vector<int64_t>& ranks);

}  // namespace trainprof::collector
