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
void SetRunSpan(const Trace& trace, Report* r);

/// Process `i`'s row of the Processes table, its offset from r.start_realtime_ns (SetRunSpan
/// first). Its tables (NVTX ranges, CUDA, host operators) and unbalanced count are the caller's.
ProcessRow ProcessRowOf(const Trace& trace, size_t i, const Report& r);

/// The losses of process `p` (`index` in the report, `who` its name in warnings), from it and its
/// row: the catalogue's per-process entries, in any order (LossLog orders the lines).
void AddProcessLosses(LossLog* log, size_t index, const std::string& who, const Process& p, const ProcessRow& row,
                      const Trace& trace);

}  // namespace trainprof::collector
