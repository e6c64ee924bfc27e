// Plays the CUDA driver against the library's live CUPTI path, with libfake_cupti.so
// (fake_cupti.cc) as libcupti: run under trainprof with TRAINPROF_CUPTI_PATH=<libfake_cupti.so>.
//   tp_cupti_fake_workload MODE
// Calls InitializeInjection as cuInit would, issues API callbacks (a runtime launch with a
// driver call inside it, a driver-only launch, cudaProfilerStart/Stop, a failing cudaMalloc, a
// graph launch, a launch on a second thread), queues activity records of every kind (and one of a
// kind that is not converted) with a drop count, and waits for the library's flush thread to
// take them. Then, by MODE:
//   exit   queues one more kernel ("_Z8lastKernv") and returns from main: the exit flush writes it
//   kill   queues one more kernel ("_Z9unflushedv") and SIGKILLs itself: only the periodic flush's
//          records are in the trace
//   fork   forks; the child issues a callback, queues a kernel, calls InitializeInjection again and
//          exits: it must not record CUDA, and must not flush (it prints whether it did)
//   init   only InitializeInjection (for the cases where CUPTI cannot be used)
//   calls N  only N runtime API calls (cudaLaunchKernel, enter and exit, correlations 1..N) and
//            nothing else: scripts/bench's bytes per CUDA API call
//   mix N    N CUDA records of the model for scripts/bench's cuda_report: N/2 runtime API calls
//            (enter and exit), each with the GPU record it started: mostly cudaLaunchKernel with a
//            kernel of 16 names in turn (stream 7), every 8th a cudaMemcpyAsync with its HtoD/DtoH copy,
//            every 64th a cudaStreamSynchronize with its sync record; activity flushed every 4096
//            records so that the stand-in's queue stays small; on device LOCAL_RANK (0 without it),
//            as a DDP rank that torchrun started calls torch.cuda.set_device(local_rank)
//   stacks   only calls made from named functions, for --backtrace=cuda (run with a 1 ms
//            threshold): 4 cudaStreamSynchronize of 3 ms from wait_for_loss (corr 101..104),
//            2 cudaMalloc of 3 ms from grow_pool (111..112), 4 cudaStreamSynchronize of ~0 ms from
//            quick_sync (121..124), 4 cudaLaunchKernel of 3 ms from launch_step (131..134)
//   stacks-small  the calls of "stacks", made on a thread with a PTHREAD_STACK_MIN (16 KiB) stack
// Prints what it saw ("hooks: ...", "periodic flushes: N", ...).
#include <chrono>
#include <cupti.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

struct Hooks {
  int (*callback)(int, uint32_t, const char*, int, uint32_t, uint64_t*, int);
  void (*add_record)(const void*, size_t);
  void (*add_dropped)(size_t);
  uint64_t (*now)();
  void (*stats)(int*, int*, int*);
  int (*kind_enabled)(int);
  int (*domain_enabled)(int);
};

template <typename F>
void Get(void* h, F* f, const char* name) {
  *f = reinterpret_cast<F>(dlsym(h, name));
  if (*f == nullptr) {
    fprintf(stderr, "fake cupti lacks %s\n", name);
    exit(4);
  }
}

Hooks g;

void SleepMs(int ms) { usleep(static_cast<useconds_t>(ms) * 1000); }

// One API call: enter, whatever `inside` does, exit with `status`.
template <typename Inside>
void Call(int domain, uint32_t cbid, const char* name, uint32_t corr, int status, Inside inside) {
  uint64_t call_data = 0;
  g.callback(domain, cbid, name, CUPTI_API_ENTER, corr, &call_data, 0);
  inside();
  g.callback(domain, cbid, name, CUPTI_API_EXIT, corr, &call_data, status);
}
void Call(int domain, uint32_t cbid, const char* name, uint32_t corr, int status) {
  Call(domain, cbid, name, corr, status, [] {});
}

template <typename T>
T Zeroed() {
  T r;
  memset(static_cast<void*>(&r), 0, sizeof(r));
  return r;
}

// Queues one activity record, as CUPTI would hand it over.
template <typename Record>
void Add(const Record& r) {
  g.add_record(&r, sizeof(r));
}

void AddKernel(const char* name, uint64_t start, uint64_t end, uint32_t corr, uint32_t graph, uint32_t device = 0) {
  Add(CUpti_ActivityKernel10{.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                             .registersPerThread = 32,
                             .start = start, .end = end,
                             .deviceId = device, .contextId = 1, .streamId = 7,
                             .gridX = 128, .gridY = 1, .gridZ = 1,
                             .blockX = 256, .blockY = 1, .blockZ = 1,
                             .staticSharedMemory = 0, .dynamicSharedMemory = 1024,
                             .correlationId = corr,
                             .name = name,
                             .graphId = graph});
}

// A 1 µs kernel that ends now. The clock is read once: two reads as two arguments are evaluated
// in an unspecified order, and under a sanitizer they can be more than 1 µs apart (end < start).
void AddKernelEndingNow(const char* name, uint32_t corr) {
  const uint64_t now = g.now();
  AddKernel(name, now - 1000, now, corr, 0);
}

int Flushes() {
  int flushes, forced, pid;
  g.stats(&flushes, &forced, &pid);
  return flushes;
}

// Waits until the flush thread has flushed after the records queued so far.
bool WaitForPeriodicFlush() {
  int before = Flushes();
  for (int i = 0; i < 500; ++i) {
    usleep(10000);
    if (Flushes() >= before + 2) return true;  // one flush may have begun before the records
  }
  return false;
}

// The named call sites of mode "stacks" (noipa: neither inlined nor merged with each other).
__attribute__((noinline, noipa)) void wait_for_loss(uint32_t corr) {
  Call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
       "cudaStreamSynchronize_v3020", corr, 0, [] { SleepMs(3); });
}
__attribute__((noinline, noipa)) void grow_pool(uint32_t corr) {
  Call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc_v3020", corr, 0,
       [] { SleepMs(3); });
}
__attribute__((noinline, noipa)) void quick_sync(uint32_t corr) {
  Call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
       "cudaStreamSynchronize_v3020", corr, 0, [] {});
}
__attribute__((noinline, noipa)) void launch_step(uint32_t corr) {
  Call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000", corr,
       0, [] { SleepMs(3); });
}

// The calls of mode "stacks" (and "stacks-small", on a small thread).
void* StackCalls(void*) {
  for (uint32_t i = 0; i < 4; ++i) wait_for_loss(101 + i);
  for (uint32_t i = 0; i < 2; ++i) grow_pool(111 + i);
  for (uint32_t i = 0; i < 4; ++i) quick_sync(121 + i);
  for (uint32_t i = 0; i < 4; ++i) launch_step(131 + i);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "exit";
  const char* lib = getenv("TRAINPROF_CUPTI_PATH");
  nvtxRangePushA("before");
  nvtxRangePop();
  auto init = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "InitializeInjection"));
  if (init == nullptr || lib == nullptr) {
    printf("no InitializeInjection or no TRAINPROF_CUPTI_PATH\n");
    return 2;
  }
  printf("InitializeInjection returned %d\n", init());
  fflush(stdout);
  if (void* fake = dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
    auto params = reinterpret_cast<void (*)(size_t*, int*)>(dlsym(fake, "fake_cupti_subscribe_params"));
    size_t size = 0;
    int allow = 0;
    if (params != nullptr) params(&size, &allow);
    printf("subscribe_v2 params: size=%zu allowMultipleSubscribers=%d\n", size, allow);
  }
  if (strcmp(mode, "init") == 0) {
    nvtxRangePushA("after");
    nvtxRangePop();
    return 0;
  }
  void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) {
    printf("the fake libcupti was not loaded\n");
    return 3;
  }
  Get(h, &g.callback, "fake_cupti_callback");
  Get(h, &g.add_record, "fake_cupti_add_record");
  Get(h, &g.add_dropped, "fake_cupti_add_dropped");
  Get(h, &g.now, "fake_cupti_now");
  Get(h, &g.stats, "fake_cupti_stats");
  Get(h, &g.kind_enabled, "fake_cupti_kind_enabled");
  Get(h, &g.domain_enabled, "fake_cupti_domain_enabled");
  printf("hooks: runtime=%d driver=%d kernel=%d memcpy=%d memcpy2=%d memset=%d sync=%d device=%d context=%d "
         "overhead=%d timestamp=%d\n",
         g.domain_enabled(CUPTI_CB_DOMAIN_RUNTIME_API), g.domain_enabled(CUPTI_CB_DOMAIN_DRIVER_API),
         g.kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), g.kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY),
         g.kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY2), g.kind_enabled(CUPTI_ACTIVITY_KIND_MEMSET),
         g.kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), g.kind_enabled(CUPTI_ACTIVITY_KIND_DEVICE),
         g.kind_enabled(CUPTI_ACTIVITY_KIND_CONTEXT), g.kind_enabled(CUPTI_ACTIVITY_KIND_OVERHEAD),
         g.now() != 0 ? 1 : 0);

  const int R = CUPTI_CB_DOMAIN_RUNTIME_API, D = CUPTI_CB_DOMAIN_DRIVER_API;
  if (strcmp(mode, "calls") == 0) {
    const long n = argc > 2 ? atol(argv[2]) : 0;
    for (long i = 1; i <= n; ++i) {
      Call(R, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000", static_cast<uint32_t>(i), 0);
    }
    printf("calls %ld\n", n);
    return 0;
  }
  if (strcmp(mode, "mix") == 0) {
    const long n = argc > 2 ? atol(argv[2]) / 2 : 0;
    auto flush = reinterpret_cast<CUptiResult (*)(uint32_t)>(dlsym(h, "cuptiActivityFlushAll"));
    static const char* kNames[16] = {"_Z4gemmILi0EEvv", "_Z4gemmILi1EEvv", "_Z4reluPf", "_Z7softmaxPf",
                                     "_Z6reducePf", "_Z4convPf", "_Z5batchPf", "_Z4addfPf",
                                     "_Z4mulfPf", "_Z5copyfPf", "_Z4normPf", "_Z4lossPf",
                                     "_Z4gradPf", "_Z4stepPf", "_Z4zeroPf", "_Z4castPf"};
    long kernels = 0;
    const char* local_rank = getenv("LOCAL_RANK");
    const auto device = static_cast<uint32_t>(local_rank != nullptr ? strtoul(local_rank, nullptr, 10) : 0);
    for (long i = 1; i <= n; ++i) {
      const auto corr = static_cast<uint32_t>(i);
      const uint64_t dur = 2000 + static_cast<uint64_t>(i % 97) * 100;  // 2 to 11.6 µs
      if (i % 64 == 0) {
        const uint64_t t0 = g.now();
        Call(R, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "cudaStreamSynchronize_v3020", corr, 0);
        Add(CUpti_ActivitySynchronization2{.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                           .type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
                                           .start = t0, .end = t0 + 500,
                                           .correlationId = corr, .contextId = 1, .streamId = 7});
      } else if (i % 8 == 0) {
        Call(R, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync_v3020", corr, 0);
        const uint64_t t = g.now();
        const bool dtoh = i % 16 == 0;
        Add(CUpti_ActivityMemcpy6{.kind = CUPTI_ACTIVITY_KIND_MEMCPY,
                                  .copyKind = static_cast<uint8_t>(dtoh ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOH
                                                                        : CUPTI_ACTIVITY_MEMCPY_KIND_HTOD),
                                  .srcKind = static_cast<uint8_t>(dtoh ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
                                                                       : CUPTI_ACTIVITY_MEMORY_KIND_PINNED),
                                  .dstKind = static_cast<uint8_t>(dtoh ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED
                                                                       : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE),
                                  .flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC,
                                  .bytes = 4096u << ((i / 16) % 8),
                                  .start = t + 1000, .end = t + 1000 + dur,
                                  .deviceId = device, .contextId = 1, .streamId = 7, .correlationId = corr});
      } else {
        Call(R, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000", corr, 0);
        const uint64_t t = g.now();
        AddKernel(kNames[kernels++ % 16], t + 1000, t + 1000 + dur, corr, 0, device);
      }
      if (i % 4096 == 0 && flush != nullptr) flush(0);
    }
    if (flush != nullptr) flush(0);
    printf("calls %ld\n", n);
    return 0;
  }
  if (strcmp(mode, "stacks") == 0) {
    StackCalls(nullptr);
    printf("stacks done\n");
    return 0;
  }
  if (strcmp(mode, "stacks-small") == 0) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
    pthread_t t;
    if (pthread_create(&t, &attr, StackCalls, nullptr) != 0) return 4;
    pthread_join(t, nullptr);
    printf("stacks done\n");
    return 0;
  }
  // The GPU records below are dated up to 900 us before `now` (taken after the calls): a process
  // younger than that would put them before its own start, where an export's axis begins, and
  // they would be cut there (e2e_kineto_export failed so on a fast machine). 2 ms of age first.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  // A runtime launch and the driver call it makes: one call (corr 1).
  Call(R, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000", 1, 0,
       [&] { Call(D, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", 2, 0); });
  // A driver-only launch, as Triton makes them (corr 3).
  Call(D, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx", 3, 0);
  // cudaProfilerStart, with cuProfilerStart inside: one CAPTURE on.
  Call(R, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, "cudaProfilerStart_v4000", 4, 0,
       [&] { Call(D, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, "cuProfilerStart", 5, 0); });
  Call(R, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc_v3020", 6, 2 /* cudaErrorMemoryAllocation */);
  Call(R, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, "cudaProfilerStop_v4000", 7, 0);
  Call(R, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch_v10000", 8, 0);
  // Another thread's launch (corr 9) while this one is between calls.
  std::thread([&] {
    Call(R, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000", 9, 0,
         [&] { Call(D, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", 10, 0); });
  }).join();

  const uint64_t now = g.now();
  std::string long_name = "_ZN7cutlass6KernelINS_4gemm6kernel4GemmI";
  while (long_name.size() < 6000) long_name += "NS_6half_tELi128ELi128ELi32ENS_6layout8RowMajorE";
  long_name += "EEEvNT_6ParamsE";
  AddKernel(long_name.c_str(), now - 900000, now - 800000, 1, 0);
  AddKernel("_Z11graphKernelPf", now - 700000, now - 600000, 8, 3);
  AddKernel("_Z11graphKernelPf", 0, 0, 8, 3);                    // no timestamps
  AddKernel("_Z8reversedv", now - 100000, now - 200000, 9, 0);  // end before start
  Add(CUpti_ActivityMemcpy6{.kind = CUPTI_ACTIVITY_KIND_MEMCPY,
                            .copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,  // pageable host memory to the device
                            .srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, .dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                            .bytes = 4 << 20,
                            .start = now - 500000, .end = now - 400000,
                            .contextId = 1, .streamId = 7, .correlationId = 11, .runtimeCorrelationId = 0});
  Add(CUpti_ActivityMemcpyPtoP4{.kind = CUPTI_ACTIVITY_KIND_MEMCPY2,
                                .copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP,  // device 0 to device 1
                                .srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, .dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                                .flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC,
                                .bytes = 1 << 20,
                                .start = now - 390000, .end = now - 380000,
                                .srcDeviceId = 0, .dstDeviceId = 1, .correlationId = 12});
  Add(CUpti_ActivityMemset4{.kind = CUPTI_ACTIVITY_KIND_MEMSET,
                            .value = 0, .bytes = 4 << 20,
                            .start = now - 370000, .end = now - 360000,
                            .contextId = 1, .streamId = 7, .correlationId = 13,
                            .flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC, .memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE});
  Add(CUpti_ActivitySynchronization2{.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                     .type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
                                     .start = now - 350000, .end = now - 300000,
                                     .correlationId = 14, .contextId = 1, .streamId = 7});
  Add(CUpti_ActivityDevice5{.kind = CUPTI_ACTIVITY_KIND_DEVICE,
                            .globalMemorySize = 141ull << 30,
                            .numMultiprocessors = 132,
                            .computeCapabilityMajor = 9,
                            .id = 0,
                            .name = "Fake GPU"});
  Add(CUpti_ActivityContext3{.kind = CUPTI_ACTIVITY_KIND_CONTEXT, .contextId = 1, .deviceId = 0});
  auto o = Zeroed<CUpti_ActivityOverhead3>();
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.threadId = 4321;
  o.start = now - 250000;
  o.end = now - 240000;
  Add(o);
  auto api = Zeroed<CUpti_ActivityAPI>();
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;  // not converted: skipped, counted as dropped
  Add(api);
  g.add_dropped(5);
  bool flushed = WaitForPeriodicFlush();
  printf("periodic flush: %s\n", flushed ? "yes" : "no");
  fflush(stdout);

  if (strcmp(mode, "kill") == 0) {
    AddKernelEndingNow("_Z9unflushedv", 20);
    raise(SIGKILL);
  }
  if (strcmp(mode, "fork") == 0) {
    pid_t pid = fork();
    if (pid == 0) {
      Call(R, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000", 100, 0);
      AddKernelEndingNow("_Z10childKernv", 100);
      init();
      usleep(200000);  // the parent's flush interval, several times over: no flush thread here
      int flushes, forced, flush_pid;
      g.stats(&flushes, &forced, &flush_pid);
      printf("child: flushed in the child: %s\n", flush_pid == getpid() ? "yes" : "no");
      fflush(stdout);
      exit(0);  // atexit handlers run: ours must not flush here
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  AddKernelEndingNow("_Z8lastKernv", 21);
  nvtxRangePushA("after");
  nvtxRangePop();
  fflush(stdout);
  return 0;
}
