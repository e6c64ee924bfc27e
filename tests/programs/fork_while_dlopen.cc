// Fork children of a process whose other threads keep the dynamic loader busy: one thread
// dlopen()s and dlclose()s a library in a loop (the loader's lock held often), two push NVTX
// ranges; main forks N children, each pushes one range and _exit()s, as a process pool or a
// DataLoader does. A child must never wait for a lock that a parent thread held at the fork
// (with --backtrace=nvtx, libunwind and the MODULE scan would take the loader's).
//
//   tp_fork_while_dlopen LIBRARY [CHILDREN]
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

std::atomic<bool> g_stop{false};

__attribute__((noinline)) void PushRanges() {
  while (!g_stop.load()) {
    nvtxRangePushA("busy");
    nvtxRangePop();
  }
}

__attribute__((noinline)) void ReloadLibrary(const char* path) {
  while (!g_stop.load()) {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      std::fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
      std::exit(2);
    }
    dlclose(h);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LIBRARY [CHILDREN]\n", argv[0]);
    return 2;
  }
  const int children = argc > 2 ? std::atoi(argv[2]) : 100;
  std::thread a(PushRanges), b(PushRanges), c(ReloadLibrary, argv[1]);
  int ok = 0;
  for (int i = 0; i < children; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      nvtxRangePushA("child");
      nvtxRangePop();
      _exit(0);
    }
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) ++ok;
  }
  g_stop.store(true);
  a.join();
  b.join();
  c.join();
  std::printf("children ok: %d\n", ok);
  return ok == children ? 0 : 1;
}
