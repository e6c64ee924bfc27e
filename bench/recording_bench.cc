// Cost of recording, in the profiled program (Google Benchmark). scripts/bench runs this binary
// twice: once plain (NVTX calls are NVTX's no-op) and once under `trainprof run` (the injection
// library records them), and compares both with the floor measured here in-process.
//
//   BM_NvtxPushPop     nvtxRangePushA + nvtxRangePop: one pair per iteration
//   BM_NvtxMark        nvtxMarkA
//   BM_NvtxPushPopAtDepth/D  the pair called D frames deep (noinline recursion): under
//                      `trainprof run --backtrace=nvtx` each push takes a stack of about D frames
//                      (the same stack every time: the table's lookup, no new STACK), so this
//                      measures ns per captured stack by depth; without nvtx stacks it must cost
//                      what BM_NvtxPushPop costs
//   BM_Floor           the floor of a push+pop pair: two clock reads and two records of the same
//                      encoded size (tag, varint dt and fields) stored into a 64 KiB chunk, each
//                      published with one release store — what any recorder must at least do
//                      with clock_gettime
//   BM_FloorTsc        the same with the TSC (two plain `rdtsc`) instead of clock_gettime: the
//                      floor of a recorder on the TSC clock (inject/trace_clock.h)
// Each runs on 1 and 2 threads (the per-thread cost should not grow: no shared cache lines).
#include <benchmark/benchmark.h>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "trainprof/trace_format.h"

namespace {

void BM_NvtxPushPop(benchmark::State& state) {
  for (auto _ : state) {
    nvtxRangePushA("step");
    nvtxRangePop();
  }
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_NvtxPushPop)->Threads(1)->Threads(2)->UseRealTime();

void BM_NvtxMark(benchmark::State& state) {
  for (auto _ : state) nvtxMarkA("checkpoint");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NvtxMark)->Threads(1)->UseRealTime();

// Calls one push+pop pair `depth` frames below the caller (noipa: each level a real frame).
__attribute__((noinline, noipa)) void PairAtDepth(int depth) {
  if (depth > 1) {
    PairAtDepth(depth - 1);
    benchmark::ClobberMemory();  // keeps the recursive call from being a tail call
    return;
  }
  nvtxRangePushA("step");
  nvtxRangePop();
}

void BM_NvtxPushPopAtDepth(benchmark::State& state) {
  const int depth = static_cast<int>(state.range(0));
  for (auto _ : state) PairAtDepth(depth);
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_NvtxPushPopAtDepth)->Arg(1)->Arg(16)->Arg(48)->Threads(1)->UseRealTime();

inline uint64_t Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t NowTsc() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return Now();
#endif
}

// One thread's chunk, on its own cache lines.
struct alignas(64) Chunk {
  std::atomic<uint32_t> committed{0};
  uint64_t prev = 0;
  uint8_t data[64 * 1024];
};

template <uint64_t (*Clock)()>
void Floor(benchmark::State& state) {
  auto* c = new Chunk;
  uint8_t* p = c->data;
  uint8_t* const end = c->data + sizeof c->data - 64;
  c->prev = Clock();
  for (auto _ : state) {
    if (p > end) p = c->data;  // a new chunk: the recorder claims one every ~15000 pairs
    uint64_t t = Clock();
    *p++ = 1;  // push: tag, dt, domain, name, category
    p = trainprof::format::PutVarint(p, t - c->prev);
    p = trainprof::format::PutVarint(p, 0);
    p = trainprof::format::PutVarint(p, 7);
    p = trainprof::format::PutVarint(p, 0);
    c->prev = t;
    c->committed.store(static_cast<uint32_t>(p - c->data), std::memory_order_release);
    t = Clock();
    *p++ = 2;  // pop: tag, dt, domain
    p = trainprof::format::PutVarint(p, t - c->prev);
    p = trainprof::format::PutVarint(p, 0);
    c->prev = t;
    c->committed.store(static_cast<uint32_t>(p - c->data), std::memory_order_release);
  }
  benchmark::DoNotOptimize(c->data[0]);
  delete c;
  state.SetItemsProcessed(state.iterations() * 2);
}
void BM_Floor(benchmark::State& state) { Floor<Now>(state); }
BENCHMARK(BM_Floor)->Threads(1)->Threads(2)->UseRealTime();
void BM_FloorTsc(benchmark::State& state) { Floor<NowTsc>(state); }
BENCHMARK(BM_FloorTsc)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
