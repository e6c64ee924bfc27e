// The losses of the trace files themselves, before any process: damaged, unusable and truncated
// files, each file's counters (model/losses.def), one directory holding several runs, and the
// children not shown.
#pragma once

#include "collector/report/report.h"
#include "collector/report/warnings.h"

namespace trainprof::collector {

/// Adds the losses of `files` to `log`, and counts Report::usable_files and damaged_files;
/// `runs`: (path, run id) of every file of a process (a directory with the files of several runs
/// is said); `not_recorded_omitted`: children known from fork records only, left out.
void AddFileLosses(const std::vector<FileStatus>& files,
                   const std::vector<std::pair<std::string, std::string>>& runs, size_t not_recorded_omitted,
                   LossLog* log, Report* r);

}  // namespace trainprof::collector
