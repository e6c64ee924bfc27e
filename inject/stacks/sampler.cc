#include "stacks/sampler.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "capture.h"
#include "config.h"
#include "log.h"
#include "recorder.h"
#include "runtime.h"
#include "stacks/python_async.h"
#include "stacks/real_next.h"
#include "stacks/sample_budget.h"
#include "stacks/sample_losses.h"
#include "stacks/sample_mask.h"
#include "stacks/sample_signal.h"
#include "stacks/stack_room.h"
#include "stacks/stacks.h"
#include "trace_file.h"
#include "trainprof/records.h"

namespace trainprof::inject {
namespace {

// si_value of our timers' signals: tells them from the program's own uses of the signal.
const char g_marker = 0;

std::atomic<bool> g_on{false};
uint32_t g_hz = 0;
int g_signo = 0;
pthread_key_t g_key;
bool g_have_key = false;
std::atomic<uint64_t> g_live_timers{0};  // this process's: RLIMIT_SIGPENDING's share (sample_budget.h)
std::atomic<uint64_t> g_arming_timers{0};  // threads between the budget check and their timer_create

// Initial-exec TLS (no __tls_get_addr in the handler): the calling thread's timer.
thread_local bool tls_armed __attribute__((tls_model("initial-exec"))) = false;
thread_local timer_t tls_timer __attribute__((tls_model("initial-exec"))) = nullptr;
/// The thread has a timer (tls_timer) and it is running; false while paused (the thread blocks
/// the sampling signal: sample_mask.h) and where timer_create failed.
thread_local bool tls_running __attribute__((tls_model("initial-exec"))) = false;
/// The thread has a timer, stopped because the thread blocks the sampling signal.
thread_local bool tls_paused __attribute__((tls_model("initial-exec"))) = false;
/// Inside OnSampleSignal: mask calls made there (libunwind's, a chained program handler's) are
/// the handler's, undone by the kernel as it returns; the timer is left as it is.
thread_local bool tls_in_handler __attribute__((tls_model("initial-exec"))) = false;
/// The thread's CPU time (ns) when its timer was stopped (tls_paused).
thread_local uint64_t tls_paused_at_ns __attribute__((tls_model("initial-exec"))) = 0;
/// The thread's CPU time (ns) its samples so far stand for.
thread_local uint64_t tls_cpu_sampled_ns __attribute__((tls_model("initial-exec"))) = 0;
uint64_t g_period_ns = 1000000;

void CountSampleDropped(uint64_t n) {
  if (TraceFile* f = Rt().file.load(std::memory_order_acquire)) {
    f->header()->samples_dropped.fetch_add(n, std::memory_order_relaxed);
  }
}

uintptr_t InterruptedPc(void* uc) {
#if defined(__x86_64__)
  return static_cast<uintptr_t>(static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(static_cast<ucontext_t*>(uc)->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

// Periods one signal stands for at most: the kernel checks CPU timers at its tick (250 Hz here),
// so at 1000 Hz one signal stands for ~4 periods of the thread's CPU time.
constexpr uint64_t kMaxPeriodsPerSignal = 256;

uint64_t ThreadCpuNs() {
  timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Counts the thread's CPU time from its timer's stop up to `cpu` (its CPU clock, ns) as not
// sampled (sample_losses.h); the next count starts there.
void CountPausedCpu(uint64_t cpu) {
  AddPausedCpu(cpu > tls_paused_at_ns ? cpu - tls_paused_at_ns : 0);
  tls_paused_at_ns = cpu;
}

// Periods of CPU time since the thread's last sample (at least 1), from its own CPU clock: what
// the kernel coalesced into this signal, or counted in si_overrun, or lost to a signal pending
// while the thread was off the CPU.
uint64_t PeriodsSinceLastSample() {
  const uint64_t cpu = ThreadCpuNs();
  uint64_t n = cpu > tls_cpu_sampled_ns ? (cpu - tls_cpu_sampled_ns) / g_period_ns : 0;
  if (n == 0) n = 1;
  tls_cpu_sampled_ns += n * g_period_ns;
  if (tls_cpu_sampled_ns > cpu + g_period_ns) tls_cpu_sampled_ns = cpu;
  return n < kMaxPeriodsPerSignal ? n : kMaxPeriodsPerSignal;
}

void TakeSample(void* uc) {
  if (!g_on.load(std::memory_order_relaxed)) return;
  ThreadState* t = CurrentThread();
  if (t == nullptr) return;
  // Inside a record or a library lock (string table, chunk claim), or a stack capture: writing
  // now would corrupt the half-made record or wait for a lock this thread holds.
  // The periods it stood for are counted as dropped (not left to the thread's next sample).
  if (t->in_record != 0 || t->in_slow != 0) {
    CountSampleDropped(PeriodsSinceLastSample());
    return;
  }
  // The recording clock; with a capture configured that is CLOCK_MONOTONIC ns (trace_clock.h).
  uint64_t now = TraceNow();
  // Outside the capture (--capture-range, --delay, --duration): no sample, as no other event;
  // its periods are spent, not carried into the next capture. CapturedAt is lock-free, read-only.
  if (!CapturedAt(now)) {
    PeriodsSinceLastSample();
    return;
  }
  uint32_t missed = 0;
  bool busy = false;
  const uint32_t stack = TakeSampleStack(t, InterruptedPc(uc), &missed, &busy);
  if (busy) {
    CountSampleDropped(PeriodsSinceLastSample());
    return;
  }
  // One SAMPLE per period of CPU time, so that samples × 1/HZ is the thread's CPU time.
  const uint64_t periods = PeriodsSinceLastSample();
  RecordPausedCpu(t, now);  // CPU time its stopped timer did not sample, since the last
  for (uint64_t i = 0; i < periods; ++i) RecordAt(t, format::rec::Sample{.stack = stack, .python_missed = missed}, now);
}

void OnSampleSignal(int sig, siginfo_t* info, void* uc) {
  const bool outer = !tls_in_handler;
  tls_in_handler = true;
  if (!IsSampleTimer(info, &g_marker)) {
    ChainToProgram(sig, info, uc);
  } else {
    const int saved = errno;
    TakeSample(uc);
    errno = saved;
  }
  if (outer) tls_in_handler = false;
}

// Thread exit (pthread key destructor): the thread's timer goes with it.
void DeleteThreadTimer(void*) {
  if (!tls_armed) return;
  tls_armed = false;
  if (!tls_running && !tls_paused) return;  // timer_create had failed
  const int saved = errno;
  if (tls_paused) CountPausedCpu(ThreadCpuNs());  // blocking the signal to the end
  RecordPausedCpuAtThreadExit();
  tls_running = tls_paused = false;
  timer_delete(tls_timer);
  g_live_timers.fetch_sub(1, std::memory_order_relaxed);
  errno = saved;
}

// ---- pthread_create: every new thread arms its timer first.
using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

std::atomic<CreateFn> g_real_create{nullptr};

CreateFn RealCreate() { return RealNext(&g_real_create, "pthread_create"); }

struct Start {
  void* (*fn)(void*);
  void* arg;
};

void* SampledStart(void* p) {
  Start s = *static_cast<Start*>(p);
  free(p);
  NoteThreadStack();  // its bounds, for the handler's stack-room check (not known there)
  PreparePythonFramesAsync();  // a libpython loaded since (dlsym: not in the handler; cheap once found)
  ArmThreadSampler();
  return s.fn(s.arg);
}

}  // namespace

void InitSamplerKey(const Config& c) {
  if (c.sample_hz > 0 && !g_have_key) g_have_key = pthread_key_create(&g_key, DeleteThreadTimer) == 0;
}

void PrepareSampling(const Config& c, bool ours) {
  g_on.store(false, std::memory_order_relaxed);
  g_hz = 0;
  if (!ours || c.sample_hz == 0) return;
  g_signo = ChooseSampleSignal(OnSampleSignal);
  if (g_signo == 0) {
    if (!c.quiet) LogLine("no free real-time signal for --sample (SIGRTMIN..SIGRTMAX all in use): no CPU samples", nullptr);
    return;
  }
  g_hz = c.sample_hz;
  g_period_ns = 1000000000ull / g_hz;
  NoteSignalQueueLimit();
}

void StartSampling() {
  if (g_hz == 0) return;
  g_on.store(true, std::memory_order_release);
  PreparePythonFramesAsync();
  ArmThreadSampler();
}

void StopSampling() { g_on.store(false, std::memory_order_relaxed); }

void ForgetSamplingInForkChild() {
  StopSampling();
  tls_armed = tls_running = tls_paused = false;
  g_live_timers.store(0, std::memory_order_relaxed);
  g_arming_timers.store(0, std::memory_order_relaxed);  // threads of the parent that were arming are not here
  ForgetSampleLossesInForkChild();
}

namespace {

// Sets `id` going: every 1/HZ s of the thread's CPU time from now; the thread's CPU time so far
// is not sampled. errno is the caller's to keep.
bool RunTimer(timer_t id) {
  const long period_ns = static_cast<long>(g_period_ns);
  const uint64_t cpu = ThreadCpuNs();
  if (tls_paused) CountPausedCpu(cpu);  // once, should timer_settime fail and the timer stay stopped
  tls_cpu_sampled_ns = cpu;
  struct itimerspec its;
  its.it_interval.tv_sec = period_ns / 1000000000L;
  its.it_interval.tv_nsec = period_ns % 1000000000L;
  its.it_value = its.it_interval;
  return timer_settime(id, 0, &its, nullptr) == 0;
}

}  // namespace

void ArmThreadSampler() {
  if (tls_armed || !g_on.load(std::memory_order_relaxed)) return;
  tls_armed = true;  // first: a sample arriving meanwhile must not arm a second timer
  NoteThreadTried();
  uint64_t queued = 0;
  // Counted as being made from before the check until it is live (or failed): see the budget.
  const uint64_t arming = g_arming_timers.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (!MayHoldAnotherQueuedSignal(g_live_timers.load(std::memory_order_acquire), arming, &queued)) {
    g_arming_timers.fetch_sub(1, std::memory_order_acq_rel);
    NoteThreadNotSampled(ThreadLost::kSignalQueueShare, 0, queued);
    return;
  }
  const int saved = errno;
  struct sigevent sev;
  memset(&sev, 0, sizeof(sev));
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = g_signo;
  sev.sigev_value.sival_ptr = const_cast<char*>(&g_marker);
  sev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  timer_t id;
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &id) != 0) {
    g_arming_timers.fetch_sub(1, std::memory_order_acq_rel);
    NoteThreadNotSampled(ThreadLost::kTimerCreate, errno, 0);
    errno = saved;
    return;  // tls_armed stays set: not tried again on this thread
  }
  g_live_timers.fetch_add(1, std::memory_order_acq_rel);
  g_arming_timers.fetch_sub(1, std::memory_order_acq_rel);
  // A thread that blocks the signal already (the mask its creator had at pthread_create, or an
  // exec'd image's inherited mask): its timer waits, stopped, until the thread unblocks it.
  if (kMaskCallsInterposed && SampleSignalBlockedHere(g_signo)) {
    tls_timer = id;
    tls_paused = true;
    tls_paused_at_ns = ThreadCpuNs();
  } else if (!RunTimer(id)) {
    const int err = errno;
    timer_delete(id);
    g_live_timers.fetch_sub(1, std::memory_order_relaxed);
    NoteThreadNotSampled(ThreadLost::kTimerSettime, err, 0);
    errno = saved;
    return;
  } else {
    tls_timer = id;
    tls_running = true;
  }
  if (g_have_key) pthread_setspecific(g_key, const_cast<char*>(&g_marker));
  errno = saved;
}

bool PauseThreadSampler() {
  if (!tls_running || tls_in_handler) return false;
  // Blocked already (a handler of another signal whose sa_mask holds it, the raw system call):
  // the kernel gives the thread its mask back on its own, without a call to resume the timer.
  if (kMaskCallsInterposed && SampleSignalBlockedHere(g_signo)) return false;
  const int saved = errno;
  struct itimerspec off;
  memset(&off, 0, sizeof(off));
  // In a vfork child (the parent's TLS, a process without timers) this fails: nothing changes.
  const bool ok = timer_settime(tls_timer, 0, &off, nullptr) == 0;
  errno = saved;
  if (!ok) return false;
  tls_running = false;
  tls_paused = true;
  tls_paused_at_ns = ThreadCpuNs();
  errno = saved;
  return true;
}

void ResumeThreadSampler() {
  if (!tls_paused || tls_in_handler) return;
  const int saved = errno;
  if (RunTimer(tls_timer)) {
    tls_paused = false;
    tls_running = true;
  }
  errno = saved;
}

bool IsSamplerSignal(const siginfo_t* info) { return IsSampleTimer(info, &g_marker); }

void FinishSampling(ThreadState* t, bool quiet) {
  if (g_hz == 0) return;
  if (tls_paused) CountPausedCpu(ThreadCpuNs());  // the ending thread blocks the signal
  FinishSampleLosses(t, quiet);
}

uint32_t SampleHz() { return g_hz; }
int SampleSignalNumber() { return g_hz != 0 ? g_signo : 0; }

}  // namespace trainprof::inject

using namespace trainprof::inject;

// Not in the sanitizer builds: ASan and TSan intercept pthread_create and start the thread through
// their own start routine, which our wrapper would run before (instrumented code on a thread the
// sanitizer has not set up: ASan reports a stack-buffer-overflow of thread T-1, TSan crashes).
// There, threads are sampled once they record something (CurrentThreadSlow; docs/testing.md,
// "Skipped tests").
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                                     void* (*start)(void*), void* arg) {
  CreateFn real = RealCreate();
  if (real == nullptr) return EAGAIN;
  if (!g_on.load(std::memory_order_relaxed)) return real(thread, attr, start, arg);
  auto* s = static_cast<Start*>(malloc(sizeof(Start)));
  if (s == nullptr) return real(thread, attr, start, arg);
  s->fn = start;
  s->arg = arg;
  int rc = real(thread, attr, SampledStart, s);
  if (rc != 0) free(s);
  return rc;
}
#endif  // neither sanitizer
