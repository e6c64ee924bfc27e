// Process-wide state of the injection library and its life cycle.
//
//   load ──► EnsureInit() (call_once: from the constructor, or from whichever entry point — NVTX
//            init, a hook — runs first) reads Config, decides whether this process records, and
//            opens pid-<PID>.trace.
//   fork ──► OnForkChild() in the child: the parent's file, threads and tables are abandoned
//            (leaked on purpose: their locks may be held by threads that do not exist here, but
//            kept reachable through Runtime::parent, so that leak checkers see them as kept;
//            thread states are mmap'ed, which leak checkers do not track);
//            with --follow-children a new file is opened, otherwise recording stops.
//   exit ──► RecordEnd() from exit()/_exit() hooks or the destructor.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "config.h"
#include "trainprof/trace_format.h"

namespace trainprof::inject {

class TraceFile;
class StringTable;
struct ThreadState;

struct Runtime {
  Config cfg;
  std::atomic<TraceFile*> file{nullptr};  ///< nullptr: this process does not record
  std::atomic<bool> recording{false};
  std::atomic<bool> inert{true};          ///< no TRAINPROF_OUTPUT_DIR, or not a process we follow
  int pid = 0;                            ///< getpid() of the process this state belongs to
  std::atomic<uint32_t> next_thread_index{0};
  std::atomic<uint64_t> dropped{0};
  StringTable* strings = nullptr;
  /// In a fork child, the parent's Runtime, abandoned on purpose (see OnForkChild).
  Runtime* parent = nullptr;
};

/// Threads inside InitializeInjectionNvtx2 now; fork() waits for 0 (see runtime.cc).
extern std::atomic<int> g_nvtx_initializing;
/// When the last InitializeInjectionNvtx2 returned (CLOCK_MONOTONIC ns).
extern std::atomic<uint64_t> g_nvtx_init_done_ns;

/// The process-wide state. Valid after EnsureInit().
Runtime& Rt();

/// Whether initialisation has finished (one acquire load; async-signal-safe).
bool InitDone();

/// Initialises the library once (thread-safe, std::call_once). Cheap after the first call.
void EnsureInit();

/// Child side of fork(): see the file comment. Runs on the forking thread only.
void OnForkChild();

/// Stops recording for good after an internal failure, with one log line naming the file.
void StopRecording(const char* what, int err);

/// Records how this process ends (EndKind) with `code`; the first call wins.
void RecordEnd(format::EndKind kind, int32_t code);

}  // namespace trainprof::inject
