// Records N complete ranges, leaves one open, then ends the way MODE says:
//   exit _exit abort segv sigkill sigterm throw thread_exit
// Usage: tp_ends MODE N. The trace must hold all N ranges and say how the process ended.
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const char* mode = argv[1];
  long n = atol(argv[2]);
  for (long i = 0; i < n; ++i) {
    nvtxRangePushA("done");
    nvtxRangePop();
  }
  nvtxRangePushA("open_at_end");
  printf("recorded %ld\n", n);
  fflush(stdout);
  if (strcmp(mode, "exit") == 0) exit(4);
  if (strcmp(mode, "_exit") == 0) _exit(5);
  if (strcmp(mode, "abort") == 0) abort();
  if (strcmp(mode, "segv") == 0) {
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
  }
  if (strcmp(mode, "sigkill") == 0) raise(SIGKILL);
  if (strcmp(mode, "sigterm") == 0) raise(SIGTERM);
  if (strcmp(mode, "throw") == 0) throw std::runtime_error("uncaught");
  if (strcmp(mode, "thread_exit") == 0) {
    std::thread([] { exit(6); }).join();
  }
  return 0;
}
