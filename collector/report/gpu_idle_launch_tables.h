// The report's tables of GPU idle time by kind per stream and of kernel launch statistics per
// kernel name (stats/gpu_idle_kinds.h, stats/kernel_launches.h; HTA's definitions, cited there and
// in docs/analysis.md): their declarations (JSON gpu_idle_by_kind, kernel_launches; CSV
// gpu_idle_by_kind.csv, kernel_launches.csv) and the rows Analyze puts into Report::tables.
#pragma once

#include "collector/base/table.h"
#include "collector/model/model.h"
#include "collector/report/report.h"
#include "collector/stats/gpu_idle_kinds.h"
#include "collector/stats/kernel_launches.h"

namespace trainprof::collector {

const TableDef& GpuIdleKindsTable();  ///< gpu_idle_by_kind
/// One stream of process `p`.
Cells GpuIdleKindsCells(const Process& p, const StreamIdleKinds& s);

const TableDef& KernelLaunchTable();  ///< kernel_launches
Cells KernelLaunchCells(const KernelLaunchRow& r);

/// Both tables, for Report::tables: idle kinds per process (tree order) and stream, launch
/// statistics over all processes cut to --top, from the records in `windows` (null: one window
/// over the trace's records). In the text report only when `has_cuda`. Reads only `trace` and
/// `windows` (Analyze runs it on another thread beside the per-process tables).
std::vector<TableRows> GpuIdleLaunchTables(const Trace& trace, const ReportOptions& options, bool has_cuda,
                                           const CudaWindows* windows = nullptr);

}  // namespace trainprof::collector
