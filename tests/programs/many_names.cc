// End-to-end workload: N NVTX ranges with N distinct names, the common "step %d" pattern of a
// training loop that formats the step number into the range name (tests/e2e/test_memory.py).
//
//   tp_many_names N [PATTERN]   N push/pop pairs named PATTERN with the index (default "step %d"),
//                               each nesting one "inner" range; prints "ranges N".
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1000;
  const char* pattern = argc > 2 ? argv[2] : "step %d";
  char name[256];
  for (long i = 0; i < n; ++i) {
    std::snprintf(name, sizeof name, pattern, static_cast<int>(i));
    nvtxRangePushA(name);
    nvtxRangePushA("inner");
    nvtxRangePop();
    nvtxRangePop();
  }
  std::printf("ranges %ld\n", n);
  return 0;
}
