// The recorder: per-thread, single-writer buffers that are windows of the trace file.
//
//   thread ──► ThreadState (its own mmap'ed pages, found through one initial-exec TLS pointer)
//                cur ──────────────► [ChunkHeader | rec | rec | rec |   free   ]  (MAP_SHARED)
//                                                               ▲committed (release store)
// Hot path (Begin/Commit): read the clock, check room, encode varints, one release store.
// No locks, no allocation, no system calls; a thread never writes a cache line another thread
// writes. Slow path (ReserveSlow): claim the next chunk from TraceFile under its mutex.
//
// First event of a thread (CurrentThreadSlow): maps its state and registers its exit, all
// async-signal-safe (no malloc, no lock the interrupted code can hold): that event may be an NVTX
// call from a signal handler that interrupted malloc.
//
// Recording may be off in this process (not followed, file failed): the ThreadState still exists
// so that NVTX nesting levels stay right, and Begin() returns nullptr.
#pragma once

#include <atomic>
#include <cstdint>

#include "clock.h"
#include "trainprof/trace_format.h"

namespace trainprof::inject {

struct Runtime;

inline constexpr uint32_t kMaxDomains = 256;      // NVTX domains whose levels a thread counts (ranges.h)
inline constexpr uint32_t kStringCacheSize = 512; // per-thread interned-name cache (power of 2)

/// One entry of the per-thread name cache: a name already interned, keyed by its hash.
struct CachedString {
  uint64_t hash = 0;
  const char* data = nullptr;  ///< the interned copy (stable for the process life)
  uint32_t len = 0;
  uint32_t id = 0;
};

struct ThreadState {
  // Hot fields first: one cache line.
  uint8_t* cur = nullptr;    ///< next free byte in the chunk (nullptr: no chunk)
  uint8_t* limit = nullptr;  ///< end of the chunk
  uint8_t* records = nullptr;///< first record byte of the chunk
  format::ChunkHeader* chunk = nullptr;
  uint64_t prev_ns = 0;      ///< time of the previous timed record (dt base)
  uint64_t range_counter = 0;///< for nvtxRangeStart ids
  uint32_t tid = 0;
  uint32_t thread_index = 0;
  uint32_t chunk_seq = 0;
  /// Set while this thread writes a record / holds a library lock. A signal handler that runs on
  /// this thread meanwhile (NVTX from a handler) must not write over the half-made record or wait
  /// for a lock its own thread holds: its record is dropped and counted instead.
  volatile uint8_t in_record = 0;
  volatile uint8_t in_slow = 0;
  uint64_t chunk_offset = 0; ///< file offset of `chunk`
  uint32_t cuda_runtime_depth = 0;  ///< CUDA runtime API calls this thread is inside (cupti/api_events.h)
  /// The Runtime this state was made under. After a fork, the parent's states belong to the
  /// parent's Runtime, which the child abandons with them.
  Runtime* owner = nullptr;
  int32_t depth[kMaxDomains] = {};  ///< NVTX push/pop nesting per domain
  // Capture ranges (capture.h), used only when one is configured.
  int32_t capture_level = -1;  ///< level of the nvtx:NAME range that began the capture here (-1: none)
  uint32_t capture_domain = 0;
  uint64_t captured[kMaxDomains] = {};  ///< per domain, bit L: the open push at level L was recorded
  CachedString cache[kStringCacheSize];
};

extern thread_local ThreadState* tls_thread __attribute__((tls_model("initial-exec")));

/// Creates this thread's state on its first event. nullptr only if out of memory.
/// Async-signal-safe once the library is initialised.
ThreadState* CurrentThreadSlow();

/// Makes the pthread key whose destructor gives back a thread's state at its exit. Once, at
/// start-up (runtime.cc Init): early, so that the key is among glibc's first 32, whose values
/// need no allocation.
void InitThreadStates();

/// Returns this thread's state, creating it on first use. nullptr only if out of memory.
inline ThreadState* CurrentThread() {
  ThreadState* t = tls_thread;
  return __builtin_expect(t != nullptr, 1) ? t : CurrentThreadSlow();
}

/// Drops this thread's state pointer without touching it (fork child: it belongs to the parent).
void ForgetCurrentThread();

/// Slow path of Begin: claim a new chunk with room for `bytes`. Returns nullptr (and counts a drop)
/// when this process does not record.
uint8_t* ReserveSlow(ThreadState* t, uint32_t bytes);

/// Starts a record of at most `max_bytes`; returns where to encode it, or nullptr if not recording.
inline uint8_t* Begin(ThreadState* t, uint32_t max_bytes) {
  if (__builtin_expect(t->cur != nullptr && t->cur + max_bytes <= t->limit, 1)) return t->cur;
  return ReserveSlow(t, max_bytes);
}

/// Publishes the record that ends at `end`: after this store a reader or a crash keeps it.
inline void Commit(ThreadState* t, uint8_t* end) {
  t->cur = end;
  t->chunk->committed.store(static_cast<uint32_t>(end - t->records), std::memory_order_release);
}

/// Writes tag and dt for a timed record at time `now` and returns the next byte.
inline uint8_t* PutTimed(ThreadState* t, uint8_t* p, format::RecordTag tag, uint64_t now) {
  *p++ = static_cast<uint8_t>(tag);
  p = format::PutVarint(p, now - t->prev_ns);
  t->prev_ns = now;
  return p;
}

/// Counts records this process could not write (in the trace header when there is one).
void CountDropped(uint64_t n);

/// Records a timed record with up to four varint fields (count given by N). Hot path.
template <int N>
inline void RecordTimed(ThreadState* t, format::RecordTag tag, const uint64_t (&fields)[N]) {
  if (__builtin_expect(t->in_record, 0)) {  // re-entered from a signal handler
    CountDropped(1);
    return;
  }
  t->in_record = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint64_t now = NowNs();
  uint8_t* p = Begin(t, 1 + 10 * (N + 1));
  if (p != nullptr) {
    p = PutTimed(t, p, tag, now);
    for (int i = 0; i < N; ++i) p = format::PutVarint(p, fields[i]);
    Commit(t, p);
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->in_record = 0;
}

/// Records an untimed definition record: tag, fields..., then optional bytes (length-prefixed).
void RecordDefinition(ThreadState* t, format::RecordTag tag, const uint64_t* fields, int n,
                      const void* bytes = nullptr, uint32_t len = 0);

}  // namespace trainprof::inject
