// One process's trace file: creation, header, and chunk slots. Everything here is the slow path
// (once per process, once per full chunk); the per-record path is in recorder.h.
//
//   Open() ── O_CREAT|O_EXCL|O_NOFOLLOW, mode 0666 & ~TRAINPROF_UMASK, pid-<PID>.trace (or pid-<PID>.<N>.trace if taken)
//          ── header region posix_fallocate'd and mapped MAP_SHARED for the whole process life
//   ClaimChunk() ── next slot; the file grows in kGrowBytes steps with posix_fallocate, which
//                   reserves the blocks, so a full disk is an error here and never a SIGBUS later
//                   when a record is stored into the mapping.
#pragma once

#include <pthread.h>

#include <cstdint>

#include "trainprof/trace_format.h"

namespace trainprof::inject {

struct Config;

class TraceFile {
 public:
  /// Creates the trace file for this process in cfg.output_dir (created if missing) and writes its
  /// header and metadata. `flags` are format::HeaderFlags. On failure returns nullptr and puts a
  /// short reason (static or in `err`, up to err_size bytes) for the caller's one log line.
  static TraceFile* Open(const Config& cfg, uint32_t flags, char* err, size_t err_size);

  /// Maps a fresh chunk for one thread (tid, thread_index, seq) with base_ns as its time base;
  /// *offset receives its file offset. Thread-safe (takes the file mutex). Returns nullptr when
  /// the file cannot grow (disk full, RLIMIT_FSIZE, I/O error): the caller stops recording.
  format::ChunkHeader* ClaimChunk(uint32_t tid, uint32_t thread_index, uint32_t seq, uint64_t base_ns,
                                  uint64_t* offset);

  /// Unmaps a chunk the thread has filled or no longer uses. Its records stay in the file.
  void ReleaseChunk(format::ChunkHeader* chunk);

  /// Unmaps the chunk of an exiting thread and gives the unused pages after its `committed`
  /// bytes back to the file system (a hole), so short-lived threads cost little disk.
  void ReleaseChunkOfExitedThread(format::ChunkHeader* chunk, uint64_t offset);

  /// Whether this process is the first of the run to report a recording failure: claims
  /// kFlagRunFailureSaid in the root process's first trace file (cfg.root_pid) with an atomic
  /// fetch-or through a shared mapping of its header page. True also when there is no such file
  /// to claim it in (no root pid, the root does not record). Async-signal-safe (system calls only).
  static bool FirstInRunToReportFailure(const Config& cfg);

  format::FileHeader* header() const { return header_; }
  const char* path() const { return path_; }

  /// Records how the process ended in the header (first call wins unless `overwrite`).
  void SetEnd(format::EndKind kind, int32_t code, uint64_t now_ns, bool overwrite);

 private:
  TraceFile() = default;
  bool GrowLocked(uint64_t min_size);
  bool CheckFdLocked();

  int fd_ = -1;              ///< moved above FdFloor() (fd_floor.h), so the program's own fd numbers are unchanged
  uint64_t dev_ = 0, ino_ = 0;  ///< identity of our file: the program may close fd_ and reuse it
  format::FileHeader* header_ = nullptr;
  uint64_t file_size_ = 0;
  uint32_t chunk_size_ = format::kDefaultChunkSize;
  uint32_t next_slot_ = 0;
  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  char path_[4096] = {};
};

}  // namespace trainprof::inject
