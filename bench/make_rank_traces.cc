// Writes the trace files of a generated data-parallel job for the rank-scale benchmarks
// (scripts/bench --only ranks_report; docs/scaling.md): RANKS ranks, 8 a host ("node-000", ...),
// each a `trainprof run --follow-children` rank as the Python shim records it (rank variables,
// init_process_group, a dist.barrier() before and after training, STEPS training steps of data
// wait, forward, backward and optimizer step), with KERNELS kernel launches per step (the
// cudaLaunchKernel calls inside forward and backward, and the kernels on the GPU, device = local
// rank). Deterministic: timings jitter by a fixed pseudo-random sequence; each host's wall clock is
// off by up to ±40 ms and its monotonic clock counts from its own boot; one rank (RANKS / 2 + 5, or
// the last) waits 6x longer for its data (12 ms) and is the straggler.
//
//   make_rank_traces DIR RANKS STEPS [KERNELS]     (KERNELS: 0 without CUDA records; default 0)
//
// Records of one rank: about 8 + 10 * STEPS NVTX records plus 3 * KERNELS * STEPS CUDA records.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "phase_builder.h"
#include "trace_builder.h"

namespace {

using trainprof::format::Phase;
using trainprof::test::kMs;
using trainprof::test::PhaseThread;
using trainprof::test::TraceBuilder;
namespace fmt = trainprof::format;

constexpr uint64_t kUs = 1'000;
constexpr uint64_t T0 = 5'000'000'000;
constexpr uint64_t kRealtimeAtT0 = 1'741'064'767'000'000'000ull;
constexpr int kRanksPerHost = 8;

// xorshift64*: the same jitter on every run.
struct Jitter {
  uint64_t s;
  uint64_t Next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
  uint64_t Upto(uint64_t n) { return n == 0 ? 0 : Next() % n; }
};

void WriteRank(const std::string& dir, int rank, int ranks, int steps, int kernels, int slow) {
  const int host = rank / kRanksPerHost;
  const int local = rank % kRanksPerHost;
  Jitter j{0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(host * 7919 + 1)};
  const int64_t wall_off = static_cast<int64_t>(j.Upto(80 * kMs)) - static_cast<int64_t>(40 * kMs);
  const uint64_t mono = static_cast<uint64_t>(host) * 3'600'000 * kMs;  // its own boot
  Jitter r{0x2545f4914f6cdd1dull ^ static_cast<uint64_t>(rank + 1)};
  const int32_t pid = 10'000 + local * 10;
  const uint64_t start = T0 + 500 * kMs + static_cast<uint64_t>(local) * 2 * kMs;
  TraceBuilder b(pid, 9'000, start + mono);
  char name[32];
  std::snprintf(name, sizeof name, "node-%03d", host);
  b.Host(name)
      .StartRealtime(static_cast<uint64_t>(static_cast<int64_t>(kRealtimeAtT0 + (start - T0)) + wall_off))
      .Command({"/usr/bin/python3", "-u", "train.py"})
      .Executable("/usr/bin/python3.11")
      .Flags(fmt::kFlagFollowChildren);
  b.Env("RANK", std::to_string(rank)).Env("LOCAL_RANK", std::to_string(local)).Env("WORLD_SIZE", std::to_string(ranks));
  PhaseThread p(b, static_cast<uint32_t>(pid));
  b.ThreadName(p.thread(), static_cast<uint32_t>(pid), "python3");
  const int gpu = kernels > 0 ? b.Thread(static_cast<uint32_t>(pid + 1)) : -1;
  const uint64_t skew = r.Upto(200 * kUs);
  p.Range(start + 900 * kMs + mono, T0 + 2'000 * kMs + skew + mono, Phase::kInitProcessGroup, "init_process_group");
  p.Range(T0 + 2'010 * kMs + mono, T0 + 2'050 * kMs + r.Upto(200 * kUs) + mono, Phase::kCollective, "barrier");
  uint64_t t = T0 + 2'100 * kMs;  // the steps: in lockstep across ranks (the all-reduce in backward)
  uint64_t correlation = 1;
  std::vector<std::pair<uint64_t, uint64_t>> gpu_work;  // kernels, written after the step's calls
  for (int s = 0; s < steps; ++s) {
    // The gradient all-reduce in backward ends when the slowest rank's backward is done: every
    // rank's backward lasts until then, so the ranks stay in lockstep and wait for the slow one.
    const uint64_t sync = t + 12'400 * kUs + 20'600 * kUs + 40'600 * kUs;
    const uint64_t wait = (rank == slow ? 12 : 2) * kMs + r.Upto(300 * kUs);
    const uint64_t forward = 20 * kMs + r.Upto(500 * kUs);
    p.Range(t + mono, t + wait + mono, Phase::kDataWait, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
    uint64_t u = t + wait + 50 * kUs;
    const uint64_t ends[2] = {u + forward, sync + r.Upto(100 * kUs)};
    for (int half = 0; half < 2; ++half) {
      const Phase phase = half == 0 ? Phase::kForward : Phase::kBackward;
      const uint64_t d = ends[half] - u;
      p.Push(u + mono, phase, half == 0 ? "DistributedDataParallel.forward" : "");
      const int n = half == 0 ? kernels / 3 : kernels - kernels / 3;
      for (int k = 0; k < n; ++k) {
        const uint64_t at = u + 10 * kUs + static_cast<uint64_t>(k) * (d - 20 * kUs) / static_cast<uint64_t>(n);
        b.ApiCall(p.thread(), at + mono, at + 5 * kUs + mono, "cudaLaunchKernel_v7000", correlation);
        gpu_work.push_back({at + 20 * kUs + mono, correlation++});
      }
      p.Pop(ends[half] + mono);
      u = ends[half] + 20 * kUs;
    }
    p.Range(u + mono, u + 2 * kMs + mono, Phase::kOptimizerStep);
    for (const auto& [at, c] : gpu_work) {
      b.Kernel(gpu, {.start = at, .end = at + 150 * kUs, .name = "_Z6gemm_kPfS_S_i", .correlation = c,
                     .device = static_cast<uint32_t>(local)});
    }
    gpu_work.clear();
    t = sync + 3 * kMs;
  }
  p.Range(t + 10 * kMs + mono, t + 40 * kMs + r.Upto(200 * kUs) + mono, Phase::kCollective, "barrier");
  const uint64_t end = t + 200 * kMs + mono;
  b.ProcessEnd(p.thread(), end, fmt::EndKind::kExit, 0);
  b.HeaderEnd(fmt::EndKind::kExit, 0, end);
  std::snprintf(name, sizeof name, "node-%03d", host);
  b.WriteTo(dir + "/" + name, "pid-" + std::to_string(pid) + ".trace");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: make_rank_traces DIR RANKS STEPS [KERNELS]\n");
    return 1;
  }
  const std::string dir = argv[1];
  const int ranks = std::atoi(argv[2]);
  const int steps = std::atoi(argv[3]);
  const int kernels = argc == 5 ? std::atoi(argv[4]) : 0;
  if (ranks < 1 || steps < 1 || kernels < 0) {
    std::fprintf(stderr, "make_rank_traces: RANKS and STEPS must be at least 1, KERNELS at least 0\n");
    return 1;
  }
  try {
    const int slow = ranks > 10 ? ranks / 2 + 5 : ranks - 1;
    for (int rank = 0; rank < ranks; ++rank) {
      if (rank % kRanksPerHost == 0) {
        char name[32];
        std::snprintf(name, sizeof name, "/node-%03d", rank / kRanksPerHost);
        std::filesystem::create_directories(dir + name);
      }
      WriteRank(dir, rank, ranks, steps, kernels, slow);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_rank_traces: %s\n", e.what());
    return 1;
  }
  return 0;
}
