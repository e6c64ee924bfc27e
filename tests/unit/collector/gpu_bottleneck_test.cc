// The GPU part of the bottleneck verdict on synthetic training loops with known GPU timelines:
// GPU idle time attributed to what the host did (docs/analysis.md, "GPU idle time").
//   (a) the GPU waits for data        (b) the host sits in cudaStreamSynchronize after an
//   .item()-like DtoH copy each step  (c) many 3 µs kernels with launch calls between them
// and the NCCL kernels of a DDP rank as its collective time on the GPU (collectives.h).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "collector/analysis/bottleneck.h"
#include "collector/render/render.h"
#include "collector/report/report.h"
#include "phase_builder.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::kMs;
using test::PhaseThread;
using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

constexpr uint64_t T0 = 1'000'000'000;
constexpr uint64_t kUs = 1'000;

/// A training process (pid 200): phases and CUDA calls on its main thread, GPU records from the
/// CUPTI drainer thread.
struct GpuTrain {
  TraceBuilder main{200, 1, T0};
  PhaseThread m{main, 200};
  int g = main.Thread(299);
  uint64_t corr = 1;

  GpuTrain() {
    main.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 2'000 * kMs);
    main.GpuStatus(m.thread(), T0 + 1, fmt::GpuState::kOn);
    main.Device(g, 0, "NVIDIA A100-SXM4-80GB");
  }
  /// A launch call [at, at + call) and its kernel [start, end).
  void Launch(uint64_t at, uint64_t call, uint64_t start, uint64_t end, const char* name = "_Z6kernelPf") {
    main.ApiCall(m.thread(), at, at + call, "cudaLaunchKernel_v7000", corr);
    main.Kernel(g, {.start = start, .end = end, .name = name, .correlation = corr});
    ++corr;
  }
  /// Phase `p` over [from, to) on the main thread, with a 10 µs (or `call`) launch at its start
  /// and that launch's kernel [start, end).
  void PhaseWithKernel(format::Phase p, uint64_t from, uint64_t to, uint64_t start, uint64_t end,
                       uint64_t call = 10 * kUs) {
    m.Push(from, p);
    Launch(from, call, start, end);
    m.Pop(to);
  }
  /// A cudaMemcpyAsync call [at, call_end) and its device-to-host copy [start, end) of `bytes` into
  /// `dst` memory.
  void CopyToHost(uint64_t at, uint64_t call_end, uint64_t start, uint64_t end, uint64_t bytes, fmt::MemoryKind dst) {
    main.ApiCall(m.thread(), at, call_end, "cudaMemcpyAsync_v3020", corr);
    main.Memcpy(g, {.start = start, .end = end, .kind = fmt::MemcpyKind::kDtoH, .bytes = bytes, .correlation = corr,
                    .src = fmt::MemoryKind::kDevice, .dst = dst});
    ++corr;
  }
  /// `n` steps of `length` from T0 + 10 ms, each written by step(s) from its start s, each beginning
  /// with a data wait of `wait`; then the end of the epoch (StopIteration ends the last step).
  template <typename Step>
  void Steps(int n, uint64_t length, uint64_t wait, Step step) {
    uint64_t s = T0 + 10 * kMs;
    for (int i = 0; i < n; ++i, s += length) {
      m.Range(s, s + wait, format::Phase::kDataWait);
      step(s);
    }
    m.EpochEnd(s, 1 * kMs);
  }
  Report Analyze() const { return collector::Analyze(TraceOf({&main}), {}); }
};

const TrainingProcess& Only(const Report& r) {
  EXPECT_EQ(r.bottleneck.processes.size(), 1u);
  return r.bottleneck.processes.at(0);
}

using test::Says;

// (a) Each 10 ms step: 6 ms waiting for data (GPU idle), then forward and backward, each a 10 µs
// launch and a kernel that runs to the end of the phase.
TEST(GpuBottleneck, GpuWaitsForData) {
  GpuTrain r;
  r.Steps(10, 10 * kMs, 6 * kMs, [&](uint64_t s) {
    r.PhaseWithKernel(format::Phase::kForward, s + 6 * kMs, s + 8 * kMs, s + 6 * kMs + 10 * kUs, s + 8 * kMs);
    r.PhaseWithKernel(format::Phase::kBackward, s + 8 * kMs, s + 10 * kMs, s + 8 * kMs + 10 * kUs, s + 10 * kMs);
  });
  Report report = r.Analyze();
  EXPECT_TRUE(report.bottleneck.gpu.recorded);
  const TrainingProcess& t = Only(report);
  EXPECT_EQ(t.verdict, Verdict::kInputBound);
  ASSERT_TRUE(t.gpu);
  const GpuIdle& g = *t.gpu;
  EXPECT_TRUE(g.recorded);
  EXPECT_EQ(g.steps, 9u);  // step 0 is warm-up
  EXPECT_EQ(g.step_ns, 90 * kMs);
  EXPECT_EQ(g.busy_ns, 9 * 3'980 * kUs);
  EXPECT_EQ(g.idle_ns, 9 * 6'020 * kUs);
  EXPECT_DOUBLE_EQ(g.busy_percent, 39.8);
  EXPECT_DOUBLE_EQ(g.idle_percent, 60.2);
  EXPECT_EQ(g.idle(IdleCause::kDataWait), 9 * 6 * kMs);
  EXPECT_EQ(g.idle(IdleCause::kLaunch), 9 * 20 * kUs);
  EXPECT_EQ(g.idle(IdleCause::kSync), 0u);
  EXPECT_EQ(g.idle(IdleCause::kOther), 0u);
  EXPECT_EQ(g.cause, IdleCause::kDataWait);
  EXPECT_FALSE(g.gpu_bound);
  EXPECT_FALSE(g.launch_bound);
  EXPECT_EQ(g.kernels, 18u);
  EXPECT_TRUE(Says(t.text,
                   "GPU idle 60.2% of the step (mean 6.02 ms of 10.0 ms; busy 39.8%); 99.7% of the idle time the host "
                   "was waiting for data: the input pipeline keeps the GPU waiting."));
  EXPECT_TRUE(Says(t.text,
                   "GPU idle time by what the host did: data wait 99.7%, synchronising calls 0.0%, kernel launches "
                   "0.3%, other 0.0%."));
}

// (b) Each 10 ms step: a 0.1 ms data wait, forward and backward kernels (GPU busy until 3.8 ms), then
// loss.item(): cudaMemcpyAsync DtoH of 4 B into pinned memory, then cudaStreamSynchronize from 3.51
// to 9.9 ms, while the GPU idles until the copy runs at 9.8 ms.
TEST(GpuBottleneck, HostInStreamSynchronizeAfterItem) {
  GpuTrain r;
  r.Steps(10, 10 * kMs, 100 * kUs, [&](uint64_t s) {
    auto at = [&](uint64_t us) { return s + us * kUs; };
    r.PhaseWithKernel(format::Phase::kForward, at(100), at(3'100), at(120), at(3'000));
    r.PhaseWithKernel(format::Phase::kBackward, at(3'100), at(3'500), at(3'120), at(3'800));
    r.CopyToHost(at(3'500), at(3'510), at(9'800), at(9'802), 4, fmt::MemoryKind::kPinned);
    r.main.ApiCall(r.m.thread(), at(3'510), at(9'900), "cudaStreamSynchronize_v3020", r.corr++);
  });
  Report report = r.Analyze();
  const TrainingProcess& t = Only(report);
  ASSERT_TRUE(t.gpu);
  const GpuIdle& g = *t.gpu;
  EXPECT_EQ(g.steps, 9u);
  EXPECT_EQ(g.busy_ns, 9 * 3'562 * kUs);  // 2.88 ms + 0.68 ms + 2 µs
  EXPECT_EQ(g.idle_ns, 9 * 6'438 * kUs);
  EXPECT_EQ(g.idle(IdleCause::kDataWait), 9 * 100 * kUs);
  EXPECT_EQ(g.idle(IdleCause::kLaunch), 9 * 20 * kUs);
  EXPECT_EQ(g.idle(IdleCause::kSync), 9 * 6'098 * kUs);  // 3.8..9.8 and 9.802..9.9
  EXPECT_EQ(g.idle(IdleCause::kOther), 9 * 220 * kUs);
  EXPECT_EQ(g.cause, IdleCause::kSync);
  EXPECT_NEAR(g.idle_share(IdleCause::kSync), 6'098 * 100.0 / 6'438, 1e-9);
  EXPECT_EQ(g.sync_call, "cudaStreamSynchronize");
  EXPECT_EQ(g.sync_call_idle_ns, 9 * 6'098 * kUs);
  EXPECT_EQ(g.sync_calls, 9u);
  EXPECT_DOUBLE_EQ(g.sync_calls_per_step, 1.0);
  EXPECT_TRUE(g.sync_after_dtoh);
  EXPECT_EQ(g.sync_copy_bytes, 4u);
  EXPECT_TRUE(Says(t.text,
                   "GPU idle 64.4% of the step (mean 6.44 ms of 10.0 ms; busy 35.6%); 94.7% of the idle time the host "
                   "was in .item() / cudaStreamSynchronize (called 1x per step, after a device-to-host copy of 4 B as "
                   ".item(), .cpu() or .tolist() make): the host blocks until the GPU is done and nothing is queued for "
                   "the GPU meanwhile; synchronise less often (e.g. keep the loss on the GPU and read it every N "
                   "steps)."));

  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  const auto& gj = j["bottleneck"]["processes"][0]["gpu"];
  EXPECT_EQ(gj["recorded"], true);
  EXPECT_TRUE(gj["why_not"].is_null());
  EXPECT_EQ(gj["steps"], 9);
  EXPECT_EQ(gj["step_ns"], 90 * kMs);
  EXPECT_EQ(gj["busy_ns"], 9 * 3'562 * kUs);
  EXPECT_EQ(gj["idle_ns"], 9 * 6'438 * kUs);
  EXPECT_EQ(gj["cause"], "sync");
  EXPECT_EQ(gj["gpu_bound"], false);
  EXPECT_EQ(gj["idle"]["sync"]["ns"], 9 * 6'098 * kUs);
  EXPECT_EQ(gj["idle"]["data_wait"]["ns"], 9 * 100 * kUs);
  EXPECT_EQ(gj["sync"]["call"], "cudaStreamSynchronize");
  EXPECT_EQ(gj["sync"]["calls"], 9);
  EXPECT_EQ(gj["sync"]["calls_per_step"], 1.0);
  EXPECT_EQ(gj["sync"]["after_dtoh_copy"], true);
  EXPECT_EQ(gj["sync"]["copy_bytes"], 4);
  EXPECT_EQ(j["bottleneck"]["gpu"], (nlohmann::json{{"recorded", true}}));
  EXPECT_EQ(j["bottleneck"]["thresholds"]["gpu_idle_percent"], 10.0);
  EXPECT_EQ(j["bottleneck"]["thresholds"]["short_kernel_ns"], 10'000);
  EXPECT_EQ(j["bottleneck"]["thresholds"]["launch_bound_idle_percent"], 50.0);

  const std::string text = RenderText(report);
  EXPECT_NE(text.find("Other  GPU busy  Verdict\n"), std::string::npos) << text;
  EXPECT_NE(text.find("   35.6%  compute-bound\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("GPU activity: not recorded"), std::string::npos);

  std::map<std::string, std::string> csv = test::CsvByName(report);
  EXPECT_NE(csv["bottleneck.csv"].find(",35.62,64.38,sync,"), std::string::npos) << csv["bottleneck.csv"];
  EXPECT_NE(csv["bottleneck.csv"].find(",cudaStreamSynchronize,1,false\r\n"), std::string::npos) << csv["bottleneck.csv"];
}

// A blocking copy is itself the synchronisation: cudaMemcpyAsync into pageable memory.
TEST(GpuBottleneck, PageableCopyIsASynchronisingCall) {
  GpuTrain r;
  r.Steps(6, 10 * kMs, 100 * kUs, [&](uint64_t s) {
    auto at = [&](uint64_t us) { return s + us * kUs; };
    r.PhaseWithKernel(format::Phase::kForward, at(100), at(2'000), at(110), at(2'000));
    r.CopyToHost(at(2'000), at(9'000), at(8'990), at(9'000), 1'000, fmt::MemoryKind::kPageable);
  });
  const Report report = r.Analyze();
  const GpuIdle& g = *Only(report).gpu;
  EXPECT_EQ(g.cause, IdleCause::kSync);
  EXPECT_EQ(g.idle(IdleCause::kSync), 5 * 6'990 * kUs);  // 2.0..8.99 ms of each step
  EXPECT_EQ(g.sync_call, "cudaMemcpyAsync (DtoH, pageable)");
  EXPECT_TRUE(g.sync_after_dtoh);
  EXPECT_EQ(g.sync_copy_bytes, 1'000u);
}

// (c) Each 1 ms step: a 50 µs data wait, then 100 launch calls of 6 µs every 9.5 µs, each kernel
// 3 µs right after its call: the GPU idles between kernels while the host launches the next.
TEST(GpuBottleneck, ManyShortKernelsAreLaunchBound) {
  GpuTrain r;
  r.Steps(6, 1 * kMs, 50 * kUs, [&](uint64_t s) {
    r.m.Push(s + 50 * kUs, format::Phase::kForward);
    for (uint64_t k = 0; k < 100; ++k) {
      const uint64_t call = s + 50 * kUs + k * 9'500;
      r.Launch(call, 6 * kUs, call + 6 * kUs, call + 9 * kUs, "_ZN2at6native18elementwise_kernelILi128ELi2EEEviT_");
    }
    r.m.Pop(s + 1 * kMs);
  });
  Report report = r.Analyze();
  const TrainingProcess& t = Only(report);
  ASSERT_TRUE(t.gpu);
  const GpuIdle& g = *t.gpu;
  EXPECT_EQ(g.steps, 5u);
  EXPECT_EQ(g.step_ns, 5 * kMs);
  EXPECT_EQ(g.busy_ns, 5 * 300 * kUs);
  EXPECT_EQ(g.idle_ns, 5 * 700 * kUs);
  EXPECT_EQ(g.idle(IdleCause::kDataWait), 5 * 50 * kUs);
  EXPECT_EQ(g.idle(IdleCause::kLaunch), 5 * 600 * kUs);
  EXPECT_EQ(g.idle(IdleCause::kOther), 5 * 50 * kUs);
  EXPECT_EQ(g.cause, IdleCause::kLaunch);
  EXPECT_EQ(g.kernels, 500u);
  EXPECT_DOUBLE_EQ(g.kernels_per_step, 100.0);
  EXPECT_DOUBLE_EQ(g.kernel_median_ns, 3'000.0);
  EXPECT_EQ(g.launch_calls, 500u);
  EXPECT_DOUBLE_EQ(g.launch_median_ns, 6'000.0);
  EXPECT_TRUE(g.launch_bound);
  EXPECT_TRUE(g.sync_call.empty());
  EXPECT_TRUE(Says(t.text,
                   "GPU idle 70.0% of the step (mean 700 µs of 1.00 ms; busy 30.0%); 85.7% of the idle time the host was "
                   "launching kernels: launch-bound (100 kernels per step, median kernel 3.00 µs, median launch call "
                   "6.00 µs; launch-bound when launches cover 50.0% or more of the idle time and the median kernel is "
                   "under 10.0 µs or shorter than a launch call): use fewer, larger kernels (torch.compile, fused "
                   "optimizers), CUDA graphs, or a larger batch."));
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  const auto& launch = j["bottleneck"]["processes"][0]["gpu"]["launch"];
  EXPECT_EQ(launch["kernels"], 500);
  EXPECT_EQ(launch["kernel_median_ns"], 3'000.0);
  EXPECT_EQ(launch["launch_median_ns"], 6'000.0);
  EXPECT_EQ(launch["launch_bound"], true);
  EXPECT_TRUE(j["bottleneck"]["processes"][0]["gpu"]["sync"].is_null());
}

// Long kernels with the host launching in between: launches are the cause, but not launch-bound.
TEST(GpuBottleneck, LaunchGapsWithLongKernelsAreNotLaunchBound) {
  GpuTrain r;
  r.Steps(6, 1 * kMs, 10 * kUs, [&](uint64_t s) {
    // A slow 400 µs launch, a 590 µs kernel.
    r.PhaseWithKernel(format::Phase::kForward, s + 10 * kUs, s + 1 * kMs, s + 410 * kUs, s + 1 * kMs, 400 * kUs);
  });
  const Report report = r.Analyze();
  const TrainingProcess& t = Only(report);
  const GpuIdle& g = *t.gpu;
  EXPECT_EQ(g.cause, IdleCause::kLaunch);
  EXPECT_EQ(g.idle(IdleCause::kLaunch), 5 * 400 * kUs);
  EXPECT_FALSE(g.launch_bound);  // 590 µs kernels: neither short nor shorter than the 400 µs launch
  EXPECT_TRUE(Says(t.text, "97.6% of the idle time the host was launching kernels (1 kernel per step, median kernel "
                          "590 µs, median launch call 400 µs): the host issues GPU work more slowly than the GPU runs "
                          "it."));
}

TEST(GpuBottleneck, GpuBoundWhenIdleIsBelowTenPercent) {
  GpuTrain r;
  r.Steps(6, 10 * kMs, 100 * kUs, [&](uint64_t s) {
    r.PhaseWithKernel(format::Phase::kForward, s + 100 * kUs, s + 10 * kMs, s + 500 * kUs, s + 10 * kMs);  // busy 9.5 of 10 ms
  });
  const Report report = r.Analyze();
  const TrainingProcess& t = Only(report);
  EXPECT_TRUE(t.gpu->gpu_bound);
  EXPECT_DOUBLE_EQ(t.gpu->busy_percent, 95.0);
  EXPECT_TRUE(Says(t.text, "GPU-bound: the GPU is busy 95.0% of the step (mean 9.50 ms of 10.0 ms; GPU-bound when idle "
                          "below 10.0%): the time goes to GPU work (see GPU kernels)."));
}

// A training process whose CUPTI could not be used: said, with CUPTI's message.
TEST(GpuBottleneck, UnavailableTracingIsSaid) {
  TraceBuilder main{200, 1, T0};
  PhaseThread m{main, 200};
  main.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 2'000 * kMs);
  main.GpuStatus(m.thread(), T0 + 1, fmt::GpuState::kUnavailable, 39, 18, 12040,
                 "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  uint64_t s = T0 + 10 * kMs;
  for (int i = 0; i < 6; ++i) s = m.Step(s, {.wait = kMs, .forward = 4 * kMs, .backward = 5 * kMs});
  Report report = Analyze(TraceOf({&main}), {});
  const TrainingProcess& t = Only(report);
  ASSERT_TRUE(t.gpu);
  EXPECT_FALSE(t.gpu->recorded);
  EXPECT_TRUE(Says(t.text, "GPU activity: not recorded for this process (GPU tracing unavailable: "
                          "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)."));
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_EQ(j["bottleneck"]["processes"][0]["gpu"]["recorded"], false);
  EXPECT_EQ(j["bottleneck"]["processes"][0]["gpu"]["why_not"],
            "GPU tracing unavailable: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  EXPECT_TRUE(j["bottleneck"]["processes"][0]["gpu"]["cause"].is_null());
  EXPECT_NE(RenderText(report).find("  GPU busy  Verdict\n"), std::string::npos);
}

// Without CUDA records anywhere the section keeps its one line, and no process has a gpu object.
TEST(GpuBottleneck, NoCudaDataKeepsTheNotRecordedLine) {
  TraceBuilder main{200, 1, T0};
  PhaseThread m{main, 200};
  uint64_t s = T0 + 10 * kMs;
  for (int i = 0; i < 6; ++i) s = m.Step(s, {.wait = kMs, .forward = 4 * kMs, .backward = 5 * kMs});
  Report report = Analyze(TraceOf({&main}), {});
  EXPECT_FALSE(report.bottleneck.gpu.recorded);
  EXPECT_FALSE(Only(report).gpu);
  const std::string text = RenderText(report);
  EXPECT_NE(text.find("\n  GPU activity: not recorded (no CUDA data in these traces)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("GPU busy"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_TRUE(j["bottleneck"]["processes"][0]["gpu"].is_null());
}

// A DDP rank on a GPU (collectives.h): each 20 ms step has a forward kernel and two NCCL all-reduce
// kernels (3 ms and 1 ms) during backward: the collective is 4 ms of GPU time per step, 20% of it.
TEST(GpuBottleneck, NcclKernelsAreTheCollectiveTime) {
  GpuTrain r;
  r.main.ProcessEnv(r.m.thread(), "TRAINPROF_DDP=nccl");
  r.Steps(6, 20 * kMs, kMs, [&](uint64_t s) {
    r.PhaseWithKernel(format::Phase::kForward, s + kMs, s + 6 * kMs, s + kMs + 20 * kUs, s + 6 * kMs);
    r.m.Push(s + 6 * kMs, format::Phase::kBackward);
    r.Launch(s + 7 * kMs, 10 * kUs, s + 8 * kMs, s + 11 * kMs,
             "_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork");
    r.Launch(s + 12 * kMs, 10 * kUs, s + 13 * kMs, s + 14 * kMs, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    r.m.Pop(s + 18 * kMs);
    r.m.Range(s + 18 * kMs, s + 19 * kMs, format::Phase::kOptimizerStep);
  });
  Report report = r.Analyze();
  const TrainingProcess& t = Only(report);
  EXPECT_EQ(t.collective.source, "nccl_kernels");
  EXPECT_EQ(t.collective.backend, "nccl");
  EXPECT_EQ(t.collective.nccl_kernels, 10u);  // 5 steps in the statistics (step 0 is warm-up)
  EXPECT_DOUBLE_EQ(*t.collective.gpu_ns_per_step, 4.0 * kMs);
  EXPECT_DOUBLE_EQ(*t.collective.gpu_percent, 20.0);
  EXPECT_TRUE(Says(t.text, "DDP over nccl: collective: NCCL kernels run 4.00 ms per step on the GPU, 20.0% of the "
                           "step (10 kernels in the steps)."));
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  const nlohmann::json& p = j["bottleneck"]["processes"][0];
  EXPECT_EQ(p["collective"]["source"], "nccl_kernels");
  EXPECT_EQ(p["collective"]["gpu_ns_per_step"], 4.0 * kMs);
  EXPECT_FALSE(p["parts"]["collective"]["percent"].is_null());
}

TEST(GpuBottleneck, NcclKernelNames) {
  for (const char* nccl : {"_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork",
                           "ncclKernel_AllReduce_RING_LL_Sum_float",
                           "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP11ncclDevCommmP8ncclWork", "ncclDevKernel_Generic"}) {
    EXPECT_TRUE(IsNcclKernel(nccl)) << nccl;
  }
  for (const char* other : {"_Z6kernelPf", "_ZN2at6native18elementwise_kernelILi128ELi2EEEviT_", "my_nccl_helper"}) {
    EXPECT_FALSE(IsNcclKernel(other)) << other;
  }
}

}  // namespace
}  // namespace trainprof::collector
