// The report's NVTX range and mark tables: each process's range statistics (the reader's
// summaries, stats/nvtx_stats.h), names grouped by one decision over every table
// (base/name_groups.h), the merged table, and the marks.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/report/report.h"

namespace trainprof::collector {

/// Sets r's merged tables (nvtx_ranges, nvtx_marks, their omitted counts at options.top) and the
/// merged table's denominator (nvtx_ranges_wall_ns, nvtx_ranges_processes: the processes with
/// ranges, docs/report.md "Time (%)"); returns each process's table in display order, uncut.
/// `summaries`: the processes' summaries, in report order (their NVTX ranges are moved out; each
/// table's denominator is the process's recorded_ns); `names`: the pool their names are in, into
/// which grouped names are interned.
std::vector<RangeRows> BuildRangeTables(const ReportOptions& options, std::vector<ProcessSummary>* summaries,
                                        StringPool* names, Report* r);

}  // namespace trainprof::collector
