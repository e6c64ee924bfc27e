// NVTX whose first call on a thread comes from a signal handler that interrupted malloc.
// Usage: tp_signal_first_call THREADS SIGNALS_PER_THREAD
//
// THREADS threads are started one after another. Each loops on malloc/free of blocks past the
// tcache (so it is inside malloc, holding its arena's lock, most of the time) and never calls
// NVTX itself. The main thread sends it SIGUSR1 until its handler has run SIGNALS_PER_THREAD
// times, then keeps signalling it while it exits (the thread-exit path). The handler pushes and
// pops the range "handler": the first of those is the thread's first NVTX call. A library that
// allocates (or takes a lock the interrupted code holds) there deadlocks.
//
// Prints "handler ranges: N" (every handler's range: the report must count N) and exits 0.
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

std::atomic<long> g_handler_ranges{0};
thread_local volatile long t_handled = 0;  // handler runs on this thread
std::atomic<bool> g_stop{false};
long g_per_thread = 3;

void OnSignal(int) {
  int saved = errno;
  nvtxRangePushA("handler");
  nvtxRangePop();
  ++t_handled;
  g_handler_ranges.fetch_add(1, std::memory_order_relaxed);
  errno = saved;
}

void* Worker(void*) {
  // Sizes past the tcache (1032 bytes) and below the mmap threshold: malloc and free take the
  // arena lock. Several live blocks so that free consolidates.
  void* blocks[8] = {};
  unsigned seed = static_cast<unsigned>(reinterpret_cast<uintptr_t>(&blocks));
  unsigned i = 0;
  while (t_handled < g_per_thread && !g_stop.load(std::memory_order_relaxed)) {
    seed = seed * 1103515245u + 12345u;
    size_t n = 2048 + (seed >> 8) % 60000;
    free(blocks[i % 8]);
    blocks[i % 8] = malloc(n);
    if (blocks[i % 8] != nullptr) static_cast<char*>(blocks[i % 8])[0] = 1;
    ++i;
  }
  for (void* b : blocks) free(b);
  return nullptr;
}

void SleepUs(long us) {
  timespec ts{0, us * 1000};
  nanosleep(&ts, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s THREADS SIGNALS_PER_THREAD\n", argv[0]);
    return 2;
  }
  long threads = atol(argv[1]);
  g_per_thread = atol(argv[2]);
  // NVTX initialises itself (and loads the injection library) on its first call: here, outside
  // any handler. The main thread's own range is not "handler".
  nvtxRangePushA("main");
  nvtxRangePop();

  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, nullptr);

  for (long k = 0; k < threads; ++k) {
    pthread_t th;
    if (pthread_create(&th, nullptr, Worker, nullptr) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
    SleepUs(200);  // let it get into its malloc loop
    // Signal until it has exited: through its handler runs, then its exit.
    long sent = 0;
    while (pthread_tryjoin_np(th, nullptr) == EBUSY) {
      pthread_kill(th, SIGUSR1);
      ++sent;
      SleepUs(50 + (sent % 7) * 30);
      if (sent > 2000000) {  // never: the thread stops after g_per_thread handler runs
        g_stop.store(true);
      }
    }
  }
  printf("handler ranges: %ld\n", g_handler_ranges.load());
  return 0;
}
