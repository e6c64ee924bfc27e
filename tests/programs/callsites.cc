// Planted call sites for --backtrace=nvtx (tests/e2e/test_stacks.py): one NVTX range, "work",
// opened from two distinct functions with known counts, and a library loaded later.
//
//   main thread:   30 x load_batch() and 10 x save_checkpoint(), each pushing "work" (and
//                  load_batch also marks "batch_ready": 30 marks); then, with PLUGIN given,
//                  dlopens it and calls its plugin_step() 5 times (a "plugin" range each)
//   second thread: 7 x save_checkpoint() (its "work" ranges come from the same function)
//
//   tp_callsites [PLUGIN]
// Built with -g and frame pointers; the call sites are noipa (neither inlined nor merged).
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <thread>

namespace {

volatile unsigned g_sink = 0;

void Spin(unsigned n) {
  for (unsigned i = 0; i < n; ++i) g_sink = g_sink + i;
}

}  // namespace

__attribute__((noinline, noipa)) void load_batch(int i) {
  nvtxRangePushA("work");
  Spin(2000 + static_cast<unsigned>(i));
  nvtxMarkA("batch_ready");
  nvtxRangePop();
}

__attribute__((noinline, noipa)) void save_checkpoint(int i) {
  nvtxRangePushA("work");
  Spin(5000 + 3 * static_cast<unsigned>(i));
  nvtxRangePop();
}

int main(int argc, char** argv) {
  for (int i = 0; i < 30; ++i) load_batch(i);
  for (int i = 0; i < 10; ++i) save_checkpoint(i);
  std::thread other([] {
    for (int i = 0; i < 7; ++i) save_checkpoint(i);
  });
  other.join();
  if (argc > 1) {
    void* h = dlopen(argv[1], RTLD_NOW);
    if (h == nullptr) {
      fprintf(stderr, "tp_callsites: %s\n", dlerror());
      return 3;
    }
    auto step = reinterpret_cast<void (*)(int)>(dlsym(h, "plugin_step"));
    if (step == nullptr) return 4;
    for (int i = 0; i < 5; ++i) step(i);
  }
  printf("callsites done\n");
  return 0;
}
