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

#include "stacks/stack_capture.h"
#include "trace_clock.h"
#include "trainprof/records.h"
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
inline constexpr uint32_t kAddressCacheSize = 64;  // per-thread cache of short names by address (power of 2)
/// One entry of the per-thread cache of short names by address (string_table.h, InternCString):
/// the bytes of a name shorter than 16 bytes and its NUL, as two masked little-endian words, as
/// they were at `ptr` when it was interned. A hit compares the bytes at `ptr` now: a buffer reused
/// for another name misses.
struct CachedAddress {
  const char* ptr = nullptr;  ///< nullptr: empty
  uint64_t w0 = 0, w1 = 0;    ///< the bytes (name and NUL), masked
  uint64_t m0 = 0, m1 = 0;    ///< which bytes of the 16 at ptr are the name's and its NUL
  uint32_t id = 0;
};

struct ThreadState {
  // Hot fields first: one cache line.
  uint8_t* cur = nullptr;    ///< next free byte in the chunk (nullptr: no chunk)
  uint8_t* limit = nullptr;  ///< end of the chunk
  uint8_t* records = nullptr;///< first record byte of the chunk
  format::ChunkHeader* chunk = nullptr;
  uint64_t prev_ns = 0;      ///< time of the previous timed record (dt base), on the recording clock (TraceNow)
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
  uint64_t cuda_enter_ns = 0;       ///< time of the last CUDA_API_ENTER (the --backtrace=cuda threshold), recording clock
  /// The Runtime this state was made under. After a fork, the parent's states belong to the
  /// parent's Runtime, which the child abandons with them.
  Runtime* owner = nullptr;
  int32_t depth[kMaxDomains] = {};  ///< NVTX push/pop nesting per domain
  // Capture ranges (capture.h), used only when one is configured.
  int32_t capture_level = -1;  ///< level of the nvtx:NAME range that began the capture here (-1: none)
  uint32_t capture_domain = 0;
  uint64_t captured[kMaxDomains] = {};  ///< per domain, bit L: the open push at level L was recorded
  CachedString cache[kStringCacheSize];
  CachedAddress by_address[kAddressCacheSize];
  /// Taking a stack (stacks/stacks.cc): its words and their STACK record's bytes live here, on
  /// the thread's own pages, not on its stack (a thread may have 16 KiB of stack in all).
  /// in_stack: a capture on this thread is using them; a signal handler's capture that interrupts
  /// it takes no stack.
  volatile uint8_t in_stack = 0;
  uint64_t stack_words[kMaxStackWords];
  uint8_t stack_bytes[kMaxStackWords * format::kMaxVarintBytes];
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

/// Counts records this process could not write (in the trace header when there is one).
void CountDropped(uint64_t n);

/// The hot path's re-entry protocol, once, for every recorder: while a RecordScope lives, this
/// thread is inside a record (ThreadState::in_record). A signal handler that runs on the thread
/// meanwhile and records finds the flag set: its scope is not entered, and its record is dropped
/// and counted instead of written over the half-made one. The compiler fences keep the record's
/// stores between setting and clearing the flag (the handler runs on this thread: no CPU fence).
/// No allocation, lock or system call; inline, it costs a load, two stores and nothing else.
class RecordScope {
 public:
  explicit RecordScope(ThreadState* t) : t_(t) {
    if (__builtin_expect(t->in_record, 0)) {  // re-entered from a signal handler
      CountDropped(1);
      entered_ = false;
      return;
    }
    t->in_record = 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~RecordScope() {
    if (!entered_) return;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_->in_record = 0;
  }
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;

  /// Whether this scope may write (false: re-entered, the record is already counted as dropped).
  bool entered() const { return entered_; }

  /// Writes the timed record `r` dated `now` (>= the thread's previous record time).
  template <typename R>
  void WriteTimed(uint64_t now, const R& r) {
    uint8_t* p = Begin(t_, format::EncodedBound(r));
    if (p == nullptr) return;
    p = format::EncodeTimed(p, now - t_->prev_ns, r);
    t_->prev_ns = now;
    Commit(t_, p);
  }

  /// Writes the untimed record `r` (a definition).
  template <typename R>
  void WriteUntimed(const R& r) {
    uint8_t* p = Begin(t_, format::EncodedBound(r));
    if (p != nullptr) Commit(t_, format::EncodeUntimed(p, r));
  }

  /// Writes what `encode(p, chunk_base_ns)` encodes at p (at most `max_bytes`; returns its end),
  /// for records whose fields depend on the chunk they land in (GPU activity's zs, ze: CLOCK_MONOTONIC
  /// ns relative to the chunk's base_ns, or to its sync_ns on the TSC clock).
  template <typename Encode>
  void WriteInChunk(uint32_t max_bytes, Encode encode) {
    uint8_t* p = Begin(t_, max_bytes);
    if (p != nullptr) Commit(t_, encode(p, g_trace_clock_tsc ? t_->chunk->sync_ns : t_->chunk->base_ns));
  }

 private:
  ThreadState* t_;
  bool entered_ = true;
};

/// Records the timed record `r` (format::rec::*), dated now (TraceNow). Hot path (NVTX push/pop).
template <typename R>
inline void RecordTimed(ThreadState* t, const R& r) {
  RecordScope scope(t);
  if (!scope.entered()) return;
  scope.WriteTimed(TraceNow(), r);
}

/// On the TSC clock, writes a calibration pair of now into this thread's chunk header (last_ns,
/// then last_ticks): at the process's end and a thread's exit, so the last records are
/// interpolated, not extrapolated. Async-signal-safe; nothing on the monotonic clock.
void StampLastClockPair(ThreadState* t);

/// Records the timed record `r` dated `when` (recording clock), not before this thread's previous record (a chunk's
/// times never go back): for events whose time is known already (capture.cc).
template <typename R>
inline void RecordAt(ThreadState* t, const R& r, uint64_t when) {
  RecordScope scope(t);
  if (!scope.entered()) return;
  scope.WriteTimed(when < t->prev_ns ? t->prev_ns : when, r);
}

/// Records the untimed definition record `r` (format::rec::String, Domain, ThreadName, ...).
template <typename R>
inline void RecordDefinition(ThreadState* t, const R& r) {
  static_assert(R::kClass == format::RecordClass::kDefinition, "RecordDefinition takes definition records");
  RecordScope scope(t);
  if (scope.entered()) scope.WriteUntimed(r);
}

}  // namespace trainprof::inject
