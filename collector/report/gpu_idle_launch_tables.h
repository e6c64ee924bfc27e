// The report's tables of GPU idle time by kind per stream and of kernel launch statistics per
// kernel name (stats/gpu_idle_kinds.h, stats/kernel_launches.h; HTA's definitions, cited there and
// in docs/analysis.md): their declarations (JSON gpu_idle_by_kind, kernel_launches; CSV
// gpu_idle_by_kind.csv, kernel_launches.csv) and the rows Analyze puts into Report::tables, merged
// from the processes' summaries (summary/gpu_ops.h makes their part).
#pragma once

#include "collector/base/table.h"
#include "collector/model/model.h"
#include "collector/report/report.h"
#include "collector/stats/gpu_idle_kinds.h"
#include "collector/stats/kernel_launches.h"
#include "collector/summary/process_summary.h"

namespace trainprof::collector {

const TableDef& GpuIdleKindsTable();  ///< gpu_idle_by_kind
/// One stream of the process `p`.
Cells GpuIdleKindsCells(const ProcessInfo& p, const StreamIdleKinds& s);

const TableDef& KernelLaunchTable();  ///< kernel_launches
Cells KernelLaunchCells(const KernelLaunchRow& r);

/// Both tables, for Report::tables, from the processes' summaries (their GpuOpsSummary): idle kinds
/// per process (in their order) and stream, launch statistics over all processes (each name's
/// launches added) cut to --top. In the text report only when `has_cuda`. `digests`: every image's
/// CUDA digest, in process and image order (the summaries'), which number the kernel names as the
/// kernel table does.
std::vector<TableRows> GpuIdleLaunchTables(const std::vector<ProcessSummary>& summaries,
                                           const std::vector<const CudaDigest*>& digests, const StringPool& strings,
                                           const ReportOptions& options, bool has_cuda);

}  // namespace trainprof::collector
