// The report's Processes table: one row per process (identity, tree, lifetime, exit, threads,
// NVTX misuse, GPU tracing state), the run's hosts and span, and the losses each process adds to
// the warnings (model/losses.def, per-process entries).
#pragma once

#include <cstddef>
#include <string>

#include "collector/report/report.h"
#include "collector/report/warnings.h"

namespace trainprof::collector {

/// Report::hosts, start_realtime_ns and span_ns: the span on the wall clock over the processes
/// whose start it knows (0: a damaged header with no other process of its host to place it); with
/// none, on CLOCK_MONOTONIC.
void SetRunSpan(const std::vector<ProcessSummary>& summaries, Report* r);

/// A process's row of the Processes table: its own fields (`info`, of its summary), its place in
/// the tree (`parent`: its index in the report, -1 for a root; `depth`) and its offset from r.start_realtime_ns (SetRunSpan first). Its tables (NVTX ranges,
/// CUDA, host operators) are the caller's.
ProcessRow ProcessRowOf(ProcessInfo info, int parent, int depth, const Report& r);

/// The losses of the process of summary `s` (`index` in the report, `who` its name in warnings,
/// `offset_ns` its start from the run's): its summary's, and its capture note.
void AddProcessLosses(LossLog* log, size_t index, const std::string& who, const ProcessSummary& s, uint64_t offset_ns);

}  // namespace trainprof::collector
