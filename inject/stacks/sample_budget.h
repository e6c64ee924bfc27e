// The sampler's share of RLIMIT_SIGPENDING (`trainprof run --sample`, issue 35). Each thread's
// timer holds one of the real user's queued-signal slots for as long as it exists, and the
// program's own timer_create and sigqueue of real-time signals fail with EAGAIN once the user
// has RLIMIT_SIGPENDING of them: with `ulimit -i 16` the timers of 16 threads left the program
// none. The sampler keeps to half of the limit:
//
//   a new timer ─► this process's timers + those being made ≤ limit/16 ─► made (no check: far
//                  from the limit)
//                  else the user's queued signals now (SigQ, /proc/self/status) + the timers
//                  being made (this one included) ≤ limit/2
//                  ─► made; else the thread runs unsampled (sample_losses.h counts and
//                     records it)
// The default limit (tens of thousands) never reads /proc; a low one reads it once per new
// thread (one open, a few 128-byte reads, close: no allocation, async-signal-safe).
#pragma once

#include <cstdint>

namespace trainprof::inject {

/// Reads RLIMIT_SIGPENDING's soft limit (at PrepareSampling; RLIM_INFINITY: no bound).
void NoteSignalQueueLimit();

/// RLIMIT_SIGPENDING's soft limit now; 0: unlimited (RLIM_INFINITY), or getrlimit failed.
/// Async-signal-safe; errno kept.
uint64_t SignalQueueLimitNow();

/// Whether the calling thread may make one more timer, `own` being this process's live timers and
/// `arming` the threads (the caller included, so ≥ 1) between this check and their timer_create:
/// threads started together would otherwise each read the same count and all make one (9 timers
/// under `ulimit -i 16`). When not, `*queued` is the user's queued signals read (else 0).
/// Async-signal-safe; errno kept.
bool MayHoldAnotherQueuedSignal(uint64_t own, uint64_t arming, uint64_t* queued);

}  // namespace trainprof::inject
