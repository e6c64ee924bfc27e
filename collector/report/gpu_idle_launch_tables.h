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
/// statistics over all processes cut to --top, from the trace's records (one window). In the text
/// report only when `has_cuda`. Reads only `trace` (Analyze runs it on another thread beside the
/// per-process tables). `digests`: every image's CUDA digest, in process and image order (the
/// processes' summaries'), which number the kernel names as the kernel table does.
/// `unlaunched` (optional): set to each process's GPU ops whose launching call is not in the trace.
std::vector<TableRows> GpuIdleLaunchTables(const Trace& trace, const std::vector<const CudaDigest*>& digests,
                                           const ReportOptions& options, bool has_cuda,
                                           std::vector<UnlaunchedOps>* unlaunched = nullptr);

/// The same two tables fed window by window from windows read again (CudaWindows::Read, not
/// whole()), each window's look-ups made from its partners (its enter times the window's own,
/// CudaWindowData::Enter, shared with the other analyses): for the one pass over the windows that
/// feeds every windowed analysis (report.cc).
///
///   GpuIdleLaunchSweep sweep(trace);
///   for (size_t k = 0; k < windows.size(); ++k) sweep.Add(windows.window(k), data_of_k);
///   std::vector<TableRows> tables = std::move(sweep).Tables(options, has_cuda);
class GpuIdleLaunchSweep {
 public:
  explicit GpuIdleLaunchSweep(const Trace& trace);

  /// One window; `data[p]`: its records of trace.processes[p].
  void Add(const TimeWindow& window, const std::vector<const CudaWindowData*>& data);
  /// The tables, as GpuIdleLaunchTables gives them.
  std::vector<TableRows> Tables(const std::vector<const CudaDigest*>& digests, const ReportOptions& options,
                                bool has_cuda, std::vector<UnlaunchedOps>* unlaunched = nullptr) &&;

 private:
  const Trace& trace_;
  std::vector<IdleKindsSweep> idle_;                       // per process
  KernelLaunchSweep launch_;
};

}  // namespace trainprof::collector
