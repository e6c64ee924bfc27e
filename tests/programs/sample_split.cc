// CPU time split 3:1 between two functions, for `trainprof run --sample` (tests/e2e/test_sampling.py):
// heavy_work runs 3 iterations for each of light_work's, interleaved in rounds, so the split is
// by iteration counts, not by wall time (a loaded machine slows both alike).
//
//   tp_sample_split [ITERATIONS_OF_LIGHT_WORK]   default 60,000,000 (~100 ms here)
#include <cstdio>
#include <cstdlib>

namespace {

volatile unsigned long g_sink;

// Distinct bodies (no identical-code folding), never inlined: each is one frame in the samples.
__attribute__((noinline, noclone)) void heavy_work(long n) {
  unsigned long x = g_sink;
  for (long i = 0; i < n; ++i) {
    x = x * 2862933555777941757ul + 3037000493ul;
    asm volatile("" : "+r"(x));
  }
  g_sink = x;
}

__attribute__((noinline, noclone)) void light_work(long n) {
  unsigned long y = g_sink;
  while (n-- > 0) {
    y = y * 6364136223846793005ul + 1442695040888963407ul;
    asm volatile("" : "+r"(y));
  }
  g_sink = y;
}

}  // namespace

int main(int argc, char** argv) {
  const long light = argc > 1 ? atol(argv[1]) : 60000000L;
  constexpr int kRounds = 20;
  for (int r = 0; r < kRounds; ++r) {
    heavy_work(3 * light / kRounds);
    light_work(light / kRounds);
  }
  printf("sample_split done %lu\n", static_cast<unsigned long>(g_sink) & 1);
  return 0;
}
