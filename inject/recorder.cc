#include "recorder.h"

#include <errno.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "capture.h"
#include "runtime.h"
#include "string_table.h"
#include "trace_file.h"

namespace trainprof::inject {

using format::RecordTag;

// The TLS model stays global-dynamic (the -fPIC default): the library can be dlopen'ed late,
// when static TLS may be exhausted.
thread_local ThreadState* tls_thread = nullptr;

namespace {

pthread_key_t g_thread_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

// pthread key destructor: the thread is exiting. Its records are already in the file; give back
// the chunk mapping and the state.
void ReleaseThread(void* p) {
  auto* t = static_cast<ThreadState*>(p);
  Runtime& rt = Rt();
  // A state from before a fork (the forking thread's, never replaced in the child) belongs to
  // the parent's Runtime and file: it stays abandoned with them. Its chunk is not ours to punch.
  if (t->owner != &rt) {
    if (tls_thread == t) tls_thread = nullptr;
    return;
  }
  // Unlinked while tls_thread still names it: a signal handler that runs here records through
  // it rather than creating a state (which would take threads_mu, held by this thread).
  pthread_mutex_lock(&rt.threads_mu);
  if (t->prev_live != nullptr) t->prev_live->next_live = t->next_live;
  else rt.threads = t->next_live;
  if (t->next_live != nullptr) t->next_live->prev_live = t->prev_live;
  pthread_mutex_unlock(&rt.threads_mu);
  if (tls_thread == t) tls_thread = nullptr;
  TraceFile* f = rt.file.load(std::memory_order_acquire);
  if (f != nullptr && t->chunk != nullptr && rt.pid == getpid()) f->ReleaseChunkOfExitedThread(t->chunk, t->chunk_offset);
  delete t;
}

void MakeKey() { pthread_key_create(&g_thread_key, ReleaseThread); }

}  // namespace

ThreadState* CurrentThreadSlow() {
  EnsureInit();
  auto* t = new (std::nothrow) ThreadState();
  if (t == nullptr) return nullptr;
  t->tid = static_cast<uint32_t>(syscall(SYS_gettid));
  t->thread_index = Rt().next_thread_index.fetch_add(1, std::memory_order_relaxed);
  t->prev_ns = NowNs();
  // tls_thread first: a signal handler that runs while this thread holds threads_mu records
  // through t instead of coming back here.
  tls_thread = t;
  Runtime& rt = Rt();
  t->owner = &rt;
  pthread_mutex_lock(&rt.threads_mu);
  t->next_live = rt.threads;
  if (rt.threads != nullptr) rt.threads->prev_live = t;
  rt.threads = t;
  pthread_mutex_unlock(&rt.threads_mu);
  pthread_once(&g_key_once, MakeKey);
  pthread_setspecific(g_thread_key, t);
  // Name the thread as the OS knows it (NVTX NameOsThread can rename it later).
  char comm[17] = {};
  if (prctl(PR_GET_NAME, comm, 0, 0, 0) == 0 && comm[0] != '\0') {
    uint32_t name = InternBytes(t, comm, static_cast<uint32_t>(strnlen(comm, 16)));
    uint64_t f[2] = {t->tid, name};
    RecordDefinition(t, RecordTag::kThreadName, f, 2);
  }
  CaptureThreadStarted(t);
  return t;
}

void ForgetCurrentThread() { tls_thread = nullptr; }

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

void RecordDefinition(ThreadState* t, RecordTag tag, const uint64_t* fields, int n,
                      const void* bytes, uint32_t len) {
  if (t->in_record) {  // re-entered from a signal handler (see ThreadState::in_record)
    CountDropped(1);
    return;
  }
  t->in_record = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint8_t* p = Begin(t, 1 + 10 * (n + 1) + len);
  if (p != nullptr) {
    *p++ = static_cast<uint8_t>(tag);
    for (int i = 0; i < n; ++i) p = format::PutVarint(p, fields[i]);
    if (bytes != nullptr) {
      p = format::PutVarint(p, len);
      memcpy(p, bytes, len);
      p += len;
    }
    Commit(t, p);
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->in_record = 0;
}

void CountDropped(uint64_t n) {
  Runtime& rt = Rt();
  rt.dropped.fetch_add(n, std::memory_order_relaxed);
  if (TraceFile* f = rt.file.load(std::memory_order_acquire)) {
    f->header()->records_dropped.fetch_add(n, std::memory_order_relaxed);
  }
}

}  // namespace trainprof::inject
