#include "stacks/sample_mask.h"

#include <errno.h>
#include <time.h>

#include <atomic>

#include "stacks/real_next.h"
#include "stacks/sample_signal.h"
#include "stacks/sampler.h"

namespace trainprof::inject {
namespace {

using MaskFn = int (*)(int, const sigset_t*, sigset_t*);
using TimedWaitFn = int (*)(const sigset_t*, siginfo_t*, const struct timespec*);

std::atomic<MaskFn> g_real_pthread_sigmask{nullptr};
std::atomic<MaskFn> g_real_sigprocmask{nullptr};
std::atomic<TimedWaitFn> g_real_sigtimedwait{nullptr};

// What a mask call does to the sampling signal's blocked state.
enum class Effect { kNone, kBlocks, kUnblocks };

Effect EffectOf(int how, const sigset_t* set, int ours) {
  if (set == nullptr || ours == 0 || sigismember(set, ours) != 1) {
    // SIG_SETMASK without the signal unblocks it; SIG_BLOCK/SIG_UNBLOCK without it leave it.
    return how == SIG_SETMASK && set != nullptr && ours != 0 ? Effect::kUnblocks : Effect::kNone;
  }
  if (how == SIG_BLOCK || how == SIG_SETMASK) return Effect::kBlocks;
  return how == SIG_UNBLOCK ? Effect::kUnblocks : Effect::kNone;
}

// The mask call `real` with the sampler's timer stopped before the signal is blocked and set going
// after it is unblocked. Returns what `real` returns; `failed` tells its failure from success.
template <typename Call>
int AroundMaskCall(int how, const sigset_t* set, Call real, bool (*failed)(int)) {
  const Effect e = EffectOf(how, set, SampleSignal());
  const bool paused = e == Effect::kBlocks && PauseThreadSampler();
  const int rc = real();
  if (failed(rc)) {
    if (paused) ResumeThreadSampler();  // the mask is unchanged
  } else if (e == Effect::kUnblocks) {
    ResumeThreadSampler();
  }
  return rc;
}

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// sigtimedwait that never returns a signal of the sampler's timers: one it accepts is dropped and
// the wait goes on for what is left of `timeout` (nullptr: no limit).
int TimedWaitWithoutSamples(const sigset_t* set, siginfo_t* info, const struct timespec* timeout) {
  TimedWaitFn real = RealNext(&g_real_sigtimedwait, "sigtimedwait");
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  const int ours = SampleSignal();
  if (set == nullptr || ours == 0 || sigismember(set, ours) != 1) return real(set, info, timeout);
  siginfo_t local;
  siginfo_t* out = info != nullptr ? info : &local;
  const int64_t deadline = timeout != nullptr ? MonotonicNs() + timeout->tv_sec * 1000000000ll + timeout->tv_nsec : 0;
  struct timespec left;
  const struct timespec* wait_for = timeout;
  for (;;) {
    const int sig = real(set, out, wait_for);
    if (sig != ours || !IsSamplerSignal(out)) return sig;
    if (timeout == nullptr) continue;
    const int64_t rest = deadline - MonotonicNs();
    if (rest <= 0) {
      errno = EAGAIN;
      return -1;
    }
    left.tv_sec = static_cast<time_t>(rest / 1000000000);
    left.tv_nsec = static_cast<long>(rest % 1000000000);
    wait_for = &left;
  }
}

bool NonZero(int rc) { return rc != 0; }

}  // namespace

int RealPthreadSigmask(int how, const sigset_t* set, sigset_t* old) {
  MaskFn real = RealNext(&g_real_pthread_sigmask, "pthread_sigmask");
  return real != nullptr ? real(how, set, old) : ENOSYS;
}

bool SampleSignalBlockedHere(int sig) {
  sigset_t now;
  return RealPthreadSigmask(SIG_BLOCK, nullptr, &now) == 0 && sigismember(&now, sig) == 1;
}

}  // namespace trainprof::inject

// ---- interposed libc entry points (exported by exports.map) -----------------------------------
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
using namespace trainprof::inject;

extern "C" {

__attribute__((visibility("default"))) int pthread_sigmask(int how, const sigset_t* set, sigset_t* old) {
  return AroundMaskCall(how, set, [&] { return RealPthreadSigmask(how, set, old); }, NonZero);
}

__attribute__((visibility("default"))) int sigprocmask(int how, const sigset_t* set, sigset_t* old) {
  MaskFn real = RealNext(&g_real_sigprocmask, "sigprocmask");
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return AroundMaskCall(how, set, [&] { return real(how, set, old); }, NonZero);
}

__attribute__((visibility("default"))) int sigtimedwait(const sigset_t* set, siginfo_t* info,
                                                        const struct timespec* timeout) {
  return TimedWaitWithoutSamples(set, info, timeout);
}

__attribute__((visibility("default"))) int sigwaitinfo(const sigset_t* set, siginfo_t* info) {
  return TimedWaitWithoutSamples(set, info, nullptr);
}

// As glibc's: waits on through EINTR, returns the error number.
__attribute__((visibility("default"))) int sigwait(const sigset_t* set, int* sig) {
  siginfo_t info;
  int rc;
  do {
    rc = TimedWaitWithoutSamples(set, &info, nullptr);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) return errno;
  *sig = rc;
  return 0;
}

}  // extern "C"
#endif  // neither sanitizer
