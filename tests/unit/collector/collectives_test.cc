// Collectives in the verdict (docs/analysis.md, "Collectives" and "Ranks and the straggler"): the
// arrival of a DistributedDataParallel rank is DDP's gradient all-reduce inside backward, not the
// script's own logging all_reduce; DDP's collective time is unknown without NCCL kernels; NCCL
// kernels recorded by CUPTI are the collective time on the GPU.
#include "collector/analysis/collectives.h"

#include <gtest/gtest.h>

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
using test::Says;
using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

constexpr uint64_t T0 = 1'000'000'000;
constexpr uint64_t kUs = 1'000;

// Two ranks in 6 steps; rank 1's forward takes `extra` longer (an extra layer). Rank 0 waits for it
// in DDP's gradient all-reduce inside backward, so both leave backward together; then both run the
// optimizer step and the script's logging `dist.all_reduce(loss)`, where they are already aligned.
// `ddp`: the processes recorded TRAINPROF_DDP=gloo (the shim does when DDP(model) is constructed).
// `grad_collective`: the first DDP gradient all-reduce is recorded as a collective inside backward,
// 5 ms after its start.
struct DdpLoggingAllReduce {
  TraceBuilder r0{401, 1, T0};
  TraceBuilder r1{402, 1, T0};
  DdpLoggingAllReduce(uint64_t extra, bool ddp, bool grad_collective = false) {
    r0.Env("RANK", "0").Env("WORLD_SIZE", "2").HeaderEnd(fmt::EndKind::kExit, 0, T0 + 2'000 * kMs);
    r1.Env("RANK", "1").Env("WORLD_SIZE", "2").HeaderEnd(fmt::EndKind::kExit, 0, T0 + 2'000 * kMs);
    PhaseThread a(r0, 401), b(r1, 402);
    if (ddp) {
      r0.ProcessEnv(a.thread(), "TRAINPROF_DDP=gloo");
      r1.ProcessEnv(b.thread(), "TRAINPROF_DDP=gloo");
    }
    uint64_t t = T0 + 10 * kMs;
    for (int i = 0; i < 6; ++i) {
      const uint64_t step = 34 * kMs + extra;
      for (auto [th, fwd] : {std::pair{&a, 10 * kMs}, std::pair{&b, 10 * kMs + extra}}) {
        th->Range(t, t + kMs, Phase::kDataWait);
        th->Range(t + kMs, t + kMs + fwd, Phase::kForward, "DistributedDataParallel.forward");
        const uint64_t bw = t + kMs + fwd, bw_end = t + 31 * kMs + extra;
        th->Push(bw, Phase::kBackward, "Tensor.backward");
        if (grad_collective) th->Range(bw + 5 * kMs, bw + 6 * kMs, Phase::kCollective, "c10d::allreduce_");
        th->Pop(bw_end);
        th->Range(bw_end, bw_end + 2 * kMs, Phase::kOptimizerStep);
        th->Range(bw_end + 2 * kMs, bw_end + 3 * kMs, Phase::kCollective, "all_reduce");
      }
      t += step;
    }
  }
  Report Analyze() const { return collector::Analyze(TraceOf({&r0, &r1}), {}); }
};

// Without DDP recorded the arrival stays the first collective of the step (a script with its own
// collectives and no DDP synchronises there): the aligned logging all_reduce, so no straggler.
TEST(Collectives, WithoutDdpTheArrivalIsTheFirstCollective) {
  Report report = DdpLoggingAllReduce(20 * kMs, /*ddp=*/false).Analyze();
  const Bottleneck& b = report.bottleneck;
  ASSERT_TRUE(b.ranks);
  EXPECT_EQ(b.ranks->ranks[1].arrival, "collective");
  EXPECT_FALSE(b.ranks->straggler);
  for (const TrainingProcess& t : b.processes) {
    EXPECT_EQ(t.collective.source, "python");
    EXPECT_FALSE(t.collective.ddp);
  }
}

// With DDP the arrival is DDP's gradient all-reduce (start of backward): rank 1 arrives 20 ms late.
TEST(Collectives, DdpArrivalIsTheGradientAllReduceNotTheLoggingAllReduce) {
  Report report = DdpLoggingAllReduce(20 * kMs, /*ddp=*/true).Analyze();
  const Bottleneck& b = report.bottleneck;
  ASSERT_TRUE(b.ranks);
  const RankSync& rs = *b.ranks;
  EXPECT_TRUE(rs.straggler);
  ASSERT_EQ(rs.latest, 1);
  EXPECT_EQ(rs.ranks[1].arrival, "ddp_backward");
  EXPECT_EQ(rs.ranks[0].arrival, "ddp_backward");
  EXPECT_DOUBLE_EQ(*rs.ranks[1].median_lateness_ns, 20.0 * kMs);
  EXPECT_EQ(rs.ranks[1].last_steps, 5u);
  EXPECT_TRUE(Says(b.rank_text, "rank 1 is the straggler: it reaches DDP's gradient all-reduce (start of backward) "
                                "20.0 ms (median;"));
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_FALSE(j["bottleneck"]["ranks"]["straggler"].is_null());
  EXPECT_NE(j["bottleneck"]["ranks"]["straggler"], false);
  EXPECT_EQ(j["bottleneck"]["ranks"]["latest_rank"], 1);
  EXPECT_EQ(j["bottleneck"]["ranks"]["ranks"][1]["arrival"], "ddp_backward");
}

// A DDP gradient collective recorded inside backward is the arrival: 5 ms after backward starts.
TEST(Collectives, DdpArrivalAtARecordedGradientCollective) {
  Report report = DdpLoggingAllReduce(20 * kMs, /*ddp=*/true, /*grad_collective=*/true).Analyze();
  const TrainingProcess& p0 = report.bottleneck.processes.at(0);
  const StepRow& s = p0.step_rows.at(2);
  EXPECT_EQ(s.arrival, Arrival::kDdpBackward);
  EXPECT_EQ(s.arrival_ns, s.start_ns + 11 * kMs + 5 * kMs);
  EXPECT_DOUBLE_EQ(*report.bottleneck.ranks->ranks[1].median_lateness_ns, 20.0 * kMs);
}

// DDP without NCCL kernels: the collective time is unknown, not 0% (JSON null, "unknown" in the
// table, a sentence saying why).
TEST(Collectives, DdpCollectiveTimeIsUnknown) {
  Report report = DdpLoggingAllReduce(20 * kMs, /*ddp=*/true).Analyze();
  const TrainingProcess& p0 = report.bottleneck.processes.at(0);
  EXPECT_EQ(p0.collective.source, "unknown");
  EXPECT_TRUE(p0.collective.ddp);
  EXPECT_EQ(p0.collective.backend, "gloo");
  EXPECT_TRUE(Says(p0.text,
                   "DDP over gloo: collective: unknown (DDP's gradient all-reduce is inside backward), so the backward "
                   "part includes the all-reduce and any wait for the other ranks."));
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  const nlohmann::json& jp = j["bottleneck"]["processes"][0];
  EXPECT_TRUE(jp["parts"]["collective"]["percent"].is_null());
  EXPECT_EQ(jp["parts"]["collective"]["total_ns"], 5 * kMs);  // the logging all_reduce is still counted
  EXPECT_EQ(jp["collective"]["source"], "unknown");
  EXPECT_EQ(jp["collective"]["ddp"], true);
  EXPECT_EQ(jp["collective"]["backend"], "gloo");
  const std::string text = RenderText(report);
  EXPECT_NE(text.find(" unknown "), std::string::npos) << text;
}

TEST(Collectives, NcclKernelNames) {
  EXPECT_TRUE(IsNcclKernel("_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork"));
  EXPECT_TRUE(IsNcclKernel("ncclKernel_AllReduce_RING_LL_Sum_float"));
  EXPECT_TRUE(IsNcclKernel("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP11ncclDevCommmP8ncclWork"));
  EXPECT_TRUE(IsNcclKernel("ncclDevKernel_Generic"));
  EXPECT_FALSE(IsNcclKernel("_Z6kernelPf"));
  EXPECT_FALSE(IsNcclKernel("_ZN2at6native18elementwise_kernelILi128ELi2EEEviT_"));
  EXPECT_FALSE(IsNcclKernel("my_nccl_helper"));
}

// A DDP rank on a GPU: each 20 ms step has a forward kernel and two NCCL all-reduce kernels (3 ms
// and 1 ms) during backward: the collective is 4 ms of GPU time per step, 20% of the step.
TEST(Collectives, NcclKernelsAreTheGpuCollectiveTime) {
  TraceBuilder main{200, 1, T0};
  PhaseThread m{main, 200};
  const int g = main.Thread(299);
  main.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 2'000 * kMs);
  main.GpuStatus(m.thread(), T0 + 1, fmt::GpuState::kOn);
  main.Device(g, 0, "NVIDIA A100-SXM4-80GB");
  main.ProcessEnv(m.thread(), "TRAINPROF_DDP=nccl");
  uint64_t corr = 1;
  auto launch = [&](uint64_t at, uint64_t start, uint64_t end, const char* name) {
    main.ApiCall(m.thread(), at, at + 10 * kUs, "cudaLaunchKernel_v7000", corr);
    main.Kernel(g, {.start = start, .end = end, .name = name, .correlation = corr});
    ++corr;
  };
  uint64_t s = T0 + 10 * kMs;
  for (int i = 0; i < 6; ++i, s += 20 * kMs) {
    m.Range(s, s + kMs, Phase::kDataWait);
    m.Push(s + kMs, Phase::kForward);
    launch(s + kMs, s + kMs + 20 * kUs, s + 6 * kMs, "_Z6kernelPf");
    m.Pop(s + 6 * kMs);
    m.Push(s + 6 * kMs, Phase::kBackward);
    launch(s + 7 * kMs, s + 8 * kMs, s + 11 * kMs, "_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork");
    launch(s + 12 * kMs, s + 13 * kMs, s + 14 * kMs, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    m.Pop(s + 18 * kMs);
    m.Range(s + 18 * kMs, s + 19 * kMs, Phase::kOptimizerStep);
  }
  m.EpochEnd(s, kMs);
  Report report = collector::Analyze(TraceOf({&main}), {});
  const TrainingProcess& t = report.bottleneck.processes.at(0);
  EXPECT_EQ(t.collective.source, "nccl_kernels");
  EXPECT_EQ(t.collective.backend, "nccl");
  EXPECT_EQ(t.collective.nccl_kernels, 10u);  // 5 steps in the statistics (step 0 is warm-up)
  EXPECT_DOUBLE_EQ(*t.collective.gpu_ns_per_step, 4.0 * kMs);
  EXPECT_DOUBLE_EQ(*t.collective.gpu_percent, 20.0);
  EXPECT_TRUE(Says(t.text, "DDP over nccl: collective: NCCL kernels run 4.00 ms per step on the GPU, 20.0% of the "
                           "step (10 kernels in the steps)."));
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  const nlohmann::json& c = j["bottleneck"]["processes"][0]["collective"];
  EXPECT_EQ(c["source"], "nccl_kernels");
  EXPECT_EQ(c["gpu_ns_per_step"], 4.0 * kMs);
  EXPECT_FALSE(j["bottleneck"]["processes"][0]["parts"]["collective"]["percent"].is_null());
}

}  // namespace
}  // namespace trainprof::collector
