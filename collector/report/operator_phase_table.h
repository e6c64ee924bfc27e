// The operator table by training phase (collector/analysis/operator_phases.h): its declaration
// (JSON operators_by_phase, CSV operators_by_phase.csv, docs/report-schema.md) and the rows Analyze
// puts into Report::tables when operators recorded with `--trace=torch-ops` ran inside phases.
#pragma once

#include "collector/base/table.h"
#include "collector/report/report.h"

namespace trainprof::collector {

const TableDef& OperatorPhaseTable();  ///< operators_by_phase

/// Adds the table to `r` when the trace has trainprof-recorded operators inside phase ranges.
/// From the processes' summaries (their operators per phase; names in `strings`).
void AddOperatorPhaseTable(const std::vector<ProcessSummary>& summaries, const StringPool& strings,
                           const ReportOptions& options, Report* r);

}  // namespace trainprof::collector
