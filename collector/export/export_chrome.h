// `trainprof export --format chrome`: the trace as Chrome Trace Event JSON, the format Perfetto
// (ui.perfetto.dev), chrome://tracing and torch.profiler's exported traces use.
//
//   Trace ──ExportChrome()──► {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}
//
// Events (Trace Event Format, https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU):
//   process_name / thread_name / process_sort_index metadata ("M"), one process per traced pid
//   NVTX push/pop ranges          complete events "X" on their thread, cat = domain ("nvtx" for
//                                 the default domain, "trainprof" for the training phases)
//   NVTX start/end ranges         async events "b"/"e" with id = range id (they may cross threads)
//   NVTX marks                    thread-scoped instants "i"
//   fork / exec / exit            process-scoped instants "i", cat "process"
//   CUDA API calls, kernels,      as torch.profiler's traces show them: export_chrome_cuda.h
//   memcpys, memsets, launch flows
// Times: "ts"/"dur" in microseconds with nanosecond precision (3 decimals), on the axis of
// time_axis.h (every host's CLOCK_MONOTONIC mapped onto CLOCK_REALTIME through its first file's
// (realtime, monotonic) pair, so ranks on several hosts share one axis; 0 = the run's start).
// otherData.start_realtime_ns gives the wall-clock time of ts = 0.
//
// Output is streamed (names are escaped once per distinct string), and NVTX events are read as they
// are written (nvtx_walk.h): memory is the loaded trace without its NVTX events, the ranges open at
// once and the CUDA records (kept), whatever the size of the JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/base/output_sink.h"
#include "collector/export/export_progress.h"
#include "collector/export/selection.h"
#include "collector/model/model.h"

namespace trainprof::collector {

struct ChromeExportStats {
  uint64_t events = 0;      ///< trace events written (metadata included)
  uint64_t unmatched = 0;   ///< NVTX pops/ends without a begin, ranges never closed (not written)
  uint64_t cuda_api_calls = 0;  ///< CUDA API calls written (export_chrome_cuda.h)
  uint64_t gpu_ops = 0;         ///< kernels, memcpys and memsets written
  uint64_t flows = 0;           ///< launch → GPU work flow links
  /// Files whose NVTX events could not be read again as they were loaded (read/nvtx_stream.h):
  /// one line each, for the caller's warnings.
  std::vector<std::string> problems;
};

/// Writes `trace` as Chrome Trace Event JSON into `out`. Never fails by itself; `out` remembers
/// write errors (OutputSink::Close()).
ChromeExportStats ExportChrome(const Trace& trace, OutputSink* out);

/// The same, of the processes and the window `selection` keeps (selection.h); `progress` (may be
/// null) is told the events written at each flush.
ChromeExportStats ExportChrome(const Trace& trace, OutputSink* out, const Selection& selection,
                               ExportProgress* progress);

}  // namespace trainprof::collector
