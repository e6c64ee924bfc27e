// The losses of the trace files themselves, before any process: damaged, unusable and truncated
// files, each file's counters (model/losses.def), one directory holding several runs, and the
// children not shown.
#pragma once

#include "collector/report/report.h"
#include "collector/report/warnings.h"

namespace trainprof::collector {

/// Adds the files' losses of `trace` to `log`, and counts Report::usable_files and damaged_files.
void AddFileLosses(const Trace& trace, LossLog* log, Report* r);

}  // namespace trainprof::collector
