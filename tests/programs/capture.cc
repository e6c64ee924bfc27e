// Planted workload for capture ranges (tests/e2e/test_capture.py). Every range is push/pop unless
// said otherwise; "capture_test:" is an NVTX domain.
//
//   tp_capture nvtx     main thread T0 and a worker thread T1, in this order:
//                         T0 "setup"; T0 pushes "epoch" (closed at the end); T1 pushes "early";
//                         T0 mark "before_mark"; T0 starts "async_early" (start/end)
//                         3 steps i = 0, 1, 2, each: T0 "step" { 2 x "inner", mark "tick" } and
//                         then "between". Step 2 is pushed in the domain "capture_test".
//                           inside step 0: a nested "step" { "inner" }; T1 pops "early" and pushes
//                           "worker"; T0 ends "async_early" and starts "async_cross"
//                           after step 0: T1 pops "worker", T1 "late"; T0 ends "async_cross"
//                         T0 pops "epoch", then pops once more with nothing pushed (misuse).
//                       With --capture-range=nvtx:step, stop: step 2 (outer + nested), inner 3,
//                       tick 1, worker 1, async_cross 1, nothing else, 1 unbalanced (the misuse);
//                       repeat: step 3 + capture_test:step 1, inner 7, tick 3, worker 1,
//                       async_cross 1.
//   tp_capture cuda     what the CUDA layer does on cudaProfilerStart/Stop, through the library's
//                       trainprof_cuda_profiler_api: "before"; stop (ignored); start; 2 x "first";
//                       start again (no effect); stop; "gap"; start; 3 x "second"; stop; "after".
//   tp_capture window   "a" { 3 x "tick" }, 1 s later "b" { 3 x "tick" }, 1 s later "c" {...}.
//   tp_capture bench N  N push/pop pairs of "bench" inside one "bench_outer"; prints ns per pair
//                       (wall and thread CPU time).
// Flags after the mode: fork (first fork a child that sleeps 60 s), ignore-term (SIGTERM
// ignored, in the child too), linger (sleep 60 s at the end): for --capture-range-end=stop-shutdown.
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace {

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void Range(const char* name) {
  nvtxRangePushA(name);
  nvtxRangePop();
}

// A thread that runs one job at a time for the main thread, which waits for it: NVTX push/pop
// ranges belong to the thread that pushed them, so "early" and "worker" need a thread that stays.
class Worker {
 public:
  Worker() : thread_([this] { Loop(); }) {}
  ~Worker() {
    Run(nullptr);
    thread_.join();
  }
  void Run(std::function<void()> job) {
    std::unique_lock<std::mutex> lock(mu_);
    job_ = std::move(job);
    pending_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return !pending_; });
  }

 private:
  void Loop() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return pending_; });
      bool stop = !job_;
      if (job_) job_();
      pending_ = false;
      cv_.notify_all();
      if (stop) return;
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool pending_ = false;
  std::thread thread_;
};

void Nvtx() {
  nvtxDomainHandle_t domain = nvtxDomainCreateA("capture_test");
  Worker t1;
  Range("setup");
  nvtxRangePushA("epoch");
  t1.Run([] { nvtxRangePushA("early"); });
  nvtxMarkA("before_mark");
  nvtxRangeId_t async_early = nvtxRangeStartA("async_early");
  nvtxRangeId_t async_cross = 0;
  for (int i = 0; i < 3; ++i) {
    if (i == 2) {
      nvtxEventAttributes_t a = {};
      a.version = NVTX_VERSION;
      a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
      a.messageType = NVTX_MESSAGE_TYPE_ASCII;
      a.message.ascii = "step";
      nvtxDomainRangePushEx(domain, &a);
    } else {
      nvtxRangePushA("step");
    }
    for (int k = 0; k < 2; ++k) Range("inner");
    nvtxMarkA("tick");
    if (i == 0) {
      nvtxRangePushA("step");  // nested: the outer "step" is the capture range
      Range("inner");
      nvtxRangePop();
      t1.Run([] {
        nvtxRangePop();  // "early": pushed before the capture, so not recorded
        nvtxRangePushA("worker");
      });
      nvtxRangeEnd(async_early);
      async_cross = nvtxRangeStartA("async_cross");
    }
    if (i == 2) {
      nvtxDomainRangePop(domain);
    } else {
      nvtxRangePop();
    }
    Range("between");
    if (i == 0) {
      t1.Run([] {
        nvtxRangePop();  // "worker": pushed inside the capture, so recorded
        Range("late");
      });
      nvtxRangeEnd(async_cross);
    }
  }
  nvtxRangePop();  // "epoch"
  int empty = nvtxRangePop();
  printf("nvtx done, empty pop=%d\n", empty);
}

int Cuda() {
  auto api = reinterpret_cast<int (*)(int)>(dlsym(RTLD_DEFAULT, "trainprof_cuda_profiler_api"));
  if (api == nullptr) {
    fprintf(stderr, "tp_capture: trainprof_cuda_profiler_api not found (not run under trainprof?)\n");
    return 2;
  }
  Range("before");
  int r = api(0);
  api(1);
  for (int i = 0; i < 2; ++i) Range("first");
  api(1);
  api(0);
  Range("gap");
  api(1);
  for (int i = 0; i < 3; ++i) Range("second");
  api(0);
  Range("after");
  printf("cuda done, api=%d\n", r);
  return 0;
}

void Window() {
  const char* phases[] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    if (i > 0) SleepMs(1000);
    nvtxRangePushA(phases[i]);
    for (int k = 0; k < 3; ++k) Range("tick");
    nvtxRangePop();
  }
  printf("window done\n");
}

void Bench(long n) {
  for (long i = 0; i < 10000; ++i) Range("bench");  // warm-up: thread state, name cache
  nvtxRangePushA("bench_outer");
  // The thread's CPU time as well as the wall time: on a shared machine the first leaves out the
  // time the thread waited for a core.
  timespec c0, c1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    nvtxRangePushA("bench");
    nvtxRangePop();
  }
  auto t1 = std::chrono::steady_clock::now();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
  nvtxRangePop();
  double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
  double cpu = static_cast<double>(c1.tv_sec - c0.tv_sec) * 1e9 + static_cast<double>(c1.tv_nsec - c0.tv_nsec);
  printf("bench: %ld push+pop pairs, %.1f ns per pair (%.1f ns of CPU time)\n", n, ns / static_cast<double>(n),
         cpu / static_cast<double>(n));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: tp_capture nvtx|cuda|window|bench N [fork] [ignore-term] [linger]\n");
    return 2;
  }
  std::string mode = argv[1];
  bool fork_child = false, ignore_term = false, linger = false;
  for (int i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "fork") == 0) fork_child = true;
    if (strcmp(argv[i], "ignore-term") == 0) ignore_term = true;
    if (strcmp(argv[i], "linger") == 0) linger = true;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (ignore_term) signal(SIGTERM, SIG_IGN);
  Range("main_start");  // NVTX initialised before any fork
  pid_t child = -1;
  if (fork_child) {
    child = fork();
    if (child == 0) {
      Range("child_start");
      SleepMs(60000);
      _exit(0);
    }
    printf("child pid=%d\n", static_cast<int>(child));
  }
  int status = 0;
  if (mode == "nvtx") {
    Nvtx();
  } else if (mode == "cuda") {
    status = Cuda();
  } else if (mode == "window") {
    Window();
  } else if (mode == "bench") {
    Bench(argc > 2 ? atol(argv[2]) : 1000000);
  } else {
    fprintf(stderr, "tp_capture: unknown mode %s\n", mode.c_str());
    return 2;
  }
  if (linger) SleepMs(60000);
  if (child > 0) waitpid(child, nullptr, 0);
  return status;
}
