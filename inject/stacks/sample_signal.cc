#include "stacks/sample_signal.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "stacks/real_next.h"
#include "stacks/sample_mask.h"

namespace trainprof::inject {
namespace {

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);

std::atomic<int> g_signo{0};

// The program's action for g_signo, double-buffered: a writer fills the other slot and then
// flips g_current, so a handler never reads a half-written action (two programs' threads setting
// it at the same instant: the last flip wins, as with the kernel's).
struct sigaction g_program[2];
std::atomic<int> g_current{0};

// The sigaction that installs our handler and gives the program's signals back to the kernel: libc's
// (the next definition after ours). In the TSan build, TSan's interceptor instead: TSan wraps the
// handlers it installs and runs them where its runtime is consistent. A handler installed past it,
// with libc's, can interrupt TSan inside its own locks (a trace switch while `import torch`
// allocated), and our instrumented handler then waits on the lock its thread holds: the profiled
// program hangs (2 runs in 25 of tests/e2e/test_sampling.py's `import torch` at 1000 Hz).
SigactionFn RealSigaction() {
#if defined(__SANITIZE_THREAD__)
  return &::sigaction;
#else
  static std::atomic<SigactionFn> real{nullptr};
  return RealNext(&real, "sigaction");
#endif
}

void SetProgramAction(const struct sigaction& a) {
  const int next = 1 - g_current.load(std::memory_order_relaxed);
  g_program[next] = a;
  g_current.store(next, std::memory_order_release);
}

const struct sigaction& ProgramAction() { return g_program[g_current.load(std::memory_order_acquire)]; }

#if !defined(__SANITIZE_THREAD__)  // the interposed sigaction's (below)
// The program's view of sigaction on our signal: its own action back, the new one recorded.
int ProgramSigaction(const struct sigaction* act, struct sigaction* old) {
  if (old != nullptr) *old = ProgramAction();
  if (act != nullptr) SetProgramAction(*act);
  return 0;
}
#endif

}  // namespace

int ChooseSampleSignal(SampleHandler handler) {
  if (int s = g_signo.load(std::memory_order_acquire); s != 0) return s;
  SigactionFn real = RealSigaction();
  if (real == nullptr) return 0;
  for (int s = SIGRTMAX; s >= SIGRTMIN; --s) {
    struct sigaction cur;
    if (real(s, nullptr, &cur) != 0) continue;
    if ((cur.sa_flags & SA_SIGINFO) != 0 || cur.sa_handler != SIG_DFL) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (real(s, &sa, nullptr) != 0) return 0;
    SetProgramAction(cur);
    g_signo.store(s, std::memory_order_release);
    return s;
  }
  return 0;
}

int SampleSignal() { return g_signo.load(std::memory_order_acquire); }

void ChainToProgram(int sig, siginfo_t* info, void* uc) {
  const struct sigaction a = ProgramAction();
  if ((a.sa_flags & SA_SIGINFO) == 0 && a.sa_handler == SIG_IGN) return;
  if ((a.sa_flags & SA_SIGINFO) == 0 && a.sa_handler == SIG_DFL) {
    // The default action of a real-time signal ends the process: give the kernel the signal back
    // with SIG_DFL; blocked while this handler runs, it is delivered as the handler returns.
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    if (SigactionFn real = RealSigaction()) real(sig, &dfl, nullptr);
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
    return;
  }
  if ((a.sa_flags & SA_RESETHAND) != 0) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    SetProgramAction(dfl);
  }
  // The real call, not our interposed one (sample_mask.h): the sampler's timer stays as it is (the
  // mask here is the handler's, which the kernel replaces when the handler returns).
  sigset_t old;
  RealPthreadSigmask(SIG_BLOCK, &a.sa_mask, &old);
  if ((a.sa_flags & SA_SIGINFO) != 0) {
    a.sa_sigaction(sig, info, uc);
  } else {
    a.sa_handler(sig);
  }
  RealPthreadSigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace trainprof::inject

using trainprof::inject::g_signo;

// ---- interposed libc entry points (exported by exports.map) -----------------------------------
// Not in the TSan build: TSan intercepts these functions itself and calls them from its own
// start-up (sigaction, before its runtime is ready: our instrumented copy crashes it) and around
// its thread start (pthread_create: our start routine would run before TSan set the thread up).
// There, threads are sampled once they record something (CurrentThreadSlow) and the program's
// own sigaction on the sampling signal replaces ours (docs/testing.md, "Skipped tests").
#if !defined(__SANITIZE_THREAD__)
extern "C" {

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  const int ours = g_signo.load(std::memory_order_acquire);
  if (ours != 0 && sig == ours) return trainprof::inject::ProgramSigaction(act, old);
  trainprof::inject::SigactionFn real = trainprof::inject::RealSigaction();
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return real(sig, act, old);
}

// glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its handler).
__attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler) {
  struct sigaction sa, old;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sig > 0 && sig < NSIG) sigaddset(&sa.sa_mask, sig);
  if (sigaction(sig, &sa, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

}  // extern "C"
#endif  // !__SANITIZE_THREAD__
