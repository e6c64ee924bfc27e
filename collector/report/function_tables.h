// The report's function tables of CPU samples (stats/functions.h; docs/report.md, "Functions"):
// their declarations (JSON functions, functions_by_process, functions_by_phase; CSV
// functions.csv, functions_by_process.csv, functions_by_phase.csv) and the rows Analyze puts into
// Report::tables. Present only when the trace has samples (`trainprof run --sample`); then the
// text report shows the merged table (at most --top rows, 25 without --top), the per-process one
// with --by-process and the per-phase one with --by-phase.
#pragma once

#include "collector/base/table.h"
#include "collector/model/model.h"
#include "collector/report/report.h"
#include "collector/stats/functions.h"

namespace trainprof::collector {

const TableDef& FunctionTable();           ///< functions
const TableDef& FunctionByProcessTable();  ///< functions_by_process: host, pid, rank first
const TableDef& FunctionByPhaseTable();    ///< functions_by_phase: phase first
Cells FunctionCells(const FunctionRow& r);

/// Rows of the text report's function table when --top is 0 (JSON and CSV have them all).
inline constexpr size_t kFunctionTextRows = 25;

/// Appends the function tables of the processes' summaries (their samples counted per function,
/// symbolized) to r->tables, each cut to --top (per process and per phase for those tables), when
/// the trace has samples; without samples, with --by-phase, an empty functions_by_phase whose
/// title says so.
void AddFunctionTables(const std::vector<ProcessSummary>& summaries, const ReportOptions& options, Report* r);

}  // namespace trainprof::collector
