// Calls the CUDA injection entry point by hand, as the CUDA driver would inside cuInit, on a
// machine with or without a GPU:
//   tp_cuda_inject_by_hand N [spawn|noinit]
// records N NVTX ranges "before", calls InitializeInjection twice (the preloaded library's,
// found with dlsym), records N ranges "after", and prints what it returned and whether libcupti
// is mapped in the process now (/proc/self/maps). With "spawn" it then
// runs itself (without "spawn") with fork and execv: an exec'd descendant that calls it again.
// With "noinit" it does not call InitializeInjection: an NVTX program that never uses CUDA.
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

static bool CuptiMapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("libcupti") != std::string::npos) return true;
  }
  return false;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  long n = atol(argv[1]);
  for (long i = 0; i < n; ++i) {
    nvtxRangePushA("before");
    nvtxRangePop();
  }
  const bool noinit = argc > 2 && strcmp(argv[2], "noinit") == 0;
  auto init = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "InitializeInjection"));
  if (noinit) {
    printf("InitializeInjection not called\n");
  } else if (init == nullptr) {
    printf("no InitializeInjection in the process\n");
  } else {
    int first = init();
    int second = init();
    printf("InitializeInjection returned %d %d\n", first, second);
  }
  for (long i = 0; i < n; ++i) {
    nvtxRangePushA("after");
    nvtxRangePop();
  }
  printf("libcupti mapped: %s\n", CuptiMapped() ? "yes" : "no");
  fflush(stdout);
  if (argc > 2 && strcmp(argv[2], "spawn") == 0) {
    pid_t pid = fork();
    if (pid == 0) {
      char* args[] = {argv[0], argv[1], nullptr};
      execv(argv[0], args);
      _exit(127);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    printf("child status %d\n", status);
  }
  return 0;
}
