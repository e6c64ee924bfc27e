// A thread that blocks every signal and then waits for one with a call that takes blocked signals
// (sigwaitinfo, sigtimedwait, sigwait, a signalfd) or with sigsuspend, for `trainprof run --sample`
// (tests/e2e/test_sampling.py): it spins on the CPU before and while everything is blocked, so the
// sampler's timer would fire meanwhile, and checks that what it waited for is what it got.
//
//   tp_sample_blocked_wait MODE [inherited]
//     sigwaitinfo, sigtimedwait, sigwait: SIGALRM from alarm(1), waited for with a full set
//     signalfd:        SIGTERM sent by a child process, read from a signalfd of a full set
//     signalfd-thread: the same, sent by another thread of this process
//     sigsuspend:      sigsuspend with a full mask except SIGUSR1 (sent by another thread): must
//                      wake with SIGUSR1's handler run
//     sigsuspend-classic: the same with a mask of the classic signals 1..31 except SIGUSR1 (a
//                      program that knows no real-time signals)
//   inherited: the waiter is a thread made after the main thread blocked everything (the mask
//              inherited through pthread_create; the thread never sets a mask itself)
//
// The main thread spins kFreeMs of CPU before and after; a "free" thread that never blocks the
// real-time signals spins kFreeMs meanwhile. Prints "tid waiter N", "tid free N", "tid main N",
// "cpu waiter_blocked MS" (the waiter's CPU time while it blocked everything), "cpu main_total MS"
// (the main thread's CPU time, start-up included), then "MODE ok", or
// "MODE: ..." and exit status 1.
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>

namespace {

constexpr int kFreeMs = 150;
constexpr int kBlockedSpinMs = 200;

volatile unsigned long g_sink;
std::string g_mode;
std::atomic<pid_t> g_waiter_tid{0};
std::atomic<bool> g_waiting{false};
volatile sig_atomic_t g_usr1_seen;
std::string g_result;
double g_waiter_blocked_ms;

double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void SpinCpuMs(double ms) {
  const double end = ThreadCpuMs() + ms;
  unsigned long x = g_sink;
  while (ThreadCpuMs() < end) {
    for (int i = 0; i < 20000; ++i) {
      x = x * 2862933555777941757ul + 1;
      asm volatile("" : "+r"(x));
    }
  }
  g_sink = x;
}

pid_t Tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

void SleepMs(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

void OnUsr1(int) { g_usr1_seen = 1; }

std::string Got(int sig) { return "waited for one signal, got signal " + std::to_string(sig); }

// Another thread (with everything blocked, as its creator) sends `sig` once the waiter waits.
void* Sender(void* p) {
  const int sig = static_cast<int>(reinterpret_cast<intptr_t>(p));
  while (!g_waiting.load()) SleepMs(5);
  SleepMs(300);  // the waiter is inside its call by now
  if (sig == SIGUSR1) {
    syscall(SYS_tgkill, getpid(), g_waiter_tid.load(), sig);
  } else {
    kill(getpid(), sig);
  }
  return nullptr;
}

// The waiting itself, on a thread that blocks every signal.
void Wait() {
  g_waiter_tid = Tid();
  sigset_t all;
  sigfillset(&all);
  const bool alarm_mode = g_mode == "sigwaitinfo" || g_mode == "sigtimedwait" || g_mode == "sigwait";
  if (alarm_mode) alarm(1);
  pthread_t sender;
  bool have_sender = false;
  int fd = -1;
  if (g_mode == "signalfd") {
    fd = signalfd(-1, &all, SFD_CLOEXEC);
    pid_t child = fork();
    if (child == 0) {
      while (true) {  // until the parent waits (its spin below takes ~kBlockedSpinMs)
        SleepMs(kBlockedSpinMs + 400);
        kill(getppid(), SIGTERM);
        _exit(0);
      }
    }
  } else if (g_mode == "signalfd-thread") {
    fd = signalfd(-1, &all, SFD_CLOEXEC);
    have_sender = pthread_create(&sender, nullptr, Sender, reinterpret_cast<void*>(intptr_t{SIGTERM})) == 0;
  } else if (g_mode == "sigsuspend" || g_mode == "sigsuspend-classic") {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = OnUsr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, nullptr);
    have_sender = pthread_create(&sender, nullptr, Sender, reinterpret_cast<void*>(intptr_t{SIGUSR1})) == 0;
  }
  const double before = ThreadCpuMs();
  SpinCpuMs(kBlockedSpinMs);  // CPU time with every signal blocked
  g_waiter_blocked_ms = ThreadCpuMs() - before;
  g_waiting = true;
  if (g_mode == "sigwaitinfo" || g_mode == "sigtimedwait") {
    siginfo_t info;
    timespec limit{10, 0};
    int sig = g_mode == "sigwaitinfo" ? sigwaitinfo(&all, &info) : sigtimedwait(&all, &info, &limit);
    g_result = sig == SIGALRM && info.si_signo == SIGALRM ? "ok" : Got(sig);
  } else if (g_mode == "sigwait") {
    int sig = 0;
    int rc = sigwait(&all, &sig);
    g_result = rc == 0 && sig == SIGALRM ? "ok" : Got(sig);
  } else if (fd >= 0) {
    signalfd_siginfo si;
    ssize_t n = read(fd, &si, sizeof(si));
    g_result = n == sizeof(si) && si.ssi_signo == SIGTERM ? "ok" : Got(n == sizeof(si) ? static_cast<int>(si.ssi_signo) : -1);
    close(fd);
    int status;
    while (waitpid(-1, &status, 0) > 0) {
    }
  } else if (g_mode == "sigsuspend" || g_mode == "sigsuspend-classic") {
    sigset_t mask;
    if (g_mode == "sigsuspend") {
      sigfillset(&mask);
    } else {
      sigemptyset(&mask);
      for (int s = 1; s < 32; ++s) sigaddset(&mask, s);
    }
    sigdelset(&mask, SIGUSR1);
    sigsuspend(&mask);
    g_result = g_usr1_seen ? "ok" : "sigsuspend woke without SIGUSR1";
  } else {
    g_result = "unknown mode";
  }
  if (have_sender) pthread_join(sender, nullptr);
}

void* WaitOnThread(void*) {
  Wait();
  return nullptr;
}

// Never blocks the real-time signals: the program's own signals only (they are process-directed
// and would end the process here otherwise).
void* Free(void*) {
  sigset_t own;
  sigemptyset(&own);
  sigaddset(&own, SIGALRM);
  sigaddset(&own, SIGTERM);
  sigaddset(&own, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &own, nullptr);
  printf("tid free %d\n", Tid());
  SpinCpuMs(kFreeMs);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: tp_sample_blocked_wait MODE [inherited]\n");
    return 2;
  }
  g_mode = argv[1];
  const bool inherited = argc > 2 && strcmp(argv[2], "inherited") == 0;
  printf("tid main %d\n", Tid());
  SpinCpuMs(kFreeMs / 2);
  pthread_t free_thread;
  if (pthread_create(&free_thread, nullptr, Free, nullptr) != 0) return 1;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  if (inherited) {
    pthread_t waiter;
    if (pthread_create(&waiter, nullptr, WaitOnThread, nullptr) != 0) return 1;
    pthread_join(waiter, nullptr);
  } else {
    Wait();
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  SpinCpuMs(kFreeMs / 2);
  pthread_join(free_thread, nullptr);
  printf("tid waiter %d\n", static_cast<int>(g_waiter_tid.load()));
  printf("cpu waiter_blocked %.0f\n", g_waiter_blocked_ms);
  printf("cpu main_total %.0f\n", ThreadCpuMs());
  printf("%s %s\n", g_mode.c_str(), g_result.c_str());
  fflush(stdout);
  return g_result == "ok" ? 0 : 1;
}
