// From the paths a user gives to the whole decoded trace: expand directories into their trace
// files (recursively: *.trace, and Kineto's *.pt.trace.json[.gz]), read each file, merge the images into processes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collector/model/model.h"
#include "collector/read/trace_reader.h"

namespace trainprof::collector {

struct TraceFileList {
  std::vector<std::string> files;   ///< each trace file once, in a stable order
  std::vector<std::string> errors;  ///< "PATH: reason" for paths that cannot be read
  /// "DIR: reason" for subdirectories that could not be searched; "PATH: a FIFO, not a trace
  /// file: skipped" for a FIFO, socket or device (given, or named *.trace in a directory);
  /// "PATH: a symbolic link loop (...): skipped" for a loop (given, or named *.trace).
  std::vector<std::string> warnings;
  /// The warnings counted by kind (symlink_loops, not_regular_files, unreadable_directories:
  /// model/losses.def), for the report's `stats`.
  LossCounts losses;
};

/// A file path is taken as it is (whatever its name) if it is a regular file; a directory is
/// searched recursively for regular files named *.trace, *.pt.trace.json or *.pt.trace.json.gz
/// (tensorboard_trace_handler's Kineto traces), sorted by path. Nothing is opened:
/// FIFOs, sockets, devices and symbolic link loops are warnings, never read.
/// `out/` and `out/pid-*.trace` give the same list:
/// a file reached twice is listed once.
TraceFileList FindTraceFiles(const std::vector<std::string>& paths);

/// Reads every file (damaged ones are reported in Trace::files and skipped where unusable) and
/// builds the process tree. Files are decoded in parallel, one per core (TRAINPROF_REPORT_THREADS
/// sets the number); the result does not depend on it. `options.cuda_sink` must be null (it
/// would be shared by the threads): a sink is per file (DecodeTraceFile).
Trace LoadTrace(const std::vector<std::string>& files, const ReadOptions& options = {});

/// The threads `trainprof report` and `export` may use: one per core, or TRAINPROF_REPORT_THREADS
/// (1 to 256; any other value is ignored). LoadTrace decodes that many files at once; Analyze
/// makes two of its tables on a second thread when it has more than one, or reads CUDA windows on
/// that many threads (ForEachCudaWindow: one of them the one that analyses them).
size_t ReportThreads();

/// One trace file already in memory: its bytes (read during the call only), and the path that
/// names it in Trace::files and in messages (it is never opened).
struct TraceBytes {
  std::string path;
  std::span<const uint8_t> bytes;
};

/// LoadTrace over files already in memory (tests, the fuzz targets in tests/fuzz/): the same
/// decoding (ReadTraceBytes) and the same merging into processes, without the file system.
Trace LoadTraceBytes(const std::vector<TraceBytes>& files, const ReadOptions& options = {});

}  // namespace trainprof::collector
