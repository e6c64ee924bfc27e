// Programs that are hard on a preloaded profiler. Usage: tp_hostile MODE [ARGS]
//   closefd FILE N   close every fd above 2, open FILE and write "hello\n" to it, then N push/pop
//                    pairs: the library must never write into the program's FILE.
//   signals MS       for MS milliseconds a SIGALRM every 50 us records NVTX from the handler while
//                    the main thread records too: no hang, no damaged trace.
//   threads N        N threads one after another, one range each: the trace stays small.
//   forkexit D       two threads record while the main thread forks D generations of children,
//                    each inside the last; each child records one range and ends with exit(), not
//                    _exit(): the parent's library state a child abandons must not look like a
//                    leak (LeakSanitizer checks each child at exit in the address sanitizer build).
// Prints what it did, for the test to compare with the report.
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

static std::atomic<long> g_handler_runs{0};

static void OnAlarm(int) {
  nvtxRangePushA("in_handler");
  nvtxMarkA("handler_mark");
  nvtxRangePop();
  g_handler_runs.fetch_add(1, std::memory_order_relaxed);
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* mode = argv[1];
  if (strcmp(mode, "closefd") == 0 && argc == 4) {
    nvtxRangePushA("before_close");
    nvtxRangePop();
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "hello\n", 6) != 6) return 3;
    long n = atol(argv[3]);
    for (long i = 0; i < n; ++i) {
      nvtxRangePushA("after_close");
      nvtxRangePop();
    }
    close(fd);
    printf("closefd fd=%d pairs=%ld\n", fd, n);
    return 0;
  }
  if (strcmp(mode, "signals") == 0 && argc == 3) {
    // First NVTX call before the timer: a handler must not interrupt NVTX's own one-time
    // initialisation on this thread (NVTX would wait for itself).
    nvtxMarkA("start");
    struct sigaction sa {};
    sa.sa_handler = OnAlarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, nullptr);
    itimerval it{{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, nullptr);
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(atoi(argv[2]));
    long pairs = 0;
    char name[32];
    while (std::chrono::steady_clock::now() < end) {
      snprintf(name, sizeof(name), "main_%ld", pairs % 50);  // new names: the intern path too
      nvtxRangePushA(name);
      nvtxRangePop();
      ++pairs;
    }
    itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
    printf("signals pairs=%ld handler_runs=%ld\n", pairs, g_handler_runs.load());
    return 0;
  }
  if (strcmp(mode, "threads") == 0 && argc == 3) {
    int n = atoi(argv[2]);
    for (int i = 0; i < n; ++i) {
      std::thread([] {
        nvtxRangePushA("short_thread");
        nvtxRangePop();
      }).join();
    }
    printf("threads n=%d\n", n);
    return 0;
  }
  if (strcmp(mode, "forkexit") == 0 && argc == 3) {
    int depth = atoi(argv[2]);
    const pid_t root = getpid();
    nvtxMarkA("start");  // before the threads: see fork_stress.cc
    std::atomic<bool> stop{false};
    std::vector<std::thread> workers;
    for (int i = 0; i < 2; ++i) {
      workers.emplace_back([&stop] {
        while (!stop.load(std::memory_order_relaxed)) {
          nvtxRangePushA("worker");
          nvtxRangePop();
        }
      });
    }
    usleep(10000);  // the workers are recording
    int failed = 0;
    for (int generation = 1; generation <= depth; ++generation) {
      pid_t pid = fork();
      if (pid < 0) {
        ++failed;
        break;
      }
      if (pid > 0) {  // wait for the child (and so for all its descendants)
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
        break;
      }
      nvtxRangePushA("child");
      nvtxRangePop();
    }
    // A child ends with exit() (its parent's threads are not here to join); the root joins them.
    if (getpid() != root) exit(failed == 0 ? 0 : 1);
    stop = true;
    for (auto& w : workers) w.join();
    printf("forkexit depth=%d failed=%d\n", depth, failed);
    return failed == 0 ? 0 : 1;
  }
  return 2;
}
