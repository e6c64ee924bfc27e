// GPU idle time by kind per stream and kernel launch statistics (HTA's definitions:
// stats/gpu_idle_kinds.h, stats/kernel_launches.h, docs/analysis.md) on synthetic CudaData with
// known numbers, and their tables in the report (JSON gpu_idle_by_kind, kernel_launches).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "collector/base/duration_summary.h"
#include "collector/base/sample_stats.h"
#include "collector/read/trace_set.h"
#include "collector/report/gpu_idle_launch_tables.h"
#include "collector/render/render.h"
#include "collector/report/report.h"
#include "collector/stats/gpu_idle_kinds.h"
#include "collector/stats/kernel_launches.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

constexpr uint64_t kUs = 1'000;
namespace fmt = trainprof::format;

GpuKernel Kernel(uint64_t start_us, uint64_t end_us, uint64_t correlation, uint32_t device = 0, uint32_t stream = 7,
                 StringId name = 0) {
  return test::At({.start_ns = start_us * kUs, .end_ns = end_us * kUs, .correlation = correlation},
                  GpuKernel{.name = name, .device = device, .stream = stream});
}

CudaCall Call(uint64_t begin_us, uint64_t end_us, uint64_t correlation, StringId name = 0, bool returned = true) {
  return {.begin_ns = begin_us * kUs, .end_ns = end_us * kUs, .correlation = correlation, .name = name,
          .returned = returned};
}

// Device 0 stream 7 (µs):
//   K1 100..200 (call 50)   first op: no gap
//   K2 210..300 (call 150)  call before K1's end, gap 10 < 30        → kernel wait 10
//   K3 400..500 (call 350)  call after K2's end (300)                 → host wait 100
//   K4 600..700 (call 450)  call before K3's end, gap 100 ≥ 30        → other 100
//   memcpy 700..750 (call 650)  gap 0                                 → kernel wait 0
//   memset 740..760 (no call)   starts before the memcpy ended: 0, not −10
//   K5 800..900 (no call in the trace)  gap 40: never host wait       → other 40
// Device 0 stream 8: one kernel (no gap). Device 1 stream 7: 0..10, 20..30 (gap 10: kernel
// wait), 60..70 (gap exactly 30: other).
CudaData IdleStreams() {
  CudaData c;
  c.calls = {Call(50, 55, 1), Call(150, 155, 2), Call(350, 360, 3), Call(450, 455, 4), Call(650, 652, 5)};
  c.kernels = {Kernel(400, 500, 3), Kernel(100, 200, 1), Kernel(210, 300, 2), Kernel(600, 700, 4),
               Kernel(800, 900, 99), Kernel(0, 50, 0, 0, 8), Kernel(0, 10, 0, 1), Kernel(20, 30, 0, 1),
               Kernel(60, 70, 0, 1)};
  GpuMemcpy m;
  m.start_ns = 700 * kUs, m.end_ns = 750 * kUs, m.correlation = 5, m.stream = 7;
  c.memcpys = {m};
  GpuMemset s;
  s.start_ns = 740 * kUs, s.end_ns = 760 * kUs, s.stream = 7;
  c.memsets = {s};
  return c;
}

TEST(GpuIdleKinds, HostWaitKernelWaitOtherPerStream) {
  const CudaData c = IdleStreams();
  std::vector<StreamIdleKinds> rows = IdleKindsByStream({&c});
  ASSERT_EQ(rows.size(), 3u);
  const StreamIdleKinds& s = rows[0];
  EXPECT_EQ(s.device, 0u);
  EXPECT_EQ(s.stream, 7u);
  EXPECT_EQ(s.ops, 7u);
  EXPECT_EQ(s.host_wait_ns, 100 * kUs);
  EXPECT_EQ(s.kernel_wait_ns, 10 * kUs);
  EXPECT_EQ(s.other_ns, 140 * kUs);
  EXPECT_EQ(s.idle_ns, 250 * kUs);
  EXPECT_DOUBLE_EQ(*s.host_wait_percent, 40.0);
  EXPECT_DOUBLE_EQ(*s.kernel_wait_percent, 4.0);
  EXPECT_DOUBLE_EQ(*s.other_percent, 56.0);

  EXPECT_EQ(rows[1].device, 0u);
  EXPECT_EQ(rows[1].stream, 8u);
  EXPECT_EQ(rows[1].idle_ns, 0u);
  EXPECT_FALSE(rows[1].host_wait_percent.has_value());  // no idle time: no shares

  EXPECT_EQ(rows[2].device, 1u);  // same stream id on another device: its own row
  EXPECT_EQ(rows[2].stream, 7u);
  EXPECT_EQ(rows[2].kernel_wait_ns, 10 * kUs);
  EXPECT_EQ(rows[2].other_ns, 30 * kUs);  // a gap of exactly the threshold is not kernel wait
  EXPECT_EQ(rows[2].host_wait_ns, 0u);
}

TEST(GpuIdleKinds, ThresholdIsHtasDefaultAndConfigurable) {
  EXPECT_EQ(kKernelWaitNs, 30'000u);  // HTA's consecutive_kernel_delay=30, in the trace's µs
  const CudaData c = IdleStreams();
  std::vector<StreamIdleKinds> rows = IdleKindsByStream({&c}, 101 * kUs);
  EXPECT_EQ(rows[0].kernel_wait_ns, 150 * kUs);  // 10 + 100 (K4) + 40 (K5)
  EXPECT_EQ(rows[0].other_ns, 0u);
  EXPECT_EQ(rows[0].host_wait_ns, 100 * kUs);  // host wait comes first, whatever the gap
}

TEST(GpuIdleKinds, ImagesOfOneProcessAreAnalysedApartAndSummed) {
  CudaData a, b;
  a.kernels = {Kernel(0, 10, 0), Kernel(20, 30, 0)};   // gap 10
  b.kernels = {Kernel(100, 110, 0), Kernel(150, 160, 0)};  // gap 40; none between the images
  std::vector<StreamIdleKinds> rows = IdleKindsByStream({&a, &b});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].ops, 4u);
  EXPECT_EQ(rows[0].kernel_wait_ns, 10 * kUs);
  EXPECT_EQ(rows[0].other_ns, 40 * kUs);
}

// Launch calls and what they started (µs):
//   a: cudaLaunchKernel 0..10 → 15..16 (cpu 10, delay 5, shorter); 100..160 → 300..400 (cpu 60:
//      long launch, delay 140: long delay); 500..520 → 510..600 (starts before the call ended: delay 0)
//   b: cudaLaunchKernelExC 1000..1004 → 1004..1054
//   c: cuLaunchKernel (driver; not in HTA's set) → not counted
//   d: a launch that never returned → not counted
//   memcpy HtoD: cudaMemcpyAsync 2000..2010 → 2020..2021 (shorter, delay 10); cudaMemcpy (not async) → not counted
//   memset: cudaMemsetAsync 3000..3002 → 3002..3003 (shorter)
struct Launches {
  StringPool strings;
  CudaData c;
  Launches() {
    const StringId launch = strings.Intern("cudaLaunchKernel_v7000"), ex = strings.Intern("cudaLaunchKernelExC_v11060");
    const StringId drv = strings.Intern("cuLaunchKernel"), cpy = strings.Intern("cudaMemcpyAsync_v3020");
    const StringId sync_cpy = strings.Intern("cudaMemcpy_v3020"), set = strings.Intern("cudaMemsetAsync_v3020");
    const StringId a = strings.Intern("_Z1av"), b = strings.Intern("_Z1bv"), k_c = strings.Intern("_Z1cv"),
                   d = strings.Intern("_Z1dv");
    c.calls = {Call(0, 10, 1, launch),      Call(100, 160, 2, launch), Call(500, 520, 3, launch),
               Call(1000, 1004, 4, ex),     Call(1100, 1101, 5, drv),  Call(1200, 1200, 6, launch, false),
               Call(2000, 2010, 7, cpy),    Call(2100, 2110, 8, sync_cpy), Call(3000, 3002, 9, set)};
    c.kernels = {Kernel(15, 16, 1, 0, 7, a),       Kernel(300, 400, 2, 0, 7, a),     Kernel(510, 600, 3, 0, 7, a),
                 Kernel(1004, 1054, 4, 0, 7, b),   Kernel(1105, 1106, 5, 0, 7, k_c), Kernel(1205, 1206, 6, 0, 7, d)};
    GpuMemcpy m;
    m.start_ns = 2020 * kUs, m.end_ns = 2021 * kUs, m.correlation = 7, m.kind = fmt::MemcpyKind::kHtoD;
    GpuMemcpy sync = m;
    sync.start_ns = 2105 * kUs, sync.end_ns = 2106 * kUs, sync.correlation = 8;
    c.memcpys = {m, sync};
    GpuMemset s;
    s.start_ns = 3002 * kUs, s.end_ns = 3003 * kUs, s.correlation = 9;
    c.memsets = {s};
  }
};

TEST(KernelLaunches, PerNameAsHtasLaunchStats) {
  Launches l;
  KernelLaunches k = AnalyzeKernelLaunches({&l.c}, l.strings, false, 0);
  ASSERT_EQ(k.rows.size(), 4u);
  EXPECT_EQ(k.omitted, 0u);
  const KernelLaunchRow& a = k.rows[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.count, 3u);
  EXPECT_DOUBLE_EQ(a.cpu_launch_mean_ns, 30'000);
  EXPECT_DOUBLE_EQ(a.cpu_launch_median_ns, 20'000);
  EXPECT_DOUBLE_EQ(a.launch_delay_mean_ns, 145'000.0 / 3);
  EXPECT_DOUBLE_EQ(a.launch_delay_median_ns, 5'000);
  EXPECT_DOUBLE_EQ(a.launch_delay_p95_ns, 126'500);  // 0, 5, 140 µs: 5 + 0.9 × 135
  EXPECT_EQ(a.shorter_than_launch, 1u);
  EXPECT_EQ(a.long_launches, 1u);
  EXPECT_EQ(a.long_delays, 1u);

  EXPECT_EQ(k.rows[1].name, "b");  // ties by name
  EXPECT_EQ(k.rows[1].count, 1u);
  EXPECT_DOUBLE_EQ(k.rows[1].cpu_launch_mean_ns, 4'000);
  EXPECT_DOUBLE_EQ(k.rows[1].launch_delay_mean_ns, 0);
  EXPECT_EQ(k.rows[1].shorter_than_launch, 0u);

  EXPECT_EQ(k.rows[2].name, "memcpy HtoD");
  EXPECT_EQ(k.rows[2].count, 1u);  // the cudaMemcpy copy is not a launch
  EXPECT_DOUBLE_EQ(k.rows[2].launch_delay_mean_ns, 10'000);
  EXPECT_EQ(k.rows[2].shorter_than_launch, 1u);
  EXPECT_EQ(k.rows[3].name, "memset");
  EXPECT_EQ(k.rows[3].shorter_than_launch, 1u);
}

TEST(KernelLaunches, PastTheExactSamplesTheQuantilesAreEstimatedAndSaySo) {
  // Memory bounded whatever the trace (docs/performance.md, "Samples"): the medians and the p95
  // are exact up to 1024 launches of a name, estimated within 0.39% past that, and the row says so.
  for (size_t n : {DurationSummary::kExactSamples, DurationSummary::kExactSamples + 1, size_t{5'000}}) {
    StringPool strings;
    const StringId launch = strings.Intern("cudaLaunchKernel_v7000"), a = strings.Intern("_Z1av");
    CudaData c;
    std::vector<uint64_t> cpu, delay;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t begin = i * 1'000 * kUs, call_ns = 3 * kUs + (i * 7919) % 50'000, delay_ns = (i * 104'729) % 900'000;
      c.calls.push_back({.begin_ns = begin, .end_ns = begin + call_ns, .correlation = i + 1, .name = launch,
                         .returned = true});
      c.kernels.push_back(test::At({.start_ns = begin + call_ns + delay_ns, .end_ns = begin + call_ns + delay_ns + kUs,
                                    .correlation = i + 1},
                                   GpuKernel{.name = a}));
      cpu.push_back(call_ns);
      delay.push_back(delay_ns);
    }
    KernelLaunches k = AnalyzeKernelLaunches({&c}, strings, false, 0);
    ASSERT_EQ(k.rows.size(), 1u);
    const KernelLaunchRow& r = k.rows[0];
    EXPECT_EQ(r.count, n);
    EXPECT_EQ(r.exact, n <= DurationSummary::kExactSamples) << n;
    const double cpu_median = SummarizeSample(&cpu).median, delay_median = SummarizeSample(&delay).median;
    const double delay_p95 = Quantile(&delay, 0.95);
    const double e = r.exact ? 0 : DurationSummary::kRelativeError;
    EXPECT_NEAR(r.cpu_launch_median_ns, cpu_median, cpu_median * e) << n;
    EXPECT_NEAR(r.launch_delay_median_ns, delay_median, delay_median * e) << n;
    EXPECT_NEAR(r.launch_delay_p95_ns, delay_p95, delay_p95 * e) << n;
    if (!r.exact) EXPECT_NE(r.launch_delay_median_ns, delay_median) << "estimated: the histogram's value";
    const Cells cells = KernelLaunchCells(r);
    EXPECT_EQ(cells[3].estimated, !r.exact);  // the text marks "~"
    EXPECT_EQ(cells.back().b, r.exact);       // quantiles_exact
  }
}

TEST(KernelLaunches, TopCutAndFullNames) {
  Launches l;
  KernelLaunches k = AnalyzeKernelLaunches({&l.c}, l.strings, true, 2);
  ASSERT_EQ(k.rows.size(), 2u);
  EXPECT_EQ(k.omitted, 2u);
  EXPECT_EQ(k.rows[0].name, "a()");
  EXPECT_EQ(k.rows[1].name, "b()");
}

TEST(KernelLaunches, CollidingShortNamesNumberedAsInTheKernelTable) {
  // gemm<int> and gemm<float> both shorten to "gemm<...>": numbered by the kernel table's order
  // (total GPU time), whatever the launch table's order (by count).
  StringPool strings;
  CudaData c;
  const StringId launch = strings.Intern("cudaLaunchKernel");
  const StringId gi = strings.Intern("_Z4gemmIiEvv"), gf = strings.Intern("_Z4gemmIfEvv");
  c.calls = {Call(0, 1, 1, launch), Call(10, 11, 2, launch), Call(20, 21, 3, launch)};
  c.kernels = {Kernel(2, 3, 1, 0, 7, gi), Kernel(12, 13, 2, 0, 7, gi), Kernel(22, 122, 3, 0, 7, gf)};
  KernelLaunches r = AnalyzeKernelLaunches({&c}, strings, false, 0);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].name, "gemm<...> #2");  // 2 launches, 2 µs of GPU time
  EXPECT_EQ(r.rows[0].count, 2u);
  EXPECT_EQ(r.rows[1].name, "gemm<...> #1");  // 1 launch, 100 µs
  KernelLaunches full = AnalyzeKernelLaunches({&c}, strings, true, 0);
  EXPECT_EQ(full.rows[0].name, "void gemm<int>()");
}

TEST(KernelLaunches, ShortKernelNeedsAShortCall) {
  // HTA's short kernels: GPU duration < call duration, for calls of at most 50 µs only.
  StringPool strings;
  CudaData c;
  const StringId launch = strings.Intern("cudaLaunchKernel"), k = strings.Intern("k");
  c.calls = {Call(0, 50, 1, launch), Call(100, 151, 2, launch)};
  c.kernels = {Kernel(60, 61, 1, 0, 7, k), Kernel(160, 161, 2, 0, 7, k)};
  KernelLaunches r = AnalyzeKernelLaunches({&c}, strings, false, 0);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].shorter_than_launch, 1u);  // the 50 µs call; not the 51 µs one
  EXPECT_EQ(r.rows[0].long_launches, 1u);
  EXPECT_EQ(r.rows[0].long_delays, 0u);
}

TEST(GpuIdleLaunchTables, InTheReport) {
  test::TraceBuilder b{400, 1, 1'000'000'000};
  const uint64_t t0 = 1'000'000'000;
  b.Env("RANK", "3").Env("WORLD_SIZE", "4");
  b.HeaderEnd(fmt::EndKind::kExit, 0, t0 + 10'000 * kUs);
  int t = b.Thread(400), g = b.Thread(401);
  b.GpuStatus(t, t0 + 50, fmt::GpuState::kOn, 0, 18, 12040);
  b.ApiCall(t, t0 + 100 * kUs, t0 + 110 * kUs, "cudaLaunchKernel_v7000", 1);
  b.ApiCall(t, t0 + 300 * kUs, t0 + 305 * kUs, "cudaLaunchKernel_v7000", 2);
  b.Kernel(g, {.start = t0 + 120 * kUs, .end = t0 + 200 * kUs, .name = "_Z1kv", .correlation = 1});
  b.Kernel(g, {.start = t0 + 310 * kUs, .end = t0 + 400 * kUs, .name = "_Z1kv", .correlation = 2});
  Report r = Analyze(test::TraceOf({&b}), {});
  nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  ASSERT_EQ(j["gpu_idle_by_kind"].size(), 1u);
  const nlohmann::json& s = j["gpu_idle_by_kind"][0];
  EXPECT_EQ(s["pid"], 400);
  EXPECT_EQ(s["rank"], 3);
  EXPECT_EQ(s["stream"], 7);
  EXPECT_EQ(s["idle_ns"], 110'000);
  EXPECT_EQ(s["host_wait_ns"], 110'000);  // the second launch began at 300, after the first kernel's end
  EXPECT_EQ(s["host_wait_percent"], 100.0);
  ASSERT_EQ(j["kernel_launches"].size(), 1u);
  EXPECT_EQ(j["kernel_launches"][0]["name"], "k");
  EXPECT_EQ(j["kernel_launches"][0]["count"], 2);
  EXPECT_EQ(j["kernel_launches"][0]["cpu_launch_mean_ns"], 7'500.0);
  EXPECT_EQ(j["kernel_launches"][0]["launch_delay_median_ns"], 7'500.0);
  EXPECT_EQ(j["kernel_launches_omitted"], 0);
  const std::string text = RenderText(r);
  EXPECT_NE(text.find("GPU idle time by kind, per stream"), std::string::npos);
  EXPECT_NE(text.find("Kernel launches"), std::string::npos);

  test::TraceBuilder cpu{500, 1, t0};  // no CUDA: empty members in JSON, no sections in the text
  cpu.HeaderEnd(fmt::EndKind::kExit, 0, t0 + 1'000 * kUs);
  Report none = Analyze(test::TraceOf({&cpu}), {});
  nlohmann::json n = nlohmann::json::parse(RenderJson(none));
  EXPECT_TRUE(n["gpu_idle_by_kind"].empty());
  EXPECT_TRUE(n["kernel_launches"].empty());
  EXPECT_EQ(RenderText(none).find("GPU idle time by kind"), std::string::npos);
}

// Kernels and copies whose launching call is not in the trace (launched before recording began):
// counted in the GPU statistics, counted in stats and said in a warning with their time; the
// same read whole or in CUDA windows (TRAINPROF_CUDA_WINDOW_RECORDS).
// A process with no CUDA call recorded at all is not warned about (no op's call could be there).
TEST(GpuIdleLaunchTables, OpsWhoseLaunchIsNotInTheTraceAreCountedAndSaid) {
  const uint64_t t0 = 1'000'000'000;
  test::TraceBuilder b{410, 1, t0};
  b.HeaderEnd(fmt::EndKind::kExit, 0, t0 + 10'000 * kUs);
  int t = b.Thread(410), g = b.Thread(411);
  b.GpuStatus(t, t0 + 50, fmt::GpuState::kOn, 0, 18, 12040);
  // Correlations 7 and 8: launched before recording began; 9 launched in it.
  b.Kernel(g, {.start = t0 + 20 * kUs, .end = t0 + 60 * kUs, .name = "_Z1kv", .correlation = 7});
  b.Memcpy(g, {.start = t0 + 70 * kUs, .end = t0 + 80 * kUs, .kind = fmt::MemcpyKind::kHtoD, .bytes = 64, .correlation = 8});
  b.ApiCall(t, t0 + 100 * kUs, t0 + 110 * kUs, "cudaLaunchKernel_v7000", 9);
  b.Kernel(g, {.start = t0 + 120 * kUs, .end = t0 + 200 * kUs, .name = "_Z1kv", .correlation = 9});
  Report r = Analyze(test::TraceOf({&b}), {});
  EXPECT_EQ(r.stats[Loss::gpu_ops_without_launch], 2u);
  std::vector<std::string> said;
  for (const std::string& w : r.warnings) {
    if (w.find("launching CUDA call") != std::string::npos) said.push_back(w);
  }
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0], "pid 410: 2 GPU ops (50.0 µs of GPU time) whose launching CUDA call is not in the trace "
                     "(launched before recording began, or the call's record lost): counted in GPU busy and the "
                     "GPU tables, where HTA leaves them out");
  nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  EXPECT_EQ(j["stats"]["gpu_ops_without_launch"], 2);
  EXPECT_EQ(j["kernel_launches"][0]["count"], 1);  // the launch table has the one it can time
  {  // read from its file in windows of 2 record starts: the same count and warning
    test::ScratchDir dir;
    const std::string path = b.WriteTo(dir.path());
    const char* saved = std::getenv("TRAINPROF_CUDA_WINDOW_RECORDS");
    const std::string keep = saved == nullptr ? "" : saved;
    ::setenv("TRAINPROF_CUDA_WINDOW_RECORDS", "2", 1);
    const Trace windowed = LoadTraceForReport({path});
    if (saved == nullptr) {
      ::unsetenv("TRAINPROF_CUDA_WINDOW_RECORDS");
    } else {
      ::setenv("TRAINPROF_CUDA_WINDOW_RECORDS", keep.c_str(), 1);
    }
    ASSERT_TRUE(ReadsCudaWindows(windowed));
    const Report w = Analyze(windowed, {});
    EXPECT_EQ(w.stats[Loss::gpu_ops_without_launch], 2u);
    EXPECT_NE(std::find(w.warnings.begin(), w.warnings.end(), said[0]), w.warnings.end());
  }

  test::TraceBuilder quiet{420, 1, t0};  // GPU records, no CUDA call at all
  quiet.HeaderEnd(fmt::EndKind::kExit, 0, t0 + 10'000 * kUs);
  int qg = quiet.Thread(421);
  quiet.Kernel(qg, {.start = t0 + 20 * kUs, .end = t0 + 60 * kUs, .name = "_Z1kv", .correlation = 7});
  EXPECT_EQ(Analyze(test::TraceOf({&quiet}), {}).stats[Loss::gpu_ops_without_launch], 0u);
}

// With a second thread (ReportThreads() > 1) the two tables are made beside the per-process ones
// and land where they did on one thread: the JSON and the text are the same, byte for byte, for a
// trace of two processes with launches, copies and idle gaps.
TEST(GpuIdleLaunchTables, TheSameOnOneThreadAndOnTwo) {
  const uint64_t t0 = 1'000'000'000;
  std::vector<test::TraceBuilder> builders;
  builders.reserve(2);
  for (int pid : {600, 601}) {
    test::TraceBuilder& b = builders.emplace_back(pid, pid == 600 ? 0 : 600, t0);
    b.HeaderEnd(fmt::EndKind::kExit, 0, t0 + 50'000 * kUs);
    const int t = b.Thread(pid), g = b.Thread(pid + 1000);
    for (uint64_t i = 0; i < 40; ++i) {
      const uint64_t at = t0 + (100 + 500 * i) * kUs;
      const uint64_t corr = 2 * i + 1;
      b.ApiCall(t, at, at + (5 + i % 7) * kUs, "cudaLaunchKernel_v7000", corr);
      b.Kernel(g, {.start = at + (20 + i % 5) * kUs, .end = at + (100 + 10 * (i % 3)) * kUs,
                   .name = i % 2 ? "_Z4gemmv" : "_Z4reluv", .correlation = corr});
      b.ApiCall(t, at + 200 * kUs, at + 210 * kUs, "cudaMemcpyAsync_v3020", corr + 1);
      b.Memcpy(g, {.start = at + 215 * kUs, .end = at + (230 + pid % 3) * kUs, .kind = fmt::MemcpyKind::kHtoD,
                   .bytes = 4096, .correlation = corr + 1});
    }
  }
  std::vector<const test::TraceBuilder*> of;
  for (const test::TraceBuilder& b : builders) of.push_back(&b);
  auto render = [&](const char* threads) {
    setenv("TRAINPROF_REPORT_THREADS", threads, 1);
    const size_t n = ReportThreads();
    Report r = Analyze(test::TraceOf(of), {});
    unsetenv("TRAINPROF_REPORT_THREADS");
    EXPECT_EQ(n, static_cast<size_t>(std::atoi(threads)));
    return std::make_pair(RenderJson(r), RenderText(r));
  };
  const auto one = render("1");
  const auto two = render("2");
  EXPECT_EQ(two.first, one.first);
  EXPECT_EQ(two.second, one.second);
  const nlohmann::json j = nlohmann::json::parse(one.first);
  ASSERT_EQ(j["kernel_launches"].size(), 3u);  // over both processes: memcpy HtoD, gemm, relu
  EXPECT_EQ(j["kernel_launches"][0]["name"], "memcpy HtoD");
  EXPECT_EQ(j["kernel_launches"][0]["count"], 80);
  EXPECT_EQ(j["kernel_launches"][1]["count"], 40);
  EXPECT_EQ(j["gpu_idle_by_kind"].size(), 2u);  // a stream in each process
}

}  // namespace
}  // namespace trainprof::collector
