// The sampling signal kept out of sight of a thread that blocks it (`trainprof run --sample`,
// issue 35). A thread that blocks every signal and waits with sigwaitinfo, sigtimedwait, sigwait,
// a signalfd or sigsuspend would otherwise be handed the sampler's timer signal, pending since
// the thread blocked it, in place of the signal it waited for.
//
//   pthread_sigmask, sigprocmask (interposed here, exported):
//     the call blocks the sampling signal   ─► the thread's timer stopped first (sampler.h:
//                                              PauseThreadSampler), then the mask set: a signal
//                                              of the timer pending before is delivered to our
//                                              handler while the signal is still unblocked
//     the call unblocks it                  ─► the mask set, then the timer set going again
//     anything else (the usual case)        ─► the real call; cost: a load and a sigismember
//   a thread that starts with the signal blocked (pthread_create inherits its creator's mask;
//   an exec'd image the exec'ing thread's): its timer is made stopped (SampleSignalBlockedHere)
//   sigwait, sigwaitinfo, sigtimedwait (interposed here, exported): a signal of the sampler's
//     timers that the call accepts is dropped and the wait goes on (the timeout's remainder):
//     for masks set without the functions above (the raw rt_sigprocmask system call, a signal
//     handler's sa_mask). The program's own uses of the signal number are returned as they come.
// Stopping the timer is chosen over filtering each waiting call because it covers every way to
// take a blocked signal (signalfd's read, io_uring, ppoll with a mask) at two timer_settime calls
// per change of the signal's blocked state, nothing per call that leaves it as it is.
// Inside a signal handler the kernel gives the thread its mask back as the handler returns: mask
// calls there that block the signal (libunwind's in our own handler, a handler whose sa_mask holds
// it) leave the timer as it is (sampler.h, PauseThreadSampler).
// Not covered: a mask set with the raw system call, then waited on with a signalfd.
// Not in the sanitizer builds: their runtimes intercept these functions before us (as
// pthread_create, sampler.cc); there a thread that blocks the signal is sampled as before.
#pragma once

#include <signal.h>

namespace trainprof::inject {

/// Whether this build interposes the mask calls (not under ASan or TSan).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kMaskCallsInterposed = false;
#else
inline constexpr bool kMaskCallsInterposed = true;
#endif

/// Whether `sig` is blocked on the calling thread now (the real pthread_sigmask; false if that
/// fails). Async-signal-safe.
bool SampleSignalBlockedHere(int sig);

/// pthread_sigmask as libc defines it, past our interposition (for the library's own use inside
/// its signal handler, where the timer must not be stopped or started: the kernel restores the
/// mask when the handler returns). Returns the error number as pthread_sigmask does.
int RealPthreadSigmask(int how, const sigset_t* set, sigset_t* old);

}  // namespace trainprof::inject
