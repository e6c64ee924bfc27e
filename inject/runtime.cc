#include "runtime.h"

#include <pthread.h>
#include <string.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <mutex>
#include <new>

#include "capture.h"
#include "clock.h"
#include "log.h"
#include "page_new.h"
#include "process_hooks.h"
#include "recorder.h"
#include "stacks/sample_losses.h"
#include "stacks/sampler.h"
#include "stacks/stacks.h"
#include "string_table.h"
#include "trace_file.h"
#if TRAINPROF_HAVE_CUPTI
#include "cupti/cupti_tracer.h"
#endif

namespace trainprof::inject {

std::atomic<int> g_nvtx_initializing{0};
std::atomic<uint64_t> g_nvtx_init_done_ns{0};

namespace {

// Constructed on first use, never destroyed: other libraries' destructors and exit hooks may
// record after ours would have run.
alignas(Runtime) unsigned char g_runtime_storage[sizeof(Runtime)];
Runtime* g_runtime = nullptr;
std::once_flag g_init_once;
std::atomic<bool> g_init_done{false};

// Opens this process's trace file if it is one we record. Runs at init and in fork children.
void StartRecording(Runtime& rt, uint32_t flags) {
  rt.pid = getpid();
  const Config& c = rt.cfg;
  bool ours = c.output_dir != nullptr && (c.follow_children || c.root_pid == 0 || c.root_pid == rt.pid);
  rt.inert.store(!ours, std::memory_order_relaxed);
  InitCapture(c, ours);
  StartStacks(c, ours, (flags & format::kFlagForkedChild) != 0);
  PrepareSampling(c, ours);  // the signal is in the header: before Open
  // On pages of its own in a fork child too (page_new.h: fork may run in a signal handler).
  rt.strings = NewOnPages<StringTable>();
  if (!ours || rt.strings == nullptr) return;
  if (c.follow_children) flags |= format::kFlagFollowChildren;
  char err[512];
  TraceFile* f = TraceFile::Open(c, flags, err, sizeof(err));
  if (f == nullptr) {
    if (!rt.cfg.quiet && TraceFile::FirstInRunToReportFailure(c)) {
      char pid[24];
      LogLine("cannot record pid ", FormatU64(static_cast<unsigned>(rt.pid), pid), " in ", c.output_dir,
              ": ", err, "; the program runs on unprofiled", nullptr);
    }
    rt.cfg.quiet = true;  // said once: children, forked or exec'd, stay quiet
    return;
  }
  rt.file.store(f, std::memory_order_release);
  rt.recording.store(true, std::memory_order_release);
  StartSampling();
}

// Before fork(): let an NVTX initialisation running in another thread finish (nvtx_injection.cc),
// for at most 100 ms: a child must not inherit NVTX half-initialised.
void OnForkPrepare() {
  for (int i = 0; i < 10000 && g_nvtx_initializing.load(std::memory_order_acquire) > 0; ++i) usleep(10);
  // NVTX still sets its function table and marks itself complete after we return: give it 1 ms.
  uint64_t done = g_nvtx_init_done_ns.load(std::memory_order_acquire);
  uint64_t now = NowNs();
  if (done != 0 && now - done < 1000000) usleep(static_cast<useconds_t>((1000000 - (now - done)) / 1000 + 1));
}

void Init() {
  auto* rt = new (g_runtime_storage) Runtime();
  // A secure-execution process (setuid, setgid, file capabilities: AT_SECURE) runs with more
  // rights than whoever set its environment: the library takes nothing from that environment and
  // does nothing (no trace file, no change to a child's environment, NVTX and CUDA left alone).
  // The loader ignores our LD_PRELOAD there, but NVTX and the CUDA driver dlopen the library named
  // in NVTX_INJECTION64_PATH / CUDA_INJECTION64_PATH.
  if (getauxval(AT_SECURE) != 0) {
    if (getenv("TRAINPROF_OUTPUT_DIR") != nullptr && getenv("TRAINPROF_QUIET") == nullptr) {
      char pid[24];
      LogLine("pid ", FormatU64(static_cast<unsigned>(getpid()), pid),
              " is not recorded: it runs setuid, setgid or with file capabilities (secure execution)", nullptr);
    }
    g_runtime = rt;  // a default Config: no output directory, so inert
    ResolveRealFunctions();
    StartRecording(*rt, 0);
    return;
  }
  rt->cfg = ReadConfig();
  // The recording clock, once, before any thread records (trace_clock.h). A capture's window and
  // state ring are CLOCK_MONOTONIC ns: with one configured, the file stays on that clock.
  ChooseTraceClock(getenv("TRAINPROF_CLOCK"), rt->cfg.capture_range != nullptr ||
                                                  rt->cfg.capture_window_start_ns != 0 ||
                                                  rt->cfg.capture_window_end_ns != 0);
  g_runtime = rt;
  ResolveRealFunctions();
  InitSamplerKey(rt->cfg);  // before the thread states' key: its destructor runs first
  InitThreadStates();
  pthread_atfork(OnForkPrepare, nullptr, OnForkChild);
  StartRecording(*rt, 0);
  g_init_done.store(true, std::memory_order_release);
  RecordPendingThreadLost();  // this thread's, if the sampler could not give it a timer
}

}  // namespace

Runtime& Rt() {
  if (__builtin_expect(g_runtime == nullptr, 0)) EnsureInit();
  return *g_runtime;
}

bool InitDone() { return g_init_done.load(std::memory_order_acquire); }

void EnsureInit() { std::call_once(g_init_once, Init); }

// The Runtime a fork child abandoned (see OnForkChild).
Runtime* g_abandoned_parent = nullptr;

void OnForkChild() {
#if TRAINPROF_HAVE_CUPTI
  cupti::OnForkChildCuda();  // the inherited CUDA/CUPTI state is never touched in a child
#endif
  ForgetSamplingInForkChild();  // no timers here; StartRecording turns sampling on in a recorded child
  if (g_runtime == nullptr) return;
  // The parent's Runtime may be mid-update by a thread that does not exist here: leave it, and
  // build a fresh one with the same configuration.
  Runtime* parent = g_runtime;
  // Kept reachable from a global: the child's Runtime is on pages LeakSanitizer does not scan.
  g_abandoned_parent = parent;
  auto* rt = NewOnPages<Runtime>();  // no malloc: fork() may have been called in a signal handler
  if (rt == nullptr) {  // out of memory: keep the parent's Runtime, recording nothing
    parent->file.store(nullptr);
    parent->recording.store(false);
    // This thread's state writes into a chunk of the parent's file: drop it.
    ForgetCurrentThread();
    return;
  }
  rt->cfg = parent->cfg;
  rt->parent = parent;
  ForgetCurrentThread();
  g_runtime = rt;
  if (!rt->cfg.follow_children) {
    rt->pid = getpid();
    rt->inert.store(true);
    rt->strings = NewOnPages<StringTable>();
    InitCapture(rt->cfg, false);
    StartStacks(rt->cfg, false, true);  // no stacks: the parent's table is not this process's
    return;
  }
  StartRecording(*rt, format::kFlagForkedChild);
}

void StopRecording(const char* what, int err) {
  Runtime& rt = Rt();
  if (!rt.recording.exchange(false)) return;
  TraceFile* f = rt.file.load(std::memory_order_acquire);
  if (f != nullptr) {
    __atomic_fetch_or(&f->header()->flags, format::kFlagRecordingFailed, __ATOMIC_RELAXED);
  }
  if (!rt.cfg.quiet && TraceFile::FirstInRunToReportFailure(rt.cfg)) {
    LogLine("recording stopped: ", what, " ", f != nullptr ? f->path() : "", ": ", strerror(err),
            "; the program runs on, later events are counted as dropped", nullptr);
  }
  rt.cfg.quiet = true;
}

void RecordEnd(format::EndKind kind, int32_t code) {
  if (g_runtime == nullptr) return;
  Runtime& rt = *g_runtime;
  TraceFile* f = rt.file.load(std::memory_order_acquire);
  if (f == nullptr || rt.pid != getpid()) return;
  if (f->header()->end_kind.load(std::memory_order_relaxed) != 0) return;
  StopSampling();  // samples from exit handlers on would follow the process's end
  // exit(256) ends with status 0, _exit(-1) with 255: what the kernel keeps and waitpid reports.
  if (kind == format::EndKind::kExit) code &= 0377;
  uint64_t now = NowNs();
  FinishSampling(tls_thread, rt.cfg.quiet);  // what it could not sample: its records, one line
  // Only a thread that already records writes the record (a state made now would claim a chunk
  // for this one record, perhaps in a signal handler calling _exit()). The header says it anyway.
  if (ThreadState* t = tls_thread) {
    CaptureProcessEnding(t);
    RecordTimed(t, format::rec::ProcessEnd{.kind = static_cast<uint64_t>(kind), .code = code});
    StampLastClockPair(t);
  }
  f->SetEnd(kind, code, now, /*overwrite=*/false);
}

// Constructor: trivial work only (read env, open one file). Destructor: note that main returned.
__attribute__((constructor)) static void LibraryLoaded() { EnsureInit(); }
__attribute__((destructor)) static void LibraryUnloading() { RecordEnd(format::EndKind::kReturned, 0); }

}  // namespace trainprof::inject
