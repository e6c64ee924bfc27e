// The CUDA tables on synthetic traces with known numbers: CUDA API by function, GPU kernels by
// name, memory operations by kind, devices (busy %, launch latency), GPU tracing per process, and
// their text, JSON and CSV renderings (docs/report.md, docs/report-schema.md).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <tuple>
#include <nlohmann/json.hpp>

#include "collector/render/render.h"
#include "collector/report/report.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

// `got` as `want`: count, total, min, max, mean and median exactly, the std dev within 1e-6.
void ExpectStats(const SampleStats& got, const SampleStats& want) {
  EXPECT_EQ(std::tie(got.count, got.total, got.min, got.max), std::tie(want.count, want.total, want.min, want.max));
  EXPECT_DOUBLE_EQ(got.mean, want.mean);
  EXPECT_DOUBLE_EQ(got.median, want.median);
  EXPECT_NEAR(got.std, want.std, 1e-6);
}

constexpr uint64_t T0 = 1'000'000'000;
constexpr uint64_t kUs = 1'000;
const char* const kMatmulF = "_Z6matmulPfS_S_i";
const char* const kMatmulD = "_Z6matmulPdS_S_i";
const char* const kFill =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_";

// pid 400: every kind of call and GPU record, times in µs from T0 (wall 10 ms):
//   cudaMalloc        100..120 status 2 (an error)
//   cudaMemcpyAsync   200..210  → HtoD 1 MB pinned 215..315 (100 µs)
//   cudaLaunchKernel  1000..1005, 1100..1107, 1200..1206, 1300..1310
//                     → matmul 1010..1110, 1110..1310, 1310..1610 (grid 256, 256, 512), fill 1610..1660
//   cudaMemcpyAsync   1400..1700 → DtoH 4 B to pageable memory 1660..1662
//   cudaMemcpy        1800..1830 → DtoD 2 MB 1810..1820 (synchronous)
//   cudaMemsetAsync   1900..1902 → memset 4096 B 1905..1906
//   cudaStreamSynchronize 2000..2500
//   cudaFree          enter at 3000, never returns
// plus a kernel with a zero timestamp (invalid), 7 records CUPTI dropped, status on then flushed.
struct GpuRun {
  TraceBuilder main{400, 1, T0};
  TraceBuilder other{500, 1, T0 + 5'000 * kUs};        // pid 500: one matmul<double> on the same device
  TraceBuilder unavailable{600, 1, T0 + 1'000 * kUs};  // pid 600: CUPTI could not be used

  GpuRun() {
    main.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 10'000 * kUs);
    int t = main.Thread(400), g = main.Thread(401);
    main.GpuStatus(t, T0 + 50, fmt::GpuState::kOn, 0, 18, 12040);
    main.Device(g, 0, "NVIDIA H100 80GB HBM3");
    main.Context(g, 1, 0);
    auto us = [](uint64_t v) { return T0 + v * kUs; };
    main.ApiCall(t, us(100), us(120), "cudaMalloc_v3020", 1, 2);
    main.ApiCall(t, us(200), us(210), "cudaMemcpyAsync_v3020", 2);
    main.Memcpy(g, {.start = us(215), .end = us(315), .kind = fmt::MemcpyKind::kHtoD, .bytes = 1'000'000,
                    .correlation = 2});
    const uint64_t launch[4][2] = {{1000, 1005}, {1100, 1107}, {1200, 1206}, {1300, 1310}};
    for (uint64_t i = 0; i < 4; ++i) main.ApiCall(t, us(launch[i][0]), us(launch[i][1]), "cudaLaunchKernel_v7000", 3 + i);
    main.Kernel(g, {.start = us(1010), .end = us(1110), .name = kMatmulF, .correlation = 3, .grid = {256, 1, 1}});
    main.Kernel(g, {.start = us(1110), .end = us(1310), .name = kMatmulF, .correlation = 4, .grid = {256, 1, 1}});
    main.Kernel(g, {.start = us(1310), .end = us(1610), .name = kMatmulF, .correlation = 5, .grid = {512, 1, 1}});
    main.Kernel(g, {.start = us(1610), .end = us(1660), .name = kFill, .correlation = 6, .grid = {64, 1, 1}});
    main.ApiCall(t, us(1400), us(1700), "cudaMemcpyAsync_v3020", 7);
    main.Memcpy(g, {.start = us(1660), .end = us(1662), .kind = fmt::MemcpyKind::kDtoH, .bytes = 4, .correlation = 7,
                    .src = fmt::MemoryKind::kDevice, .dst = fmt::MemoryKind::kPageable});
    main.ApiCall(t, us(1800), us(1830), "cudaMemcpy_v3020", 8);
    main.Memcpy(g, {.start = us(1810), .end = us(1820), .kind = fmt::MemcpyKind::kDtoD, .bytes = 2'000'000,
                    .correlation = 8, .src = fmt::MemoryKind::kDevice, .dst = fmt::MemoryKind::kDevice,
                    .async = false});
    main.ApiCall(t, us(1900), us(1902), "cudaMemsetAsync_v3020", 9);
    main.Memset(g, {.start = us(1905), .end = us(1906), .bytes = 4096, .correlation = 9});
    main.ApiCall(t, us(2000), us(2500), "cudaStreamSynchronize_v3020", 10);
    main.ApiEnter(t, us(3000), "cudaFree_v3020", 11);
    main.Kernel(g, {.start = 0, .end = us(5), .name = kFill});  // invalid: counted, left out
    main.GpuDropped(g, us(9000), 7);
    main.GpuStatus(g, us(9500), fmt::GpuState::kFlushed, 0, 18, 12040);

    other.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 15'000 * kUs);
    int o = other.Thread(500), og = other.Thread(501);
    other.GpuStatus(o, T0 + 5'000 * kUs, fmt::GpuState::kOn, 0, 18, 12040);
    other.Device(og, 0, "NVIDIA H100 80GB HBM3");
    other.ApiCall(o, us(5500), us(5510), "cudaLaunchKernel_v7000", 1);
    other.Kernel(og, {.start = us(6000), .end = us(6400), .name = kMatmulD, .correlation = 1, .grid = {256, 1, 1}});

    unavailable.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 2'000 * kUs);
    int u = unavailable.Thread(600);
    unavailable.GpuStatus(u, T0 + 1'100 * kUs, fmt::GpuState::kUnavailable, 39, 18, 12040,
                          "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: another profiler holds CUPTI");
  }
  Trace Load() const { return TraceOf({&main, &other, &unavailable}); }
  Report Analyze(ReportOptions o = {}) const { return collector::Analyze(Load(), o); }
};

const ProcessRow& ProcessOf(const Report& r, int32_t pid) {
  for (const ProcessRow& p : r.processes) {
    if (p.pid == pid) return p;
  }
  throw std::runtime_error("no process " + std::to_string(pid));
}

TEST(CudaTables, CudaApiByFunction) {
  Report r = GpuRun().Analyze();
  ASSERT_TRUE(r.has_cuda);
  const std::vector<CudaApiRow>& api = ProcessOf(r, 400).cuda.api;
  std::vector<std::string> names;
  for (const CudaApiRow& row : api) names.push_back(row.name);
  EXPECT_EQ(names, (std::vector<std::string>{"cudaStreamSynchronize", "cudaMemcpyAsync", "cudaMemcpy",
                                             "cudaLaunchKernel", "cudaMalloc", "cudaMemsetAsync", "cudaFree"}));
  const double all = 890'000;  // Σ durations of the calls that returned
  EXPECT_EQ(api[0].time.total, 500'000u);
  EXPECT_DOUBLE_EQ(api[0].percent, 500'000 * 100.0 / all);
  EXPECT_EQ(api[0].api, "runtime");
  const CudaApiRow& copy = api[1];
  ExpectStats(copy.time, {.count = 2, .total = 310'000, .min = 10'000, .max = 300'000, .mean = 155'000,
                          .std = 145'000 * std::sqrt(2.0), .median = 155'000});
  const CudaApiRow& launch = api[3];
  ExpectStats(launch.time, {.count = 4, .total = 28'000, .min = 5'000, .max = 10'000, .mean = 7'000,
                            .std = std::sqrt(14e6 / 3), .median = 6'500});
  EXPECT_DOUBLE_EQ(launch.percent, 28'000 * 100.0 / all);
  EXPECT_EQ(api[4].errors, 1u);  // cudaMalloc returned 2
  EXPECT_EQ(api[4].time.total, 20'000u);
  EXPECT_EQ(api[6].time.count, 0u);  // cudaFree never returned
  EXPECT_EQ(api[6].unfinished, 1u);
  EXPECT_EQ(api[6].time.total, 0u);

  // Over all processes: pid 500's launch joins the row, now larger than cudaMemcpy's.
  const CudaApiRow& merged = r.cuda.api[2];
  EXPECT_EQ(merged.name, "cudaLaunchKernel");
  EXPECT_EQ(merged.time.count, 5u);
  EXPECT_EQ(merged.time.total, 38'000u);
  EXPECT_DOUBLE_EQ(merged.percent, 38'000 * 100.0 / 900'000);
}

TEST(CudaTables, GpuKernelsByMangledName) {
  Report r = GpuRun().Analyze();
  const std::vector<KernelRow>& k = ProcessOf(r, 400).cuda.kernels;
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "matmul");
  EXPECT_EQ(k[0].mangled, kMatmulF);
  EXPECT_EQ(k[0].time.count, 3u);
  EXPECT_EQ(k[0].time.total, 600'000u);
  EXPECT_DOUBLE_EQ(k[0].time.mean, 200'000.0);
  EXPECT_DOUBLE_EQ(k[0].time.median, 200'000.0);
  EXPECT_DOUBLE_EQ(k[0].time.std, 100'000.0);
  EXPECT_EQ(k[0].time.min, 100'000u);
  EXPECT_EQ(k[0].time.max, 300'000u);
  EXPECT_DOUBLE_EQ(k[0].percent, 600'000 * 100.0 / 650'000);
  EXPECT_EQ(k[0].grid, "varies");
  EXPECT_EQ(k[0].grid_most_common, "256x1x1");
  EXPECT_EQ(k[0].grid_variants, 2u);
  EXPECT_EQ(k[0].block, "128x1x1");
  EXPECT_EQ(k[1].name, "at::native::vectorized_elementwise_kernel<...>");
  EXPECT_EQ(k[1].time.total, 50'000u);
  EXPECT_EQ(k[1].grid, "64x1x1");
  EXPECT_DOUBLE_EQ(k[1].percent, 50'000 * 100.0 / 650'000);

  // Merged: matmul<float> and matmul<double> are different kernels with the same short name.
  const std::vector<KernelRow>& m = r.cuda.kernels;
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].name, "matmul #1");
  EXPECT_EQ(m[0].mangled, kMatmulF);
  EXPECT_EQ(m[1].name, "matmul #2");
  EXPECT_EQ(m[1].mangled, kMatmulD);
  EXPECT_EQ(m[1].time.total, 400'000u);
  EXPECT_DOUBLE_EQ(m[0].percent, 600'000 * 100.0 / 1'050'000);

  // --full-names: demangled, whole.
  Report full = GpuRun().Analyze({.full_names = true});
  EXPECT_EQ(full.cuda.kernels[0].name, "matmul(float*, float*, float*, int)");
  EXPECT_EQ(full.cuda.kernels[1].name, "matmul(double*, double*, double*, int)");
  EXPECT_EQ(full.cuda.kernels[2].name,
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
            "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)");
}

TEST(CudaTables, MemoryOperationsByKind) {
  Report r = GpuRun().Analyze();
  const std::vector<MemoryOpRow>& m = ProcessOf(r, 400).cuda.memory;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].kind, "memcpy_htod");
  EXPECT_EQ(m[0].label, "memcpy HtoD");
  EXPECT_EQ(m[0].time.count, 1u);
  EXPECT_EQ(m[0].time.total, 100'000u);
  EXPECT_EQ(m[0].size.total, 1'000'000u);
  EXPECT_DOUBLE_EQ(*m[0].bandwidth_gbps, 10.0);
  EXPECT_EQ(m[0].pageable_count, 0u);
  EXPECT_DOUBLE_EQ(m[0].percent, 100'000 * 100.0 / 113'000);
  EXPECT_EQ(m[1].kind, "memcpy_dtod");
  EXPECT_DOUBLE_EQ(*m[1].bandwidth_gbps, 200.0);
  EXPECT_EQ(m[1].size.min, 2'000'000u);
  EXPECT_EQ(m[1].size.max, 2'000'000u);
  EXPECT_EQ(m[2].kind, "memcpy_dtoh");
  EXPECT_EQ(m[2].time.total, 2'000u);
  EXPECT_DOUBLE_EQ(*m[2].bandwidth_gbps, 0.002);
  EXPECT_EQ(m[2].pageable_count, 1u);
  EXPECT_EQ(m[2].pageable_bytes, 4u);
  EXPECT_EQ(m[3].kind, "memset");
  EXPECT_EQ(m[3].size.total, 4'096u);
  EXPECT_DOUBLE_EQ(*m[3].bandwidth_gbps, 4.096);
  EXPECT_EQ(r.cuda.memory.size(), 4u);  // pid 500 has no memory operation
}

TEST(CudaTables, DevicesBusyAndLaunchLatency) {
  Report r = GpuRun().Analyze();
  const std::vector<DeviceRow>& d = ProcessOf(r, 400).cuda.devices;
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].pid, 400);
  EXPECT_EQ(d[0].device, 0u);
  EXPECT_EQ(d[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d[0].kernels, 4u);
  EXPECT_EQ(d[0].kernel_ns, 650'000u);
  EXPECT_EQ(d[0].memcpys, 3u);
  EXPECT_EQ(d[0].memsets, 1u);
  EXPECT_EQ(d[0].memory_ns, 113'000u);
  // Union: HtoD 100 µs + kernels and DtoH 1010..1662 (652 µs) + DtoD 10 µs + memset 1 µs.
  EXPECT_EQ(d[0].busy_ns, 763'000u);
  EXPECT_EQ(d[0].lifetime_ns, 10'000'000u);
  EXPECT_DOUBLE_EQ(*d[0].busy_percent, 7.63);
  EXPECT_EQ(d[0].active_begin_ns, T0 + 215'000);
  EXPECT_EQ(d[0].active_end_ns, T0 + 1'906'000);
  EXPECT_DOUBLE_EQ(*d[0].active_busy_percent, 763'000 * 100.0 / 1'691'000);
  // Latencies 10, 10, 110, 310 µs.
  EXPECT_EQ(d[0].latency_count, 4u);
  EXPECT_DOUBLE_EQ(d[0].latency_mean_ns, 110'000.0);
  EXPECT_DOUBLE_EQ(d[0].latency_median_ns, 60'000.0);
  EXPECT_DOUBLE_EQ(d[0].latency_p95_ns, 280'000.0);

  // Merged over pids 400 and 500 (same host, device 0).
  ASSERT_EQ(r.cuda.devices.size(), 1u);
  const DeviceRow& m = r.cuda.devices[0];
  EXPECT_FALSE(m.pid);
  EXPECT_EQ(m.processes, 2u);
  EXPECT_EQ(m.busy_ns, 1'163'000u);
  EXPECT_EQ(m.lifetime_ns, 15'000'000u);  // [0, 10 ms) ∪ [5, 15 ms)
  EXPECT_NEAR(*m.busy_percent, 1'163'000 * 100.0 / 15'000'000, 1e-12);
  EXPECT_EQ(m.latency_count, 5u);
  EXPECT_DOUBLE_EQ(m.latency_mean_ns, 188'000.0);
  EXPECT_DOUBLE_EQ(m.latency_median_ns, 110'000.0);
  EXPECT_DOUBLE_EQ(m.latency_p95_ns, 462'000.0);
  EXPECT_TRUE(ProcessOf(r, 600).cuda.devices.empty());
}

// Two processes on one device, each with more kernels apart than a summary keeps intervals of:
// the merged row's busy time is over by at most what the bounds filled, said in busy_error_ns and
// marked in the text; the processes' own rows stay exact.
TEST(CudaTables, ASharedDevicePastTheActivityBoundIsEstimatedAndSaidSo) {
  const uint64_t t0 = 1'000'000'000;
  const uint64_t kernels = kMaxActivityIntervals + 500;
  std::vector<test::TraceBuilder> builders;
  builders.reserve(2);
  for (int pid : {800, 801}) {
    test::TraceBuilder& b = builders.emplace_back(pid, pid == 800 ? 0 : 800, t0);
    b.HeaderEnd(fmt::EndKind::kExit, 0, t0 + 300'000 * kUs);  // after the last kernel (~202 ms)
    const int g = b.Thread(pid + 1000);
    for (uint64_t i = 0; i < kernels; ++i) {
      // 10 µs kernels every 40 µs, the two processes 15 µs apart; gaps of 30 µs and, every
      // eighth, 60 µs.
      const uint64_t at = t0 + (pid == 800 ? 0 : 15) * kUs + i * 40 * kUs + (i / 8) * 30 * kUs;
      b.Kernel(g, {.start = at, .end = at + 10 * kUs, .name = "_Z1kv"});
    }
  }
  std::vector<const test::TraceBuilder*> of;
  for (const test::TraceBuilder& b : builders) of.push_back(&b);
  const Trace trace = test::TraceOf(of);
  std::vector<const Process*> ptrs;
  for (const Process& p : trace.processes) ptrs.push_back(&p);
  const std::vector<DeviceRow> exact = MergedDevices(ptrs, trace.strings);
  ASSERT_EQ(exact.size(), 1u);
  EXPECT_EQ(exact[0].busy_ns, 2 * kernels * 10 * kUs);  // never overlapping
  const Report r = Analyze(trace, {});
  ASSERT_EQ(r.cuda.devices.size(), 1u);
  const DeviceRow& m = r.cuda.devices[0];
  EXPECT_EQ(m.processes, 2u);
  EXPECT_EQ(m.kernels, 2 * kernels);
  EXPECT_GT(m.busy_error_ns, 0u);
  EXPECT_GE(m.busy_ns, exact[0].busy_ns);
  EXPECT_LE(m.busy_ns, exact[0].busy_ns + m.busy_error_ns);
  // Each bound filled the 500 shortest of its 30 µs gaps: 2 × 500 × 30 µs, all of it counted busy
  // in the union (the other process's kernels sit inside those gaps).
  EXPECT_EQ(m.busy_error_ns, 2 * 500 * 30 * kUs);
  for (const ProcessRow& p : r.processes) {
    ASSERT_EQ(p.cuda.devices.size(), 1u);
    EXPECT_EQ(p.cuda.devices[0].busy_ns, kernels * 10 * kUs);  // its own row: exact
    EXPECT_EQ(p.cuda.devices[0].busy_error_ns, 0u);
  }
  const std::string text = RenderText(r);
  EXPECT_NE(text.find("~ Busy of a device processes shared: each process's activity was kept to 4096 intervals, "
                      "its shortest gaps counted busy: at most 30.0 ms too much"),
            std::string::npos)
      << text;
  const nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  EXPECT_EQ(j["devices"][0]["busy_error_ns"], 2 * 500 * 30 * kUs);
}

TEST(CudaTables, GpuTracingPerProcessAndWarnings) {
  Report r = GpuRun().Analyze();
  const GpuTracing& g = ProcessOf(r, 400).gpu;
  EXPECT_EQ(g.state, "on");
  EXPECT_TRUE(g.flushed);
  EXPECT_EQ(g.records_dropped, 7u);
  EXPECT_EQ(g.invalid_timestamps, 1u);
  EXPECT_EQ(g.calls, 11u);
  EXPECT_EQ(g.unfinished_calls, 1u);
  EXPECT_EQ(g.unfinished_names, std::vector<std::string>{"cudaFree"});
  EXPECT_EQ(g.api_errors, 1u);
  EXPECT_EQ(g.cupti_version, 18u);
  EXPECT_EQ(g.driver_version, 12040u);
  const GpuTracing& u = ProcessOf(r, 600).gpu;
  EXPECT_EQ(u.state, "unavailable");
  EXPECT_EQ(u.cupti_result, 39u);
  EXPECT_EQ(u.message, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: another profiler holds CUPTI");

  auto has = [&](const std::string& w) { return std::find(r.warnings.begin(), r.warnings.end(), w) != r.warnings.end(); };
  EXPECT_TRUE(has("pid 400: 7 GPU activity records dropped by CUPTI (buffers full): GPU statistics are incomplete"));
  EXPECT_TRUE(has("pid 400: 1 GPU record with an invalid timestamp (zero, or end before start): left out of every "
                  "statistic"));
  EXPECT_TRUE(has("pid 400: 1 CUDA call never returned (cudaFree): the process ended inside; not in the durations"));
  EXPECT_TRUE(has("pid 600: GPU tracing unavailable: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: another profiler "
                  "holds CUPTI (CUPTI result 39); NVTX ranges and Python phases were still recorded"));
  for (const std::string& w : r.warnings) EXPECT_EQ(w.find("pid 500"), std::string::npos) << w;
}

TEST(CudaTables, TopCutsEveryCudaTable) {
  Report r = GpuRun().Analyze({.top = 2});
  EXPECT_EQ(r.cuda.api.size(), 2u);
  EXPECT_EQ(r.cuda.api_omitted, 5u);
  EXPECT_EQ(r.cuda.kernels.size(), 2u);
  EXPECT_EQ(r.cuda.kernels_omitted, 1u);
  EXPECT_EQ(r.cuda.memory.size(), 2u);
  EXPECT_EQ(r.cuda.memory_omitted, 2u);
  EXPECT_EQ(ProcessOf(r, 400).cuda.api_omitted, 5u);
  EXPECT_NE(RenderText(r).find("  ... 5 more rows (--top 2)\n"), std::string::npos);
}

// Past DurationSummary::kExactSamples calls of one function, the tables' median is estimated:
// within kRelativeError, marked "~" with a note; counts, totals, min and max stay exact.
// A call whose exit may have been in damaged bytes of its thread is not blamed on the process:
// counted apart (lost_exits), not unfinished, not timed; a call on an intact thread that never
// returned still is unfinished.
TEST(CudaTables, ExitLostToDamageIsNotAnUnfinishedCall) {
  TraceBuilder b{700, 1, T0};
  b.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 10'000 * kUs);
  int t = b.Thread(700), u = b.Thread(701);
  b.ApiCall(t, T0 + 10 * kUs, T0 + 20 * kUs, "cudaMalloc_v3020", 1);
  b.ApiEnter(t, T0 + 30 * kUs, "cudaStreamSynchronize_v3020", 2);
  b.Raw(t, {200, 1, 2, 3});  // a tag no trainprof knows: the rest of the chunk is skipped
  b.ApiExit(t, T0 + 40 * kUs, 2, 0);
  b.ApiEnter(u, T0 + 50 * kUs, "cudaDeviceSynchronize_v3020", 3);  // u is intact: never returned
  Report r = collector::Analyze(TraceOf({&b}), {});
  const GpuTracing& g = ProcessOf(r, 700).gpu;
  EXPECT_EQ(g.calls, 3u);
  EXPECT_EQ(g.unfinished_calls, 1u);
  EXPECT_EQ(g.unfinished_names, std::vector<std::string>{"cudaDeviceSynchronize"});
  EXPECT_EQ(g.lost_exits, 1u);
  std::map<std::string, const CudaApiRow*> api;
  for (const CudaApiRow& row : r.cuda.api) api[row.name] = &row;
  ASSERT_EQ(api.size(), 3u);
  EXPECT_EQ(api["cudaStreamSynchronize"]->time.count, 0u);
  EXPECT_EQ(api["cudaStreamSynchronize"]->unfinished, 0u);
  EXPECT_EQ(api["cudaDeviceSynchronize"]->unfinished, 1u);
  EXPECT_EQ(api["cudaMalloc"]->time.count, 1u);
  auto has = [&](const std::string& w) { return std::find(r.warnings.begin(), r.warnings.end(), w) != r.warnings.end(); };
  EXPECT_TRUE(has("pid 700: 1 CUDA call with no exit after damaged bytes of the calling thread: the exit may have been "
                  "in them; not in the durations"));
  EXPECT_TRUE(has("pid 700: 1 CUDA call never returned (cudaDeviceSynchronize): the process ended inside; not in the "
                  "durations"));
  const nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  EXPECT_EQ(j["processes"][0]["gpu"]["lost_exits"], 1);
  EXPECT_EQ(j["processes"][0]["gpu"]["unfinished_calls"], 1);
}

TEST(CudaTables, ManyCallsEstimateTheMedianAndSaySo) {
  TraceBuilder b{700, 1, T0};
  b.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 1'000'000 * kUs);
  int t = b.Thread(700), g = b.Thread(701);
  b.GpuStatus(t, T0 + 50, fmt::GpuState::kOn, 0, 18, 12040);
  b.Device(g, 0, "NVIDIA H100 80GB HBM3");
  const uint64_t n = 2'000;
  uint64_t api_total = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t at = T0 + (10 + i * 100) * kUs, call = 5 * kUs + i;  // 5.000 .. 6.999 µs
    b.ApiCall(t, at, at + call, "cudaLaunchKernel_v7000", 1 + i);
    b.Kernel(g, {.start = at + 20 * kUs, .end = at + 60 * kUs, .name = kMatmulF, .correlation = 1 + i});
    b.Memcpy(g, {.start = at + 70 * kUs, .end = at + 71 * kUs, .bytes = 1000 + i});  // sizes 1000 .. 2999
    api_total += call;
  }
  Report r = collector::Analyze(TraceOf({&b}), {});
  ASSERT_EQ(r.cuda.api.size(), 1u);
  const SampleStats& api = r.cuda.api[0].time;
  EXPECT_EQ(api.count, n);
  EXPECT_EQ(api.total, api_total);
  EXPECT_EQ(api.min, 5 * kUs);
  EXPECT_EQ(api.max, 5 * kUs + n - 1);
  EXPECT_FALSE(api.exact);
  EXPECT_NEAR(api.median, 5 * kUs + (n - 1) / 2.0, 6 * kUs * DurationSummary::kRelativeError);
  ASSERT_EQ(r.cuda.kernels.size(), 1u);
  EXPECT_EQ(r.cuda.kernels[0].time.count, n);
  EXPECT_DOUBLE_EQ(r.cuda.kernels[0].time.median, 40.0 * kUs);  // one bucket holds exactly 40 µs
  const std::string text = RenderText(r);
  EXPECT_TRUE(test::Contains(text, "~"));
  EXPECT_TRUE(test::Contains(text,
      "  ~ median of a row of more than 1024 calls: estimated within 0.39% of the exact value\n"));
  EXPECT_TRUE(test::Contains(text,
      "  ~ median of a row of more than 1024 instances: estimated within 0.39% of the exact value\n"));
  // JSON and CSV say which medians are estimates.
  const nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  EXPECT_EQ(j["cuda_api"][0]["calls"], n);
  EXPECT_EQ(j["cuda_api"][0]["median_exact"], false);
  EXPECT_EQ(j["gpu_kernels"][0]["median_exact"], false);
  ASSERT_EQ(j["memory_ops"].size(), 1u);
  EXPECT_EQ(j["memory_ops"][0]["count"], n);
  EXPECT_EQ(j["memory_ops"][0]["median_exact"], false);  // past 1024, even where every copy took 1 µs
  EXPECT_EQ(j["memory_ops"][0]["median_ns"], 1000.0);
  EXPECT_EQ(j["memory_ops"][0]["median_bytes_exact"], false);
  EXPECT_NEAR(j["memory_ops"][0]["median_bytes"].get<double>(), 1999.5, 3000 * DurationSummary::kRelativeError);
  EXPECT_EQ(j["memory_ops"][0]["min_bytes"], 1000);
  EXPECT_EQ(j["memory_ops"][0]["max_bytes"], 2999);
  // GpuRun's rows are small: exact, no note.
  EXPECT_EQ(RenderText(GpuRun().Analyze()).find("~ median"), std::string::npos);
}

TEST(CudaTables, Json) {
  Report r = GpuRun().Analyze();
  nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  EXPECT_EQ(j["summary"]["cuda_recorded"], true);
  EXPECT_EQ(j["summary"]["full_names"], false);
  const auto& api = j["cuda_api"][2];
  EXPECT_TRUE(test::HasMembers(api, {{"name", "cudaLaunchKernel"}, {"api", "runtime"}, {"calls", 5},
                                     {"total_ns", 38'000}, {"min_ns", 5'000}, {"max_ns", 10'000},
                                     {"median_ns", 7'000.0}, {"median_exact", true}, {"errors", 0},
                                     {"unfinished", 0}}));
  EXPECT_EQ(j["cuda_api_omitted"], 0);
  const auto& k = j["gpu_kernels"][0];
  EXPECT_EQ(k["name"], "matmul #1");
  EXPECT_EQ(k["mangled"], kMatmulF);
  EXPECT_EQ(k["instances"], 3);
  EXPECT_EQ(k["total_ns"], 600'000);
  EXPECT_EQ(k["median_exact"], true);
  EXPECT_EQ(k["grid"], "varies");
  EXPECT_EQ(k["grid_most_common"], "256x1x1");
  EXPECT_EQ(k["grid_variants"], 2);
  EXPECT_EQ(k["block"], "128x1x1");
  const auto& dtoh = j["memory_ops"][2];
  EXPECT_EQ(dtoh["kind"], "memcpy_dtoh");
  EXPECT_EQ(dtoh["label"], "memcpy DtoH");
  EXPECT_EQ(dtoh["count"], 1);
  EXPECT_EQ(dtoh["total_bytes"], 4);
  EXPECT_EQ(dtoh["median_exact"], true);
  EXPECT_EQ(dtoh["median_bytes_exact"], true);
  EXPECT_EQ(dtoh["pageable_count"], 1);
  EXPECT_EQ(dtoh["pageable_bytes"], 4);
  EXPECT_DOUBLE_EQ(dtoh["bandwidth_gbps"].get<double>(), 0.002);
  const auto& dev = j["devices"][0];
  EXPECT_TRUE(dev["pid"].is_null());
  EXPECT_EQ(dev["host"], "node0");
  EXPECT_EQ(dev["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(dev["processes"], 2);
  EXPECT_EQ(dev["busy_ns"], 1'163'000);
  EXPECT_EQ(dev["launch_latency"]["count"], 5);
  EXPECT_EQ(dev["launch_latency"]["p95_ns"], 462'000.0);

  const auto& p = j["processes"][0];
  EXPECT_EQ(p["pid"], 400);
  EXPECT_EQ(p["gpu"]["state"], "on");
  EXPECT_EQ(p["gpu"]["flushed"], true);
  EXPECT_TRUE(p["gpu"]["cupti_result"].is_null());
  EXPECT_EQ(p["gpu"]["records_dropped"], 7);
  EXPECT_EQ(p["gpu"]["invalid_timestamps"], 1);
  EXPECT_EQ(p["gpu"]["unfinished_calls"], 1);
  EXPECT_EQ(p["gpu"]["unfinished_names"], nlohmann::json::array({"cudaFree"}));
  EXPECT_EQ(p["gpu"]["api_errors"], 1);
  EXPECT_EQ(p["gpu_kernels"][0]["name"], "matmul");
  EXPECT_EQ(p["devices"][0]["pid"], 400);
  EXPECT_EQ(p["devices"][0]["busy_ns"], 763'000);
  EXPECT_DOUBLE_EQ(p["devices"][0]["busy_percent"].get<double>(), 7.63);
  EXPECT_EQ(p["devices"][0]["launch_latency"]["median_ns"], 60'000.0);
  const auto& u = j["processes"][1];  // tree order: by start
  EXPECT_EQ(u["pid"], 600);
  EXPECT_EQ(u["gpu"]["state"], "unavailable");
  EXPECT_EQ(u["gpu"]["cupti_result"], 39);
  EXPECT_TRUE(u["cuda_api"].empty());
  EXPECT_TRUE(u["devices"].empty());
}

TEST(CudaTables, JsonWithoutCudaHasEmptyTables) {
  TraceBuilder b(1);
  int t = b.Thread(1);
  b.Push(t, b.start_ns() + 1, "x");
  b.Pop(t, b.start_ns() + 2);
  Report r = Analyze(TraceOf({&b}), {});
  EXPECT_FALSE(r.has_cuda);
  nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  EXPECT_EQ(j["summary"]["cuda_recorded"], false);
  for (const char* key : {"cuda_api", "gpu_kernels", "memory_ops", "devices"}) {
    EXPECT_TRUE(j[key].is_array() && j[key].empty()) << key;
    EXPECT_TRUE(j["processes"][0][key].is_array() && j["processes"][0][key].empty()) << key;
  }
  EXPECT_EQ(j["processes"][0]["gpu"]["state"], "none");
  const std::string text = RenderText(r);
  EXPECT_EQ(text.find("GPU devices"), std::string::npos);
  EXPECT_EQ(text.find("Unreturned"), std::string::npos);
}

TEST(CudaTables, Csv) {
  Report r = GpuRun().Analyze({.by_process = true});
  std::map<std::string, std::string> csv = test::CsvByName(r);
  const std::string& api = csv["cuda_api.csv"];
  EXPECT_EQ(api.substr(0, api.find("\r\n")),
            "name,api,calls,total_ns,percent,mean_ns,std_ns,min_ns,median_ns,median_exact,max_ns,errors,unfinished");
  EXPECT_TRUE(test::Contains(api,
      "\r\ncudaStreamSynchronize,runtime,1,500000," + nlohmann::json(500'000 * 100.0 / 900'000).dump() +
      ",500000,0,500000,500000,true,500000,0,0\r\n"));
  EXPECT_TRUE(test::Contains(api, "\r\ncudaFree,runtime,0,0,0,0,0,0,0,true,0,0,1\r\n"));
  const std::string& kernels = csv["gpu_kernels.csv"];
  EXPECT_EQ(kernels.substr(0, kernels.find("\r\n")),
            "name,mangled,instances,total_ns,percent,mean_ns,std_ns,min_ns,median_ns,median_exact,max_ns,grid,block,"
            "grid_most_common,block_most_common,grid_variants,block_variants");
  EXPECT_TRUE(test::Contains(kernels, "\r\nmatmul #2,_Z6matmulPdS_S_i,1,400000,"));
  const std::string& memory = csv["memory_ops.csv"];
  EXPECT_TRUE(test::Contains(memory, "\r\nmemcpy_dtoh,memcpy DtoH,1,2000,"));
  EXPECT_TRUE(test::Contains(memory, ",4,4,4,4,true,4,0.002,1,4\r\n"));
  const std::string& devices = csv["gpu_devices.csv"];
  EXPECT_TRUE(test::Contains(devices, "\r\n,node0,0,NVIDIA H100 80GB HBM3,2,5,1050000,3,1,113000,1163000,0,15000000,"));
  EXPECT_TRUE(test::Contains(devices,
      "\r\n400,node0,0,NVIDIA H100 80GB HBM3,1,4,650000,3,1,113000,763000,0,10000000,7.63,"));
  EXPECT_TRUE(test::Contains(csv["processes.csv"], ",on,,,7,1,11,1,false,yes\r\n"));
  EXPECT_NE(csv["processes.csv"].find(
                ",unavailable,39,CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: another profiler holds CUPTI,0,0,0,0,false,yes\r\n"),
            std::string::npos);
  EXPECT_NE(csv["gpu_kernels_by_process.csv"].find("\r\n500,node0,matmul,_Z6matmulPdS_S_i,1,400000,"),
            std::string::npos);
  EXPECT_NE(csv["cuda_api_by_process.csv"].find("\r\n400,node0,cudaMalloc,runtime,1,20000,"), std::string::npos);
  EXPECT_NE(csv["memory_ops_by_process.csv"].find("\r\n400,node0,memset,memset,1,1000,"), std::string::npos);
}

TEST(CudaTables, Text) {
  Report r = GpuRun().Analyze();
  const std::string text = RenderText(r);
  // Processes table: GPU columns.
  EXPECT_TRUE(test::Contains(text, "Dropped  GPU          GPU dropped  Bad times  Unreturned\n"));
  EXPECT_TRUE(test::Contains(text, "  on                     7          1           1\n"));
  EXPECT_TRUE(test::Contains(text, "  unavailable            0          0           0\n"));
  EXPECT_NE(text.find("\nGPU devices\n"), std::string::npos);
  EXPECT_TRUE(test::Contains(text,
      "\n  all       0  NVIDIA H100 80GB HBM3  7.8%          18.8%        5      1.05 ms            4       113 µs  "
      "     188 µs         110 µs      462 µs\n"));
  EXPECT_TRUE(test::Contains(text,
      "\n  400       0  NVIDIA H100 80GB HBM3  7.6%          45.1%        4       650 µs            4       113 µs"
      "       110 µs        60.0 µs      280 µs\n"));
  EXPECT_NE(text.find("\nCUDA API (all processes)\n"), std::string::npos);
  EXPECT_TRUE(test::Contains(text,
      "      55.6      500 µs      1   500 µs   500 µs   500 µs   500 µs     0 ns       0           0  "
      "cudaStreamSynchronize\n"));
  EXPECT_NE(text.find("\nGPU kernels (all processes)\n"), std::string::npos);
  EXPECT_TRUE(test::Contains(text, "varies   128x1x1  matmul #1\n"));
  EXPECT_TRUE(test::Contains(text, "64x1x1   128x1x1  at::native::vectorized_elementwise_kernel<...>\n"));
  EXPECT_NE(text.find("--full-names shows them whole"), std::string::npos);
  EXPECT_NE(text.find("\nGPU memory operations (all processes)\n"), std::string::npos);
  EXPECT_TRUE(test::Contains(text, "   4 B       4 B  2.00 MB/s   1 (4 B)  memcpy DtoH\n"));
  EXPECT_TRUE(test::Contains(text, "1.00 MB  10.0 GB/s         0  memcpy HtoD\n"));
  EXPECT_NE(text.find("  Pageable: copies to or from pageable (not pinned) host memory."), std::string::npos);
}

}  // namespace
}  // namespace trainprof::collector
