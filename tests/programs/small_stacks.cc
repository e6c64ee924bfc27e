// Threads on the smallest stacks pthreads allows, for `trainprof run --sample` and
// `--backtrace=nvtx` (tests/e2e/test_small_stacks.py): PTHREAD_STACK_MIN (16 KiB) stacks, as some
// runtimes and thread pools use, doing NVTX ranges and marks around CPU work. Each thread's first
// range also calls into a library dlopened by a relative path (a MODULE rescan that looks the
// library's path up in /proc/self/maps) from that small stack. The program must exit 0.
//
//   tp_small_stacks THREADS MILLISECONDS PLUGIN_DIR
//       THREADS threads at PTHREAD_STACK_MIN for MILLISECONDS each; prints "ok THREADS"
//   tp_small_stacks measure MILLISECONDS PLUGIN_DIR
//       one such thread's work on a 1 MiB stack painted with a pattern; prints "stack use: N",
//       the bytes below the thread function's frame that were ever written (the program's own
//       use, plus whatever trainprof's hooks and signal handler used on top of it), and
//       "signal frame: N", what the kernel puts on a stack to deliver a signal on this machine
//       (with the handler's own small frame)
#include <dlfcn.h>
#include <limits.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <ucontext.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr unsigned char kPaint = 0xa5;
constexpr size_t kMeasureStack = 1 << 20;

volatile unsigned long g_sink;
long g_ms = 0;
void (*g_plugin_step)(int) = nullptr;

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline, noclone)) void spin(long n) {
  unsigned long x = g_sink;
  for (long i = 0; i < n; ++i) {
    x = x * 2862933555777941757ul + 3037000493ul;
    asm volatile("" : "+r"(x));
  }
  g_sink = x;
}

__attribute__((noinline)) void* Work(void*) {
  const double end = Now() + g_ms / 1000.0;
  for (int i = 0; Now() < end; ++i) {
    nvtxRangePushA("small_stack_step");
    if (i == 0 && g_plugin_step != nullptr) g_plugin_step(i);
    spin(200000);
    nvtxMarkA("small_stack_mark");
    nvtxRangePop();
  }
  return nullptr;
}

uintptr_t g_entry_sp = 0;
volatile long g_signal_frame = 0;

void MeasureSignalFrame(int, siginfo_t*, void* uc) {
#if defined(__x86_64__)
  g_signal_frame = static_cast<long>(static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RSP]) -
                   reinterpret_cast<long>(__builtin_frame_address(0));
#else
  (void)uc;
#endif
}

__attribute__((noinline)) void* MeasuredWork(void* arg) {
  g_entry_sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return Work(arg);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: tp_small_stacks THREADS|measure MILLISECONDS PLUGIN_DIR\n");
    return 2;
  }
  g_ms = atol(argv[2]);
  // A relative name: the loader records it as given, so the MODULE record needs the mapped path.
  if (chdir(argv[3]) != 0) {
    perror(argv[3]);
    return 2;
  }
  void* plugin = dlopen("./libtp_callsites_plugin.so", RTLD_NOW);
  if (plugin == nullptr) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  g_plugin_step = reinterpret_cast<void (*)(int)>(dlsym(plugin, "plugin_step"));
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (strcmp(argv[1], "measure") == 0) {
    void* stack = mmap(nullptr, kMeasureStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED) return 2;
    memset(stack, kPaint, kMeasureStack);
    pthread_attr_setstack(&attr, stack, kMeasureStack);
    pthread_t t;
    if (pthread_create(&t, &attr, MeasuredWork, nullptr) != 0) return 2;
    pthread_join(t, nullptr);
    const auto* p = static_cast<const unsigned char*>(stack);
    size_t low = 0;
    while (low < kMeasureStack && p[low] == kPaint) ++low;
    printf("stack use: %lu\n", static_cast<unsigned long>(g_entry_sp - (reinterpret_cast<uintptr_t>(stack) + low)));
    struct sigaction sa {};
    sa.sa_sigaction = MeasureSignalFrame;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, nullptr);
    raise(SIGUSR1);
    printf("signal frame: %ld\n", g_signal_frame);
    return 0;
  }
  const int n = atoi(argv[1]);
  pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
  pthread_t threads[64];
  if (n < 1 || n > 64) return 2;
  for (int i = 0; i < n; ++i) {
    int rc = pthread_create(&threads[i], &attr, Work, nullptr);
    if (rc != 0) {
      fprintf(stderr, "pthread_create: %s\n", strerror(rc));
      return 2;
    }
  }
  for (int i = 0; i < n; ++i) pthread_join(threads[i], nullptr);
  printf("ok %d\n", n);
  return 0;
}
