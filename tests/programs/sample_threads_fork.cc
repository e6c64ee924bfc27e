// Many spinning threads and fork children that spin, as a DataLoader with worker processes does,
// for `trainprof run --sample` (tests/e2e/test_sampling.py): 64 threads spin SPIN_MS of CPU time
// each while the main thread forks CHILDREN children; each child spins on its forking thread and
// on 2 threads of its own, then exits. Every process prints "cpu PID NS" (its CPU time, ns) so
// that the test can compare the samples with the CPU time.
//
//   tp_sample_threads_fork [THREADS=64] [CHILDREN=4] [SPIN_MS=30]
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

long g_spin_ms = 30;

uint64_t CpuNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

__attribute__((noinline)) void spin_for_cpu_ms(long ms) {
  const uint64_t end = CpuNs(CLOCK_THREAD_CPUTIME_ID) + static_cast<uint64_t>(ms) * 1000000ull;
  volatile unsigned long x = 1;
  while (CpuNs(CLOCK_THREAD_CPUTIME_ID) < end) {
    for (int i = 0; i < 10000; ++i) x = x * 3 + 1;
  }
}

void* Spinner(void*) {
  spin_for_cpu_ms(g_spin_ms);
  return nullptr;
}

void Threads(int n) {
  std::vector<pthread_t> ts(static_cast<size_t>(n));
  for (auto& t : ts) pthread_create(&t, nullptr, Spinner, nullptr);
  for (auto& t : ts) pthread_join(t, nullptr);
}

void PrintCpu() {
  printf("cpu %d %llu\n", static_cast<int>(getpid()),
         static_cast<unsigned long long>(CpuNs(CLOCK_PROCESS_CPUTIME_ID)));
  fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 64;
  const int children = argc > 2 ? atoi(argv[2]) : 4;
  if (argc > 3) g_spin_ms = atol(argv[3]);
  std::vector<pthread_t> ts(static_cast<size_t>(threads));
  for (auto& t : ts) pthread_create(&t, nullptr, Spinner, nullptr);
  std::vector<pid_t> pids;
  for (int c = 0; c < children; ++c) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      spin_for_cpu_ms(g_spin_ms * 3);  // the forking thread
      Threads(2);
      PrintCpu();
      exit(0);
    }
    if (pid > 0) pids.push_back(pid);
  }
  for (auto& t : ts) pthread_join(t, nullptr);
  int failed = 0;
  for (pid_t p : pids) {
    int status = 0;
    if (waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  PrintCpu();
  printf("threads_fork done, %d children failed\n", failed);
  return failed == 0 ? 0 : 1;
}
