#include "recorder.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <new>

#include "capture.h"
#include "runtime.h"
#include "stacks/sampler.h"
#include "string_table.h"
#include "trace_file.h"

namespace trainprof::inject {

using format::RecordTag;

// Initial-exec TLS: an access is one %fs-relative load, never a call to __tls_get_addr, which on
// a thread's first access after a dlopen may malloc a larger dtv (a deadlock when that access is
// an NVTX call from a signal handler that interrupted malloc). Preloaded, the library always has
// static TLS; dlopen'ed late, its few bytes come from the static TLS surplus glibc keeps for
// such libraries (tests/programs/late_dlopen.cc).
thread_local ThreadState* tls_thread __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

pthread_key_t g_thread_key;
bool g_have_key = false;

// A thread's state is its own mapping, never malloc'ed: it is made on the thread's first event,
// which may be an NVTX call from a signal handler that interrupted malloc (whose locks are not
// re-entrant). mmap and munmap are system calls, safe there. errno is left as it was.
constexpr size_t kStateBytes = (sizeof(ThreadState) + 4095) / 4096 * 4096;

ThreadState* MapState() {
  int saved = errno;
  void* p = mmap(nullptr, kStateBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  errno = saved;
  return p == MAP_FAILED ? nullptr : new (p) ThreadState();
}

void UnmapState(ThreadState* t) {
  int saved = errno;
  munmap(t, kStateBytes);
  errno = saved;
}

// pthread key destructor: the thread is exiting. Its records are already in the file; give back
// the chunk mapping and the state. Signals are blocked meanwhile: a handler that recorded here
// would find no state (or one being unmapped) and make one, and its chunk claim would wait for
// the trace file's lock, which ReleaseChunkOfExitedThread may hold on this very thread. A signal
// that arrives now is delivered when the mask is restored; its handler then makes a fresh state,
// which glibc's next destructor round gives back in turn.
void ReleaseThread(void* p) {
  auto* t = static_cast<ThreadState*>(p);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  Runtime& rt = Rt();
  if (tls_thread == t) tls_thread = nullptr;
  // A state from before a fork (the forking thread's, never replaced in the child) belongs to
  // the parent's file: its chunk is not ours to punch, and the state stays with the parent's.
  if (t->owner == &rt) {
    TraceFile* f = rt.file.load(std::memory_order_acquire);
    if (f != nullptr && t->chunk != nullptr && rt.pid == getpid()) {
      StampLastClockPair(t);
      f->ReleaseChunkOfExitedThread(t->chunk, t->chunk_offset);
    }
    UnmapState(t);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

void InitThreadStates() { g_have_key = pthread_key_create(&g_thread_key, ReleaseThread) == 0; }

// Everything here is async-signal-safe (system calls, atomics, the string table's mmap'ed memory
// under its own lock, which a signal handler on this thread never finds held by this thread: see
// ThreadState::in_slow): a thread's first event may be an NVTX call from a signal handler.
ThreadState* CurrentThreadSlow() {
  if (!InitDone()) EnsureInit();
  ThreadState* t = MapState();
  if (t == nullptr) return nullptr;
  t->tid = static_cast<uint32_t>(syscall(SYS_gettid));
  t->thread_index = Rt().next_thread_index.fetch_add(1, std::memory_order_relaxed);
  t->prev_ns = TraceNow();
  t->owner = &Rt();
  // A signal handler that ran meanwhile on this thread made a state already: use that one.
  if (ThreadState* other = tls_thread) {
    UnmapState(t);
    return other;
  }
  // tls_thread first: a signal handler that runs from here on records through t instead of
  // coming back here.
  tls_thread = t;
  // The key's value lives in the thread descriptor for the first 32 keys (glibc), so this
  // allocates nothing: the key is made at start-up (InitThreadStates), among the first.
  if (g_have_key) pthread_setspecific(g_thread_key, t);
  // Name the thread as the OS knows it (NVTX NameOsThread can rename it later).
  char comm[17] = {};
  if (prctl(PR_GET_NAME, comm, 0, 0, 0) == 0 && comm[0] != '\0') {
    uint32_t name = InternBytes(t, comm, static_cast<uint32_t>(strnlen(comm, 16)));
    RecordDefinition(t, format::rec::ThreadName{.tid = t->tid, .name = name});
  }
  CaptureThreadStarted(t);
  ArmThreadSampler();  // a thread not made by an interposed pthread_create (before the library, clone)
  return t;
}

void ForgetCurrentThread() { tls_thread = nullptr; }

void StampLastClockPair(ThreadState* t) {
  if (!g_trace_clock_tsc || t->chunk == nullptr) return;
  const ClockPair p = TakeClockPair();
  t->chunk->last_ns.store(p.ns, std::memory_order_relaxed);
  t->chunk->last_ticks.store(p.ticks, std::memory_order_release);
}

uint8_t* ReserveSlow(ThreadState* t, uint32_t bytes) {
  Runtime& rt = Rt();
  TraceFile* f = rt.file.load(std::memory_order_acquire);
  if (f == nullptr || !rt.recording.load(std::memory_order_relaxed) ||
      bytes > f->header()->chunk_size - sizeof(format::ChunkHeader)) {
    CountDropped(1);
    return nullptr;
  }
  if (t->chunk != nullptr) {
    f->ReleaseChunk(t->chunk);
    t->chunk = nullptr;
    t->cur = t->limit = t->records = nullptr;
  }
  format::ChunkHeader* c = f->ClaimChunk(t->tid, t->thread_index, t->chunk_seq, t->prev_ns, &t->chunk_offset);
  if (c == nullptr) {
    StopRecording("cannot extend the trace file", errno);
    CountDropped(1);
    return nullptr;
  }
  ++t->chunk_seq;
  t->chunk = c;
  t->records = reinterpret_cast<uint8_t*>(c + 1);
  t->cur = t->records;
  t->limit = reinterpret_cast<uint8_t*>(c) + f->header()->chunk_size;
  return t->cur;
}

void CountDropped(uint64_t n) {
  Runtime& rt = Rt();
  rt.dropped.fetch_add(n, std::memory_order_relaxed);
  if (TraceFile* f = rt.file.load(std::memory_order_acquire)) {
    f->header()->records_dropped.fetch_add(n, std::memory_order_relaxed);
  }
}

}  // namespace trainprof::inject
