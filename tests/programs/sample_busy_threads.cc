// Busy threads for `trainprof run --sample` under a low RLIMIT_SIGPENDING (`ulimit -i 8`;
// tests/e2e/test_sample_signals.py, the hostile pass's case): each sampled thread's timer holds
// one of the user's queued-signal slots, so most of these threads get no timer and are not
// sampled; the trace and the report must say how many.
//   tp_sample_busy_threads [THREADS [MS [fill]]]
// The main thread spins MS ms of CPU, then THREADS threads (default 32) each spin MS ms (default
// 60) and stay alive until all have spun. With "fill", the main thread first queues real-time
// signals to itself (blocked) until sigqueue fails with EAGAIN: the user's queue is then full, so
// every thread's timer_create fails (EAGAIN) rather than the sampler refusing it. Prints
// "queued N" (fill), "worker TID" for each thread, "main TID" and "busy ok"; exit status 0.
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cpu_spin.h"

namespace {

pthread_barrier_t g_barrier;
double g_ms = 60;

void* Worker(void*) {
  printf("worker %ld\n", static_cast<long>(syscall(SYS_gettid)));
  SpinCpuMs(g_ms);
  pthread_barrier_wait(&g_barrier);  // all alive until all have spun: every timer held at once
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 32;
  if (argc > 2) g_ms = atof(argv[2]);
  const bool fill = argc > 3 && strcmp(argv[3], "fill") == 0;
  if (fill) {
    // Process-directed and blocked in every thread (inherited), so that none takes it.
    sigset_t own;
    sigemptyset(&own);
    sigaddset(&own, SIGRTMIN + 3);
    pthread_sigmask(SIG_BLOCK, &own, nullptr);
    int queued = 0;
    union sigval v;
    v.sival_int = 0;
    while (queued < 1 << 20 && sigqueue(getpid(), SIGRTMIN + 3, v) == 0) ++queued;
    printf("queued %d (%s)\n", queued, strerror(errno));
  }
  printf("main %ld\n", static_cast<long>(syscall(SYS_gettid)));
  SpinCpuMs(g_ms);
  pthread_barrier_init(&g_barrier, nullptr, static_cast<unsigned>(threads));
  std::vector<pthread_t> t(static_cast<size_t>(threads));
  for (auto& th : t) {
    if (pthread_create(&th, nullptr, Worker, nullptr) != 0) {
      printf("pthread_create failed\n");
      return 1;
    }
  }
  for (auto& th : t) pthread_join(th, nullptr);
  printf("busy ok\n");
  return 0;
}
