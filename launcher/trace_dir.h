// What `trainprof run` does with the output directory after the command ended: record how the
// root process ended in its trace header, and sum up the directory in one line.
//
// The root process's own library cannot always record its end: a kill -9 or a signal leaves
// FileHeader::end_kind at kNone. The launcher saw the waitpid status, so it patches
// end_kind / end_code (and end_monotonic_ns if still 0) in the header of the root pid's last image
// (pid-<PID>[.<N>].trace with the highest image_index), in place with pwrite. Layout:
// format/trainprof/trace_format.h, FileHeader.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainprof::launcher {

struct TraceDirSummary {
  size_t files = 0;      ///< *.trace files directly in the directory (of the run asked for)
  size_t processes = 0;  ///< distinct processes of those: (pid namespace, pid, start time) from
                         ///< valid headers; exec'd images of one process count once
  uint64_t bytes = 0;    ///< total size of those files
  /// "PATH: a FIFO, not a trace file: skipped" for each FIFO, socket or device named *.trace
  /// (never opened); symbolic links are left out without a word, as not written by trainprof.
  std::vector<std::string> skipped;
  size_t other_files = 0;  ///< *.trace files of other runs (another run id, or none), when a
                           ///< run id was asked for
};

/// "a FIFO", "a socket", "a character device"... for the file type bits of st_mode.
const char* FileKind(mode_t mode);

/// Opens path (flags: O_RDONLY or O_RDWR) if it is a regular file, never blocking: a FIFO,
/// socket, device or symbolic link is not opened at all (lstat first), and one swapped in after
/// that check is closed again (O_NONBLOCK, O_NOFOLLOW, then fstat). Returns the fd, or -1 with
/// errno set; *kind is then the st_mode of the non-regular file found (0 if none was found).
int OpenRegularFile(const std::string& path, int flags, mode_t* kind);

/// Counts the *.trace files of `dir`; with a `run_id` (32 hex digits, FileHeader::run_id) only
/// those of that run, the others in other_files. A missing directory is an empty summary.
TraceDirSummary SummarizeTraceDir(const std::string& dir, const std::string& run_id = "");

/// Writes the end of process `pid` (a waitpid status) into the header of its last trace image in
/// `dir`, and its end time `reaped_ns` (CLOCK_MONOTONIC when it was reaped) unless the library
/// wrote one already. Only touches files whose header has the trace magic and pid `pid`; never
/// creates one. With a `run_id`, only files of that run, and only files of this process's pid
/// namespace (or of none recorded): another run's, or another namespace's, process with the same
/// pid is left alone. Returns true if a header was patched; false if there was none (or on an I/O
/// error, with a message in *error).
bool RecordRootEnd(const std::string& dir, pid_t pid, int wait_status, uint64_t reaped_ns, std::string* error,
                   const std::string& run_id = "");

/// Why `dir` cannot hold trace files by name: "" if it can, else a message (without "trainprof: ")
/// saying that DIR/pid-<PID>.<N>.trace would be longer than PATH_MAX.
std::string TracePathProblem(const std::string& dir);

/// Why no trace file fits in `dir`, checked after a run that left none: the file size limit
/// (RLIMIT_FSIZE, inherited by the command) is under one header region, or the file system is
/// as full as the library allows (it leaves min(1 GiB, 5%) free; inject/trace_file.cc). "" if
/// neither.
std::string NoRoomForTraces(const std::string& dir);

/// "512 B", "2.0 kB", "1.2 MB", "3.4 GB" (decimal units).
std::string FormatBytes(uint64_t bytes);

/// `s` as one shell word: unchanged if it needs no quoting, else in single quotes.
std::string ShellQuote(std::string_view s);

/// The line printed after the run, without "trainprof: " and newline, e.g.
/// "3 trace files, 3 processes, 1.2 MB in /abs/dir — next: trainprof report /abs/dir"; with files
/// of other runs in it, "... in /abs/dir (which also holds 2 trace files of other runs) — next: ...".
/// `next` false (`run --report`: the report follows): without the "— next: ..." part.
std::string SummaryLine(const std::string& dir, const TraceDirSummary& summary, bool next = true);

}  // namespace trainprof::launcher
