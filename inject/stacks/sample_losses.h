// What `trainprof run --sample` could not sample, in the trace and on stderr (issue 35): threads
// that got no CPU timer, and CPU time of threads while their timer was stopped because they
// blocked the sampling signal (sample_mask.h). Without this, `ulimit -i 8` with 32 busy threads
// left 4 threads sampled and a function table that read as complete.
//
//   a thread's timer refused (sample_budget.h) or timer_create/timer_settime failed
//       ─► counted per reason (process-wide atomics) ─► SAMPLE_THREAD_LOST on the thread's chunk
//          (before the library is initialised: kept on the thread, written by
//          RecordPendingThreadLost once it is)
//   a stopped timer set going again, or the thread's exit while stopped
//       ─► the thread's CPU time meanwhile added up on the thread (AddPausedCpu)
//       ─► SAMPLE_PAUSED at its next sample, its exit, or the process's end
//   the process's end ─► one `trainprof:` line: how many threads were not sampled, and why
// A thread still blocking the signal at the process's end: its CPU time since it blocked it is
// not counted (only the thread can read its own CPU clock cheaply).
#pragma once

#include <cstdint>

namespace trainprof::inject {

struct ThreadState;

/// Why a thread got no timer (SAMPLE_THREAD_LOST's reason).
enum class ThreadLost : uint32_t {
  kSignalQueueShare = 1,  ///< the user's queued signals had reached half of RLIMIT_SIGPENDING
  kTimerCreate = 2,       ///< timer_create failed (errno `err`)
  kTimerSettime = 3,      ///< timer_settime failed (errno `err`)
};

/// Counts a thread the sampler tried to give a timer (the "of N" of the end line).
void NoteThreadTried();

/// Counts and records (SAMPLE_THREAD_LOST) that the calling thread got no timer. `err`: the
/// failed call's errno (0 for kSignalQueueShare); `queued`: the user's queued signals read (0:
/// not read). Async-signal-safe; errno kept.
void NoteThreadNotSampled(ThreadLost why, int err, uint64_t queued);

/// Writes the calling thread's SAMPLE_THREAD_LOST kept while the library was being initialised.
/// Once initialised (runtime.cc Init).
void RecordPendingThreadLost();

/// Adds `ns` of the calling thread's CPU time that its stopped timer did not sample.
void AddPausedCpu(uint64_t ns);

/// Writes the calling thread's unsampled CPU time added since its last SAMPLE_PAUSED, dated
/// `when` (recording clock), if any. `t` is the thread's state; nullptr: nothing written.
/// Async-signal-safe (the sampler's handler, outside any record of the thread).
void RecordPausedCpu(ThreadState* t, uint64_t when);

/// At the thread's exit (the sampler's key destructor): its unsampled CPU time written, through
/// a state made now where the thread has none (a thread that blocked the signal from its start
/// and recorded nothing else). errno kept.
void RecordPausedCpuAtThreadExit();

/// At the process's end (runtime.cc RecordEnd), `t` the ending thread's state or nullptr: its
/// unsampled CPU time written, and one `trainprof:` line (unless quiet) when threads were not
/// sampled: how many of how many, and why in words.
void FinishSampleLosses(ThreadState* t, bool quiet);

/// Fork child: the parent's counts are not the child's.
void ForgetSampleLossesInForkChild();

}  // namespace trainprof::inject
