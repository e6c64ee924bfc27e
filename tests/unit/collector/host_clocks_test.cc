// Every host on one clock (collector/analysis/host_clocks.h): the offset of a host's wall clock from
// the instants its ranks share with the reference host's, which kind of instant is used, the
// fall-back to the wall clock, and which hosts a long Hosts table lists in text (rank_tables.h).
#include "collector/analysis/host_clocks.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "collector/analysis/bottleneck.h"
#include "collector/report/rank_tables.h"
#include "collector/read/process_tree.h"
#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
#include "collector/report/report.h"
#include "phase_builder.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::kMs;
using test::PhaseThread;
using test::TraceBuilder;
using test::TraceOf;
namespace fmt = format;

constexpr uint64_t T0 = 10'000'000'000;
constexpr uint64_t kRealtime = 1'741'064'767'000'000'000ull;  // node-a's wall clock at T0

/// Ranks on hosts; each host's monotonic clock counts from another boot (`mono` ahead of node-a's)
/// and its wall clock is `wall` ahead of node-a's.
struct Job {
  std::vector<std::unique_ptr<TraceBuilder>> ranks;
  std::vector<std::unique_ptr<PhaseThread>> threads;
  std::vector<uint64_t> mono;

  /// Rank `r` on `host`; returns its phase thread, whose times are node-a's monotonic times (the
  /// builder adds the host's `mono`).
  PhaseThread& Rank(int r, const std::string& host, uint64_t mono_ahead, int64_t wall_ahead) {
    const int32_t pid = 500 + r;
    ranks.push_back(std::make_unique<TraceBuilder>(pid, 1, T0 + mono_ahead));
    TraceBuilder& b = *ranks.back();
    b.Host(host).StartRealtime(static_cast<uint64_t>(static_cast<int64_t>(kRealtime) + wall_ahead));
    b.Env("RANK", std::to_string(r)).Env("WORLD_SIZE", "4");
    b.HeaderEnd(fmt::EndKind::kExit, 0, T0 + mono_ahead + 5'000 * kMs);
    threads.push_back(std::make_unique<PhaseThread>(b, static_cast<uint32_t>(pid)));
    threads.back()->forward_name = "DistributedDataParallel.forward";  // DDP ranks: they meet in each step
    mono.push_back(mono_ahead);
    return *threads.back();
  }
  /// A collective range of rank index i that ends at node-a's monotonic `end` (+ its host's lead).
  void Collective(size_t i, uint64_t end, const char* name, format::Phase p = format::Phase::kCollective) {
    threads[i]->Range(end - 5 * kMs + mono[i], end + mono[i], p, name);
  }
  Trace Load() const {
    std::vector<const TraceBuilder*> all;
    for (const auto& b : ranks) all.push_back(b.get());
    return TraceOf(all);
  }
};

const HostClock* Clock(const Trace& t, const std::string& host) {
  for (const HostClock& h : t.host_clocks) {
    if (h.host == host) return &h;
  }
  return nullptr;
}

uint64_t StartOf(const Trace& t, int64_t rank) {
  for (const Process& p : t.processes) {
    if (p.rank == rank) return p.start_realtime_ns;
  }
  return 0;
}

// Two ranks a host; node-b's wall clock 2.5 s ahead, its monotonic clock 900 s ahead.
Job TwoHosts(int64_t wall_b = 2'500 * static_cast<int64_t>(kMs)) {
  Job j;
  j.Rank(0, "node-a", 0, 0);
  j.Rank(1, "node-a", 0, 0);
  j.Rank(2, "node-b", 900'000 * kMs, wall_b);
  j.Rank(3, "node-b", 900'000 * kMs, wall_b);
  return j;
}

TEST(HostClocks, BarriersGiveTheOffsetAndTheEndSkewItsUncertainty) {
  Job j = TwoHosts();
  // Three barriers; the ranks leave each within 0.3 ms, in an order that is not the hosts'.
  const uint64_t skew[4] = {100'000, 300'000, 0, 200'000};
  for (uint64_t k = 0; k < 3; ++k) {
    for (size_t i = 0; i < 4; ++i) j.Collective(i, T0 + (100 + 100 * k) * kMs + skew[i], "barrier");
  }
  Trace t = j.Load();
  const uint64_t b_start = StartOf(t, 2);
  AlignHostClocks(&t);
  EXPECT_EQ(t.clock_reference, "node-a");
  ASSERT_EQ(t.host_clocks.size(), 2u);
  const HostClock* a = Clock(t, "node-a");
  const HostClock* b = Clock(t, "node-b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->source, "reference");
  EXPECT_EQ(a->offset_ns, 0);
  EXPECT_EQ(b->source, "barrier");
  EXPECT_EQ(b->instants, 3u);
  EXPECT_EQ(b->ranks, 2u);
  // median(node-b ends) - median(node-a ends) = (0 + 200)/2 - (100 + 300)/2 µs = -100 µs off 2.5 s.
  EXPECT_EQ(b->offset_ns, 2'500 * static_cast<int64_t>(kMs) - 100'000);
  // Aligned, node-b's ends are 100 and 300 µs: the four ends span 0.2 ms.
  EXPECT_EQ(b->uncertainty_ns, 200'000u);
  EXPECT_LE(std::abs(b->offset_ns - 2'500 * static_cast<int64_t>(kMs)), static_cast<int64_t>(b->uncertainty_ns));
  // node-b's processes move onto node-a's clock; node-a's stay.
  EXPECT_EQ(StartOf(t, 2), b_start - static_cast<uint64_t>(b->offset_ns));
  EXPECT_EQ(StartOf(t, 0), kRealtime);
}

// The estimate from the processes' shared instants alone (what the report's merge of summaries
// does) is the one AlignHostClocks makes from the trace, whatever order the processes come in.
TEST(HostClocks, EstimateFromSharedInstantsIsTheTracesWhateverTheOrder) {
  Job j = TwoHosts();
  const uint64_t skew[4] = {100'000, 300'000, 0, 200'000};
  for (uint64_t k = 0; k < 3; ++k) {
    for (size_t i = 0; i < 4; ++i) j.Collective(i, T0 + (100 + 100 * k) * kMs + skew[i], "barrier");
  }
  Trace t = j.Load();
  std::vector<std::vector<SharedInstant>> instants;
  std::vector<ClockInput> in;
  for (const Process& p : t.processes) {
    instants.push_back(SharedInstantsOf(p, CollectPhases(p, t.strings.Find("trainprof")), t.strings));
  }
  for (size_t i = 0; i < t.processes.size(); ++i) {
    const Process& p = t.processes[i];
    in.push_back({p.host, p.rank, p.start_realtime_ns, p.start_ns, &instants[i]});
  }
  EXPECT_EQ(instants[0].size(), 3u);
  const HostClockEstimate forward = EstimateHostClocks(in);
  std::vector<ClockInput> reversed(in.rbegin(), in.rend());
  const HostClockEstimate backward = EstimateHostClocks(reversed);
  AlignHostClocks(&t);
  ASSERT_EQ(forward.clocks.size(), 2u);
  EXPECT_EQ(forward.reference, "node-a");
  EXPECT_EQ(backward.reference, "node-a");
  for (size_t h = 0; h < 2; ++h) {
    EXPECT_EQ(forward.clocks[h].offset_ns, t.host_clocks[h].offset_ns);
    EXPECT_EQ(backward.clocks[h].offset_ns, t.host_clocks[h].offset_ns);
    EXPECT_EQ(backward.clocks[h].uncertainty_ns, t.host_clocks[h].uncertainty_ns);
    EXPECT_EQ(backward.clocks[h].source, t.host_clocks[h].source);
  }
  for (size_t i = 0; i < t.processes.size(); ++i) {
    EXPECT_EQ(forward.start_realtime_ns[i], t.processes[i].start_realtime_ns);
    EXPECT_EQ(backward.start_realtime_ns[t.processes.size() - 1 - i], t.processes[i].start_realtime_ns);
  }
  EXPECT_NE(forward.start_realtime_ns[2], in[2].start_realtime_ns);  // node-b's moved
}

TEST(HostClocks, BarriersComeBeforeCollectivesAndInitProcessGroup) {
  Job j = TwoHosts();
  for (size_t i = 0; i < 4; ++i) {
    j.Collective(i, T0 + 50 * kMs + (i >= 2 ? 7 * kMs : 0), "init_process_group", format::Phase::kInitProcessGroup);
    j.Collective(i, T0 + 100 * kMs + (i >= 2 ? 3 * kMs : 0), "all_reduce");
    j.Collective(i, T0 + 200 * kMs, "barrier");
  }
  Trace t = j.Load();
  AlignHostClocks(&t);
  EXPECT_EQ(Clock(t, "node-b")->source, "barrier");
  EXPECT_EQ(Clock(t, "node-b")->offset_ns, 2'500 * static_cast<int64_t>(kMs));
  EXPECT_EQ(Clock(t, "node-b")->uncertainty_ns, 0u);

  Job c = TwoHosts();  // no barrier: the blocking collectives of CPU ranks (gloo)
  for (size_t i = 0; i < 4; ++i) {
    c.Collective(i, T0 + 50 * kMs + (i >= 2 ? 7 * kMs : 0), "init_process_group", format::Phase::kInitProcessGroup);
    c.Collective(i, T0 + 100 * kMs + (i >= 2 ? 3 * kMs : 0), "all_reduce");
  }
  Trace ct = c.Load();
  AlignHostClocks(&ct);
  EXPECT_EQ(Clock(ct, "node-b")->source, "collective");
  EXPECT_EQ(Clock(ct, "node-b")->offset_ns, 2'503 * static_cast<int64_t>(kMs));

  Job g = TwoHosts();  // init_process_group alone
  for (size_t i = 0; i < 4; ++i) {
    g.Collective(i, T0 + 50 * kMs + (i >= 2 ? 7 * kMs : 0), "init_process_group", format::Phase::kInitProcessGroup);
  }
  Trace gt = g.Load();
  AlignHostClocks(&gt);
  EXPECT_EQ(Clock(gt, "node-b")->source, "init_process_group");
  EXPECT_EQ(Clock(gt, "node-b")->offset_ns, 2'507 * static_cast<int64_t>(kMs));
}

TEST(HostClocks, CollectivesOfRanksWithGpuActivityAreNotInstants) {
  // With NCCL, all_reduce returns once the work is queued: its ends are not shared instants.
  Job j = TwoHosts();
  for (size_t i = 0; i < 4; ++i) {
    j.Collective(i, T0 + 100 * kMs + i * 9 * kMs, "all_reduce");
    TraceBuilder& b = *j.ranks[i];
    const int g = b.Thread(9000 + static_cast<uint32_t>(i));
    b.Kernel(g, {.start = T0 + j.mono[i] + 120 * kMs, .end = T0 + j.mono[i] + 121 * kMs, .name = "_Z3fooPf",
                 .correlation = 1});
  }
  Trace t = j.Load();
  AlignHostClocks(&t);
  EXPECT_EQ(Clock(t, "node-b")->source, "wall_clock");
}

// GPU ranks (NCCL): the k-th all-reduce kernel of each rank starts when that rank gets to it and
// ends together with the others' (within `skew`); node-b's ends, on its own clocks.
Job GpuRanksWithAllReduceKernels(const uint64_t (&skew)[4], int kernels) {
  Job j = TwoHosts();
  for (size_t i = 0; i < 4; ++i) {
    TraceBuilder& b = *j.ranks[i];
    const int g = b.Thread(9000 + static_cast<uint32_t>(i));
    const uint64_t m = T0 + j.mono[i];
    j.Collective(i, T0 + 50 * kMs + (i >= 2 ? 7 * kMs : 0), "init_process_group", format::Phase::kInitProcessGroup);
    for (int k = 0; k < kernels; ++k) {
      const uint64_t end = m + (100 + 50 * static_cast<uint64_t>(k)) * kMs + skew[i];
      b.Kernel(g, {.start = end - (1 + 3 * i) * kMs, .end = end, .name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                   .correlation = 10 + static_cast<uint64_t>(k)});
      // A compute kernel of the rank's own, at its own time: no shared instant.
      b.Kernel(g, {.start = end + kMs + i * kMs, .end = end + 2 * kMs + i * kMs, .name = "_Z3fooPf",
                   .correlation = 100 + static_cast<uint64_t>(k)});
    }
  }
  return j;
}

TEST(HostClocks, NcclKernelEndsAlignGpuRanksBeforeInitProcessGroup) {
  const uint64_t skew[4] = {20'000, 60'000, 0, 40'000};  // the ranks' kernel ends within 60 µs
  Job j = GpuRanksWithAllReduceKernels(skew, 5);
  Trace t = j.Load();
  AlignHostClocks(&t);
  const HostClock* b = Clock(t, "node-b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->source, "nccl_kernel");
  EXPECT_EQ(b->instants, 5u);
  // median(node-b ends) - median(node-a ends) = (0 + 40)/2 - (20 + 60)/2 µs = -20 µs off 2.5 s;
  // aligned, node-b's ends are at 20 and 60 µs: the four ends span 40 µs.
  EXPECT_EQ(b->offset_ns, 2'500 * static_cast<int64_t>(kMs) - 20'000);
  EXPECT_EQ(b->uncertainty_ns, 40'000u);
  EXPECT_LE(std::abs(b->offset_ns - 2'500 * static_cast<int64_t>(kMs)), static_cast<int64_t>(b->uncertainty_ns));
}

TEST(HostClocks, TheReaderNotesNcclKernelEndsWhateverItKeeps) {
  // The report's windowed read keeps no GPU record: the ends are noted as the kernels are decoded,
  // names resolved, compute kernels left out.
  const uint64_t skew[4] = {0, 0, 0, 0};
  Job j = GpuRanksWithAllReduceKernels(skew, 3);
  const std::vector<uint8_t> bytes = j.ranks[2]->Build();
  for (const KeepCuda keep : {KeepCuda::kAll, KeepCuda::kStackedCalls, KeepCuda::kNone}) {
    StringPool pool;
    const ReadResult r = ReadTraceBytes(bytes, "pid-502.trace", &pool, {.keep_cuda = keep});
    ASSERT_TRUE(r.image.has_value());
    const std::vector<KernelEnd>& ends = r.image->nccl_kernel_ends;
    ASSERT_EQ(ends.size(), 3u) << static_cast<int>(keep);
    for (size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(pool.Get(ends[k].name), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
      EXPECT_EQ(ends[k].end_ns, T0 + j.mono[2] + (100 + 50 * k) * kMs);
    }
    EXPECT_EQ(r.image->cuda.kernels.size(), keep == KeepCuda::kAll ? 6u : 0u);
  }
}

TEST(HostClocks, NcclKernelNamesDefinedByAThreadDecodedLaterAreNotedAndTheNotesAreCapped) {
  // The exit flush's kernels on the main thread use names a later thread's chunk defines (the
  // reader decodes thread by thread): noted, then told at Resolve; a compute kernel's dropped.
  // Past kMaxNcclEndsPerName ends of a name, no more are noted.
  TraceBuilder b(600, 1, T0);
  b.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 5'000 * kMs);
  const int main = b.Thread(600);
  const int flusher = b.Thread(601);
  b.String(flusher, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  b.String(flusher, "_Z3fooPf");
  const uint64_t n = kMaxNcclEndsPerName + 44;
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t end = T0 + (10 + k) * kMs;
    b.Kernel(main, {.start = end - kMs / 2, .end = end, .name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                    .correlation = 1 + 2 * k});
    b.Kernel(main, {.start = end + 100'000, .end = end + 200'000, .name = "_Z3fooPf", .correlation = 2 + 2 * k});
  }
  StringPool pool;
  const ReadResult r = ReadTraceBytes(b.Build(), "pid-600.trace", &pool, {.keep_cuda = KeepCuda::kNone});
  ASSERT_TRUE(r.image.has_value());
  const std::vector<KernelEnd>& ends = r.image->nccl_kernel_ends;
  ASSERT_EQ(ends.size(), kMaxNcclEndsPerName);
  for (size_t k = 0; k < ends.size(); ++k) {
    EXPECT_EQ(pool.Get(ends[k].name), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    EXPECT_EQ(ends[k].end_ns, T0 + (10 + k) * kMs);
  }
}

TEST(HostClocks, NcclKernelsOfTorchProfilerTracesAlignTheirHosts) {
  // Four torch.profiler (Kineto) rank files, two a host (named by the files, as torch.profiler's
  // tensorboard handler names them); node-b's clock 2.5 s ahead; three all-reduce kernels each,
  // ending within 30 µs of each other, and a compute kernel at each rank's own time.
  std::vector<std::string> texts, names;
  const int64_t lead_us[4] = {0, 0, 2'500'000, 2'500'000};
  const int skew_us[4] = {10, 30, 0, 20};
  for (int r = 0; r < 4; ++r) {
    std::string ev;
    for (int k = 0; k < 3; ++k) {
      const int64_t end = 1'000'000 + 50'000 * k + skew_us[r] + lead_us[r];
      const int64_t start = end - 800 - 300 * r;
      ev += R"({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 7, "ts": )" +
            std::to_string(start) + R"(, "dur": )" + std::to_string(end - start) +
            R"(, "args": {"device": 0, "context": 1, "stream": 7, "correlation": )" + std::to_string(10 + k) + "}},\n";
      ev += R"js({"ph": "X", "cat": "kernel", "name": "void gemm<float>(float*)", "pid": 0, "tid": 7, "ts": )js" +
            std::to_string(end + 1000 + 700 * r) + R"(, "dur": 500, "args": {"device": 0, "context": 1, "stream": 7, "correlation": )" +
            std::to_string(100 + k) + "}},\n";
    }
    ev += R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 42, "tid": 11, "ts": )" +
          std::to_string(990'000 + lead_us[r]) + R"(, "dur": 200000})";
    texts.push_back(R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": )" + std::to_string(r) +
                    R"(, "world_size": 4}, "traceEvents": [)" + ev + "]}");
    names.push_back(std::string(r < 2 ? "node-a" : "node-b") + "_" + std::to_string(100 + r) + ".1700000000123.pt.trace.json");
  }
  std::vector<TraceBytes> files;
  for (int r = 0; r < 4; ++r) {
    files.push_back({names[static_cast<size_t>(r)],
                     std::span(reinterpret_cast<const uint8_t*>(texts[static_cast<size_t>(r)].data()),
                               texts[static_cast<size_t>(r)].size())});
  }
  Trace t = LoadTraceBytes(files);
  ASSERT_EQ(t.processes.size(), 4u);
  AlignHostClocks(&t);
  const HostClock* b = Clock(t, "node-b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(t.clock_reference, "node-a");
  EXPECT_EQ(b->source, "nccl_kernel");
  EXPECT_EQ(b->instants, 3u);
  // median(node-b) - median(node-a) = 10 - 20 µs off 2.5 s; aligned, the ends span 20 µs.
  EXPECT_EQ(b->offset_ns, 2'500 * static_cast<int64_t>(kMs) - 10'000);
  EXPECT_EQ(b->uncertainty_ns, 20'000u);
}

TEST(HostClocks, WithoutASharedInstantTheWallClockStaysAndTheSentenceSaysSo) {
  Job j = TwoHosts();
  Trace t = j.Load();
  const uint64_t b_start = StartOf(t, 2);
  AlignHostClocks(&t);
  const HostClock* b = Clock(t, "node-b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->source, "wall_clock");
  EXPECT_EQ(b->offset_ns, 0);
  EXPECT_EQ(b->instants, 0u);
  EXPECT_EQ(StartOf(t, 2), b_start);
  RankSync rs;
  rs.clock = "realtime";
  rs.ranks.resize(2);
  rs.ranks[0].host = "node-a";
  rs.ranks[1].host = "node-b";
  const std::vector<std::string> text = DescribeRanks(rs, t.host_clocks, t.clock_reference);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text[0],
            "Ranks on 2 hosts: arrivals compared on CLOCK_REALTIME: node-b shares no barrier, blocking collective, "
            "NCCL kernel or init_process_group with node-a, so its wall clock is taken as it is and lateness across hosts is "
            "only as exact as the hosts' clock synchronisation (Hosts).");
}

TEST(HostClocks, ARankZeroWithoutInstantsDoesNotBecomeTheReference) {
  // A stray rank-0 file (another job's torch.profiler trace, a rank that recorded no phases) on a
  // third host: the reference is the lowest rank that shares instants.
  Job j;
  j.Rank(0, "stray", 5'000'000 * kMs, 90 * static_cast<int64_t>(kMs));
  j.Rank(1, "node-a", 0, 0);
  j.Rank(2, "node-b", 900'000 * kMs, 2'500 * static_cast<int64_t>(kMs));
  for (size_t i = 1; i < 3; ++i) j.Collective(i, T0 + 100 * kMs, "barrier");
  Trace t = j.Load();
  AlignHostClocks(&t);
  EXPECT_EQ(t.clock_reference, "node-a");
  EXPECT_EQ(Clock(t, "node-b")->source, "barrier");
  EXPECT_EQ(Clock(t, "node-b")->offset_ns, 2'500 * static_cast<int64_t>(kMs));
  EXPECT_EQ(Clock(t, "stray")->source, "wall_clock");
}

TEST(HostClocks, AHostWithoutAWallClockIsAlignedFromItsMonotonicClockOrLeftUnknown) {
  // node-b's headers give no wall-clock start (damaged): with shared barriers its monotonic clock
  // is put on node-a's wall clock; without, it is "unknown".
  for (const bool barriers : {true, false}) {
    Job j = TwoHosts();
    for (size_t i = 2; i < 4; ++i) j.ranks[i]->StartRealtime(0);
    if (barriers) {
      for (size_t i = 0; i < 4; ++i) j.Collective(i, T0 + 100 * kMs, "barrier");
    }
    Trace t = j.Load();
    ASSERT_EQ(StartOf(t, 2), 0u);
    AlignHostClocks(&t);
    const HostClock* b = Clock(t, "node-b");
    ASSERT_NE(b, nullptr);
    EXPECT_FALSE(b->wall_clock);
    if (barriers) {
      EXPECT_EQ(b->source, "barrier");
      EXPECT_EQ(StartOf(t, 2), kRealtime);  // started with node-a's ranks, at node-a's kRealtime
    } else {
      EXPECT_EQ(b->source, "unknown");
      EXPECT_EQ(StartOf(t, 2), 0u);
    }
  }
}

// Ranks 0, 1 on node-a and 2, 3 on node-b with 8 steps; rank 3 is 20 ms late at each backward.
// Two barriers; node-b's ranks leave the second `skew` later than node-a's (a pairing gone wrong:
// the ends disagree by `skew` between the instants).
Report StragglerAcrossHosts(uint64_t skew) {
  Job j = TwoHosts();
  for (size_t i = 0; i < 4; ++i) {
    j.Collective(i, T0 + 100 * kMs, "barrier");
    j.Collective(i, T0 + 150 * kMs + (i >= 2 ? skew : 0), "barrier");
  }
  for (size_t i = 0; i < 4; ++i) {
    uint64_t t = T0 + 300 * kMs;
    for (int s = 0; s < 8; ++s) {
      const uint64_t late = i == 3 ? 20 * kMs : 0;
      t = j.threads[i]->Step(t + j.mono[i], {.wait = kMs, .forward = 10 * kMs + late, .backward = 30 * kMs - late,
                                            .optimizer = 2 * kMs}) - j.mono[i];
    }
  }
  Trace trace = j.Load();
  AlignHostClocks(&trace);
  return Analyze(std::move(trace), {});
}

TEST(HostClocks, NoStragglerIsNamedAcrossHostsWhoseClocksAreKnownLessWellThanTheLateness) {
  const Report aligned = StragglerAcrossHosts(0);
  ASSERT_TRUE(aligned.bottleneck.ranks.has_value());
  EXPECT_TRUE(aligned.bottleneck.ranks->straggler);
  EXPECT_EQ(aligned.bottleneck.ranks->ranks[static_cast<size_t>(aligned.bottleneck.ranks->latest)].rank, 3);
  EXPECT_FALSE(aligned.bottleneck.ranks->clocks_too_uncertain);
  // The differences 0 and 60 ms: the offset is their median, 30 ms, and each instant's ends spread
  // 30 ms once aligned: more than the 4.3 ms of lateness a straggler needs.
  const Report uncertain = StragglerAcrossHosts(60 * kMs);
  ASSERT_TRUE(uncertain.bottleneck.ranks.has_value());
  const RankSync& rs = *uncertain.bottleneck.ranks;
  EXPECT_TRUE(rs.clocks_too_uncertain);
  EXPECT_FALSE(rs.straggler);
  EXPECT_EQ(rs.clock_uncertainty_ns, 30 * kMs);
  bool said = false;
  for (const std::string& line : uncertain.bottleneck.rank_text) {
    said = said || line.rfind("No straggler named across hosts: the hosts' clocks are aligned only within 30.0 ms", 0) == 0;
  }
  EXPECT_TRUE(said) << ::testing::PrintToString(uncertain.bottleneck.rank_text);
}

TEST(HostClocks, ProcessesAreListedInStartOrderOnTheAlignedClock) {
  // node-b's clock ran 2.5 s ahead: unaligned, its launcher (started 1 s before node-a's) came
  // after node-a's tree; aligned, it comes first, its rank still under it.
  auto process = [](const char* host, int32_t pid, uint64_t start, int parent) {
    Process p;
    p.host = host;
    p.pid = pid;
    p.start_realtime_ns = start;
    p.parent = parent;
    return p;
  };
  Trace t;
  t.processes = {process("node-a", 10, kRealtime, -1), process("node-a", 11, kRealtime + kMs, 0),
                 process("node-b", 20, kRealtime - 1'000 * kMs, -1), process("node-b", 21, kRealtime - 999 * kMs, 2)};
  t.host_clocks = {HostClock{.host = "node-a", .source = "reference"}, HostClock{.host = "node-b", .source = "wall_clock"}};
  OrderByAlignedStarts(&t);  // nothing was aligned: nothing moves
  EXPECT_EQ(t.processes[0].pid, 10);
  t.host_clocks[1].source = "barrier";
  OrderByAlignedStarts(&t);
  ASSERT_EQ(t.processes.size(), 4u);
  EXPECT_EQ(t.processes[0].pid, 20);
  EXPECT_EQ(t.processes[1].pid, 21);
  EXPECT_EQ(t.processes[2].pid, 10);
  EXPECT_EQ(t.processes[3].pid, 11);
  EXPECT_EQ(t.processes[1].parent, 0);
  EXPECT_EQ(t.processes[3].parent, 2);
  EXPECT_EQ(t.processes[3].depth, 1);
  EXPECT_EQ(t.processes[2].children, std::vector<int>{3});
}

TEST(HostClocks, OneHostChangesNothing) {
  Job j;
  j.Rank(0, "node-a", 0, 0);
  j.Rank(1, "node-a", 0, 0);
  for (size_t i = 0; i < 2; ++i) j.Collective(i, T0 + 100 * kMs, "barrier");
  Trace t = j.Load();
  AlignHostClocks(&t);
  EXPECT_TRUE(t.host_clocks.empty());
  EXPECT_EQ(t.clock_reference, "");
  EXPECT_EQ(StartOf(t, 1), kRealtime);
}

TEST(HostClocks, ALongHostsTableListsTheReferenceTheWallClocksAndTheExtremesInText) {
  Trace t;
  for (int h = 0; h < 30; ++h) {
    HostClock c;
    c.host = "node-" + std::to_string(100 + h);
    c.ranks = 8;
    c.source = h == 0 ? "reference" : h == 7 ? "wall_clock" : "barrier";
    c.offset_ns = h == 0 || h == 7 ? 0 : (h % 2 == 0 ? 1 : -1) * static_cast<int64_t>(h) * 1'000'000;
    c.uncertainty_ns = h == 0 || h == 7 ? 0 : static_cast<uint64_t>((h * 37) % 29) * 1'000;
    t.host_clocks.push_back(c);
  }
  Report r;
  ChooseTextRanks(t.host_clocks, &r);
  ASSERT_TRUE(r.text_hosts.has_value());
  // The reference, the wall-clock host, offsets of 29, 28, 27, 26, 25 ms, and uncertainties of
  // 28 µs (h 18: 666 % 29), 26 (h 25), 25 (h 14), 24 (h 3), 23 (h 21).
  EXPECT_EQ(*r.text_hosts, (std::set<std::string>{"node-100", "node-107", "node-129", "node-128", "node-127",
                                                   "node-126", "node-125", "node-118", "node-114", "node-103",
                                                   "node-121"}));
  r.options.by_rank = true;
  ChooseTextRanks(t.host_clocks, &r);
  EXPECT_FALSE(r.text_hosts.has_value());
  t.host_clocks.resize(kHostsInFull);
  r.options.by_rank = false;
  ChooseTextRanks(t.host_clocks, &r);
  EXPECT_FALSE(r.text_hosts.has_value());
}

}  // namespace
}  // namespace trainprof::collector
