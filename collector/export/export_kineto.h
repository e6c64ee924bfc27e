// `trainprof export --format kineto -o DIR`: the trace as torch.profiler (Kineto) JSON traces, one
// file per rank (per process where no selected process has a rank), as
// `torch.profiler.tensorboard_trace_handler` writes them, so that Holistic Trace Analysis
// (`TraceAnalysis(trace_dir=DIR)`), TensorBoard's profiler plugin and Perfetto open them.
//
//   file name    <host>_<pid>.<ms>.pt.trace.json[.gz]: the rank's (or process's) host and pid, and
//                its start in ms since the epoch (tensorboard_trace_handler: worker name
//                "<hostname>_<pid>", then time.time_ns() // 1e6 at the time of writing)
//   top level    schemaVersion 1; distributedInfo {"rank": R, "world_size": W} first (HTA finds a
//                file's rank with the regex "rank":\s+(\d+) on the file's first lines: written with
//                a space after the colon, before any event); trainprof_origin [{"trace": file
//                name, "host", "pid", "image", "start_monotonic_ns", "boot_id"}, ...] on one line:
//                the trainprof trace images it was made from (read/exported_copies.h: a report
//                given both counts each process once; HTA and torch ignore it); deviceProperties (id, name,
//                totalGlobalMem, computeMajor/Minor, numSms); baseTimeNanoseconds (realtime ns of
//                ts 0: the run's start, the same in every file of one export); traceEvents
//   traceEvents  "ts"/"dur" in µs with 3 decimals (ns exact) after baseTimeNanoseconds:
//     NVTX push/pop and start/end ranges    "X" cat user_annotation on their thread (trainprof's
//                                           phase ranges keep torch.profiler's names)
//     NVTX marks                            "i" cat user_annotation ("s": "t")
//     steps (training_steps.h)              "X" cat user_annotation "ProfilerStep#N", N from 0,
//                                           unless the process has ProfilerStep ranges of its own
//     host_ops                              "X" cat cpu_op / python_function
//     CUDA API calls (returned)             "X" cat cuda_runtime / cuda_driver on the calling
//                                           thread; args External id, cbid, correlation
//     kernels, memcpys, memsets, syncs      "X" cat kernel / gpu_memcpy / gpu_memset / cuda_sync,
//                                           pid = device, tid = stream (as Kineto); args External
//                                           id, device, context, stream, correlation, and grid,
//                                           block, registers per thread, shared memory (kernels),
//                                           bytes, memory bandwidth (GB/s) (copies, memsets)
//     launch → GPU work                     flow "s"/"f" cat ac2g, id = correlation
//     metadata                              process_name / process_labels / thread_name "M"
// Left out: process events (fork, exec, exit), GPU status and capture records, CUPTI overheads,
// calls that never returned. Output is streamed as export_chrome.h's; docs/kineto.md, "Writing".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collector/base/output_sink.h"
#include "collector/export/export_progress.h"
#include "collector/export/selection.h"
#include "collector/export/time_axis.h"
#include "collector/model/model.h"

namespace trainprof::collector {

/// One training step of a process, for its "ProfilerStep#N" span (from the step analysis,
/// collector/analysis/training_steps.h; the launcher converts them: the export does not analyse).
struct StepSpan {
  uint64_t begin_ns = 0;  ///< the process's CLOCK_MONOTONIC (its images' time axis)
  uint64_t end_ns = 0;
  uint32_t tid = 0;       ///< the thread the step ran on
  uint64_t number = 0;    ///< N of ProfilerStep#N
};

/// One output file and what goes into it.
struct KinetoFile {
  std::string name;               ///< file name, no directory
  std::vector<size_t> processes;  ///< indices into Trace::processes, the rank's (or the one) first
  std::optional<int64_t> rank;
  std::optional<int64_t> world_size;
};

struct KinetoPlan {
  std::vector<KinetoFile> files;  ///< by rank, then (no ranks) in the trace's process order
  /// Selected processes without a rank, nor an ancestor with one, in an export with ranks: HTA takes
  /// a file without distributedInfo as rank 0, so they are left out (select them alone with --pid).
  std::vector<size_t> left_out;
};

/// Which files the export writes: one per rank of the selected processes (a process without a rank
/// goes with its nearest ancestor that has one), or one per selected process when none has a rank.
/// Names end in ".pt.trace.json", or ".pt.trace.json.gz" with `gzip`.
KinetoPlan PlanKinetoFiles(const Trace& trace, const Selection& selection, bool gzip);

struct KinetoExportStats {
  uint64_t events = 0;     ///< trace events written (metadata included)
  uint64_t cpu_ops = 0;    ///< host_ops written (cpu_op and python_function)
  uint64_t steps = 0;      ///< ProfilerStep#N spans written from `steps`
  uint64_t gpu_ops = 0;    ///< kernels, memcpys, memsets, syncs
  uint64_t flows = 0;      ///< ac2g pairs
  /// Files whose NVTX events could not be read again as they were loaded (read/nvtx_stream.h).
  std::vector<std::string> problems;
};

/// Writes one file of the plan into `out`. `steps`: by index of Trace::processes (may be shorter:
/// no steps). `progress` (may be null) gets `progress_base` + the events written, at each flush.
/// Never fails by itself; `out` remembers write errors (OutputSink::Close()).
KinetoExportStats ExportKineto(const Trace& trace, const TimeAxis& axis, const Selection& selection,
                               const KinetoFile& file, const std::vector<std::vector<StepSpan>>& steps,
                               OutputSink* out, ExportProgress* progress = nullptr, uint64_t progress_base = 0);

}  // namespace trainprof::collector
