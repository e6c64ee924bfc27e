// fork() in a loop from a multithreaded program while other threads record NVTX ranges.
// Usage: tp_fork_stress FORKS THREADS. Each child records one "child" range and _exit(0)s.
// Prints "done forks=N" when every child was reaped; a deadlock shows up as a test timeout.
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  int forks = argc > 1 ? atoi(argv[1]) : 200;
  int threads = argc > 2 ? atoi(argv[2]) : 4;
  // NVTX initialises itself on its first call and other threads spin until it is done; a fork
  // in that window leaves the child spinning forever, with or without a tool attached (an NVTX
  // limitation, docs/cli.md). Real programs make their first NVTX call long before they fork
  // workers; so does this one. The library keeps its own part of the window out of fork().
  nvtxMarkA("start");
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  std::vector<long> counts(threads, 0);
  for (int i = 0; i < threads; ++i) {
    workers.emplace_back([&, i] {
      char name[32];
      snprintf(name, sizeof(name), "worker_%d", i % 2);
      while (!stop.load(std::memory_order_relaxed)) {
        nvtxRangePushA(name);
        nvtxRangePop();
        ++counts[i];
      }
    });
  }
  int failed = 0;
  for (int i = 0; i < forks; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      nvtxRangePushA("child");
      nvtxRangePop();
      _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  stop = true;
  long total = 0;
  for (auto& w : workers) w.join();
  for (long c : counts) total += c;
  printf("done forks=%d failed=%d worker_ranges=%ld\n", forks, failed, total);
  return failed == 0 ? 0 : 1;
}
