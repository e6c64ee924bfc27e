// The CPU sampler's signal (`trainprof run --sample`): a free real-time signal, shared with the
// program if it later wants that signal too.
//
//   ChooseSampleSignal: SIGRTMAX down to SIGRTMIN, the first whose disposition is SIG_DFL;
//                       our handler installed on it (SA_SIGINFO | SA_RESTART)
//   the program's sigaction()/signal() for that signal (interposed here, exported) are recorded,
//   not applied: the program sees its own action back (old action, later queries), and our
//   handler passes it every signal that is not our timer's (ChainToProgram):
//     ours:   si_code == SI_TIMER and si_value == the sampler's marker (one per process)
//     theirs: anything else (kill, sigqueue, tgkill, their own timers) ─► their handler with their
//             sa_mask added, SA_RESETHAND honoured; SIG_IGN: dropped; SIG_DFL: the default action
//             (the signal re-raised with SIG_DFL: a real-time signal's default ends the process)
// Not covered: a program that sets the action with the raw rt_sigaction system call, or with
// sigset()/sysv_signal(); a signal the program blocks is sampled when it unblocks it.
#pragma once

#include <signal.h>

namespace trainprof::inject {

using SampleHandler = void (*)(int, siginfo_t*, void*);

/// Picks a free real-time signal and installs `handler` on it (once per process image: a fork
/// child keeps its parent's). Returns the signal, 0 when none is free or sigaction failed.
int ChooseSampleSignal(SampleHandler handler);

/// The chosen signal (0: none).
int SampleSignal();

/// Whether the signal `info` describes came from one of our timers (`marker` in si_value).
inline bool IsSampleTimer(const siginfo_t* info, const void* marker) {
  return info->si_code == SI_TIMER && info->si_value.sival_ptr == marker;
}

/// Gives a signal that is not ours to the action the program set for it (async-signal-safe).
void ChainToProgram(int sig, siginfo_t* info, void* uc);

}  // namespace trainprof::inject
