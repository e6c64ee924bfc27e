// NVTX push/pop at full speed from many threads until the process is killed, each thread
// publishing how many NVTX calls it has completed, so a test can compare what a trace holds with
// what was written at the moment of the kill.
//
// Usage: tp_stress THREADS COUNTS_FILE [term_handler]
//   THREADS       worker threads; thread i names itself "w<i>" and pushes/pops "range_<i>"
//   COUNTS_FILE   created (size Counts) and mapped MAP_SHARED: it outlives a SIGKILL
//   term_handler  install a SIGTERM handler that notes the signal and keeps running (as a program
//                 that ignores a polite stop does); the main thread then records a mark
//                 "after_sigterm" and sets `term_marked`
// Prints "pid=<pid> ready" once every thread has completed its first push/pop pair, then runs until
// killed (or, as a safety net, for 60 s, then exits 3).
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kMaxThreads = 256;

// The layout the e2e test reads (tests/e2e/test_reliability.py: read_counts): little-endian u64s.
struct alignas(64) Slot {
  std::atomic<uint64_t> tid;
  std::atomic<uint64_t> calls;  // NVTX calls (a push and a pop count one each) that have returned
};
struct Counts {
  std::atomic<uint64_t> threads;      // offset 0
  std::atomic<uint64_t> sigterm_seen; // offset 8: SIGTERMs the handler saw
  std::atomic<uint64_t> term_marked;  // offset 16: the main thread recorded "after_sigterm"
  uint8_t pad[64 - 24];
  Slot slot[kMaxThreads];             // offset 64, 64 bytes each
};
static_assert(sizeof(Slot) == 64 && offsetof(Counts, slot) == 64);

Counts* g_counts = nullptr;

void OnTerm(int) { g_counts->sigterm_seen.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  int threads = atoi(argv[1]);
  if (threads < 1 || threads > kMaxThreads) return 2;
  bool term_handler = argc > 3 && strcmp(argv[3], "term_handler") == 0;
  int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, sizeof(Counts)) != 0) return 3;
  void* m = mmap(nullptr, sizeof(Counts), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return 3;
  close(fd);
  g_counts = new (m) Counts();
  g_counts->threads.store(threads);
  if (term_handler) {
    struct sigaction sa {};
    sa.sa_handler = OnTerm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, nullptr);
  }

  std::atomic<int> started{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i) {
    workers.emplace_back([i, &started] {
      char name[32];
      snprintf(name, sizeof(name), "w%d", i);
      pthread_setname_np(pthread_self(), name);
      Slot& s = g_counts->slot[i];
      s.tid.store(static_cast<uint64_t>(syscall(SYS_gettid)), std::memory_order_release);
      snprintf(name, sizeof(name), "range_%d", i);
      uint64_t calls = 0;
      bool announced = false;
      while (true) {
        nvtxRangePushA(name);
        s.calls.store(++calls, std::memory_order_release);
        nvtxRangePop();
        s.calls.store(++calls, std::memory_order_release);
        if (!announced) {
          announced = true;
          started.fetch_add(1);
        }
      }
    });
  }
  while (started.load() < threads) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  printf("pid=%d ready\n", getpid());
  fflush(stdout);
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (g_counts->sigterm_seen.load() > 0 && g_counts->term_marked.load() == 0) {
      nvtxMarkA("after_sigterm");
      g_counts->term_marked.store(1, std::memory_order_release);
    }
  }
  fprintf(stderr, "tp_stress: not killed within 60 s\n");
  _exit(3);
}
