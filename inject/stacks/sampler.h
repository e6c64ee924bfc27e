// CPU sampling (`trainprof run --sample=HZ`, issue 15): every thread of a recording process has
// a timer on its own CPU time that sends it the sampling signal every 1/HZ s of CPU time; the
// handler writes one SAMPLE record (its stack: native frames, then Python frames) to the thread's
// buffer.
//
//   PrepareSampling (start, fork child; before the trace file's header): the signal
//                   (sample_signal.h) and HZ, for the header's kStacks metadata
//   StartSampling   (once the file is open): on; the calling thread's timer armed
//   a thread's timer: timer_create(CLOCK_THREAD_CPUTIME_ID, SIGEV_THREAD_ID to gettid()),
//                   armed in the start routine of every pthread_create (interposed), else when
//                   the library first sees the thread (CurrentThreadSlow); deleted at the thread's
//                   exit (a pthread key made before the thread states' key, so it runs first)
//   the thread blocks the signal (pthread_sigmask/sigprocmask, interposed: sample_mask.h; or
//                   a mask it started with): its timer is stopped first, and set going again once
//                   the thread unblocks the signal, so a thread that blocks it never has it
//                   pending (sigwaitinfo, a signalfd, sigsuspend would see it); its CPU time
//                   meanwhile is not sampled. exec: the exec'ing thread's timer stopped first
//   fork child:     timers are not inherited: the forking thread's is made anew (StartSampling);
//                   native frames are off there (stacks.h): samples carry Python frames only,
//                   or stack 0
//   the handler:    not our timer's signal ─► the program's action (ChainToProgram); the thread
//                   inside a record, a library lock or a stack capture ─► dropped and counted
//                   (FileHeader::samples_dropped); else capture ─► StackTable ─► one SAMPLE
//                   per period of the thread's CPU time since its previous one (its CPU clock:
//                   the kernel checks CPU timers at its tick and coalesces expiries)
// Async-signal-safe throughout the handler: errno saved and restored, no malloc, no lock the
// interrupted code can hold on this thread.
#pragma once

#include <signal.h>

#include <cstdint>

namespace trainprof::inject {

struct Config;
struct ThreadState;

/// Chooses the signal and notes HZ (c.sample_hz) when this process records (`ours`) and samples.
/// At start and in fork children (async-signal-safe there).
void PrepareSampling(const Config& c, bool ours);

/// Turns sampling on (when prepared) and arms the calling thread's timer.
void StartSampling();

/// Off for this process (RecordEnd; a fork child before it decides): later signals of our timers
/// write nothing. The timers stay until their threads end.
void StopSampling();

/// Fork child, first: sampling off, and the forking thread's timer forgotten (timers are not
/// inherited; its id may name a timer the child makes itself). StartRecording turns it on again
/// in a recorded child.
void ForgetSamplingInForkChild();

/// The calling thread's timer, when sampling is on and the thread has none (idempotent; cheap).
void ArmThreadSampler();

/// Stops the calling thread's timer (before the thread blocks the sampling signal, or execs).
/// Returns whether a running timer was stopped; false where the thread has none, its timer is
/// stopped already, the signal is blocked already (inside a signal handler whose mask holds it:
/// the kernel unblocks it as the handler returns, with no call to resume the timer), inside the
/// sampler's own handler, or timer_settime failed (a vfork child: the parent's TLS, no timers). Any
/// signal of the timer pending before is delivered to the (unblocked) handler as this returns.
/// Async-signal-safe; errno kept.
bool PauseThreadSampler();

/// Sets the calling thread's stopped timer going again (after the thread unblocked the signal,
/// or an exec failed); the CPU time it was stopped for is not sampled. No-op where it is not
/// stopped, and inside the sampler's own handler. Async-signal-safe; errno kept.
void ResumeThreadSampler();

/// At the process's end (after StopSampling), `t` the ending thread's state or nullptr: what
/// the sampler could not sample written and said (sample_losses.h). No-op without --sample.
void FinishSampling(ThreadState* t, bool quiet);

/// Whether `info` is a signal of one of the sampler's timers (not the program's own use of the
/// signal number).
bool IsSamplerSignal(const siginfo_t* info);

/// Makes the pthread key whose destructor deletes a thread's timer. At start-up, before
/// InitThreadStates, when c.sample_hz > 0.
void InitSamplerKey(const Config& c);

/// Sampling rate (0: off) and signal (0: none), as the header's kStacks metadata says them.
uint32_t SampleHz();
int SampleSignalNumber();

}  // namespace trainprof::inject
