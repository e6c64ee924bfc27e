// Call stacks on events (`trainprof run --backtrace`, issue 15): the seam the recorders use.
//
//   event wants a stack? (NvtxStacksOn(): one relaxed load; CUDA: cupti/cuda_backtrace.h)
//     TakeStack(t): CaptureStack (stack_capture.h) ─► StackTable::Intern (stack_table.h)
//                   new stack: MODULE records if it has unknown addresses (modules.h), then STACK
//     RecordTimedWithStack(t, r, id): the event and its EVENT_STACK in one reservation of the same
//                   chunk, published by one commit
//
// Per trace file: StartStacks (at start and in each recording fork child) makes a fresh table and
// forgets the recorded modules. With backtraces off (--backtrace=none, or nothing asked for a kind
// of event) nothing here runs on that event's path.
#pragma once

#include <atomic>
#include <cstdint>

#include "trace_clock.h"
#include "recorder.h"
#include "stacks/backtrace_settings.h"

namespace trainprof::inject {

struct Config;

extern std::atomic<bool> g_nvtx_stacks;  ///< --backtrace has nvtx and this process records

/// Whether range pushes/starts and marks take a stack (hot path: one relaxed load).
inline bool NvtxStacksOn() { return g_nvtx_stacks.load(std::memory_order_relaxed); }

/// This process's --backtrace settings (valid after StartStacks).
const BacktraceSettings& Backtraces();

/// Reads TRAINPROF_BACKTRACE (c.backtrace) and, when this process records (`ours`) and some
/// backtrace or sampling (c.sample_hz) is on, makes this trace file's stack table. At start and in fork children (on pages
/// of its own: async-signal-safe). In a fork child (`fork_child`) native frames are off for the
/// process's life (until it execs): libunwind and the MODULE scan call `dl_iterate_phdr`, whose
/// loader lock a thread of the parent may have held at the fork, and no thread here would ever
/// release it (a new-user pass hung a child that way). Its stacks keep their Python frames.
void StartStacks(const Config& c, bool ours, bool fork_child = false);

/// The id of the calling thread's current stack in this trace file (writing MODULE and STACK
/// records first when it is new); 0 when no stack is taken (off, re-entered, no frames, or too
/// little of the thread's stack left: stack_room.h, counted in FileHeader::stacks_skipped). The
/// words and record bytes live in the ThreadState, not on the stack. Not inside a RecordScope: it
/// records definitions itself.
uint32_t TakeStack(ThreadState* t);

/// The same for a CPU sample, from the sampler's signal handler: CaptureSampleStack (the frames
/// from `interrupted_pc` on, then Python frames read without the interpreter; *missed, *busy as
/// there; *busy also when the thread was taking a stack already). Too little stack left: 0, counted
/// as in TakeStack. Async-signal-safe once the thread is not inside a record or a library lock.
uint32_t TakeSampleStack(ThreadState* t, uintptr_t interrupted_pc, uint32_t* missed, bool* busy);

/// Stacks recorded without deduplication because the table was full (0 without a table).
uint64_t UndeduplicatedStacks();

/// Writes the timed record `r` dated `now`, followed in the same chunk by EVENT_STACK `stack`
/// (none when stack is 0); both become visible with one commit.
template <typename R>
inline void RecordTimedWithStackAt(ThreadState* t, const R& r, uint32_t stack, uint64_t now) {
  RecordScope scope(t);
  if (!scope.entered()) return;
  if (now < t->prev_ns) now = t->prev_ns;
  const format::rec::EventStack es{.stack = stack};
  uint8_t* p = Begin(t, format::EncodedBound(r) + format::EncodedBound(es));
  if (p == nullptr) return;
  p = format::EncodeTimed(p, now - t->prev_ns, r);
  t->prev_ns = now;
  if (stack != 0) p = format::EncodeUntimed(p, es);
  Commit(t, p);
}

/// The same, dated after the stack is taken: a range push, start or mark is where the program's
/// code resumes, so the capture's cost (up to ms for a thread's first stack) stays out of the
/// range's time.
template <typename R>
inline void RecordTimedWithStack(ThreadState* t, const R& r) {
  const uint32_t stack = TakeStack(t);
  RecordTimedWithStackAt(t, r, stack, TraceNow());
}

}  // namespace trainprof::inject
