// A program that needs queued signals of its own while many of its threads are sampled, for
// `trainprof run --sample` under a low RLIMIT_SIGPENDING (`ulimit -i 16`; tests/e2e/
// test_sample_signals.py): each sampled thread's timer holds one of the user's queued-signal
// slots. 32 threads spin 20 ms of CPU each and stay alive; then the main thread makes a POSIX
// timer and queues 2 real-time signals to itself (blocked). "sigpending ok" and exit status 0 when
// both succeed, else what failed and 1.
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "cpu_spin.h"

namespace {

constexpr int kThreads = 32;
pthread_barrier_t g_barrier;

void* Worker(void*) {
  SpinCpuMs(20);
  pthread_barrier_wait(&g_barrier);  // all alive: all timers held
  pthread_barrier_wait(&g_barrier);
  return nullptr;
}

}  // namespace

int main() {
  // The queued signal is process-directed: blocked in every thread (inherited) or one would take it.
  sigset_t own;
  sigemptyset(&own);
  sigaddset(&own, SIGRTMIN + 3);
  pthread_sigmask(SIG_BLOCK, &own, nullptr);
  pthread_barrier_init(&g_barrier, nullptr, kThreads + 1);
  pthread_t t[kThreads];
  for (auto& th : t) pthread_create(&th, nullptr, Worker, nullptr);
  pthread_barrier_wait(&g_barrier);
  int bad = 0;
  struct sigevent sev;
  memset(&sev, 0, sizeof(sev));
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGRTMIN + 2;
  timer_t id;
  if (timer_create(CLOCK_MONOTONIC, &sev, &id) != 0) {
    printf("the program's timer_create: %s\n", strerror(errno));
    bad = 1;
  }
  for (int i = 0; i < 2 && bad == 0; ++i) {
    union sigval v;
    v.sival_int = i;
    if (sigqueue(getpid(), SIGRTMIN + 3, v) != 0) {
      printf("the program's sigqueue %d: %s\n", i, strerror(errno));
      bad = 1;
    }
  }
  pthread_barrier_wait(&g_barrier);
  for (auto& th : t) pthread_join(th, nullptr);
  printf(bad != 0 ? "sigpending failed\n" : "sigpending ok\n");
  return bad;
}
