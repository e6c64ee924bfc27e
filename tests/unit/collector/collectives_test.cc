// Collectives in the verdict (docs/analysis.md, "Collectives" and "Ranks and the straggler"): the
// arrival of a DistributedDataParallel rank is DDP's gradient all-reduce inside backward, not the
// script's own logging all_reduce; DDP's collective time is unknown without NCCL kernels (the
// NCCL kernels as collective time on the GPU: gpu_bottleneck_test.cc).
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
using test::TraceBuilder;
namespace fmt = trainprof::format;

constexpr uint64_t T0 = 1'000'000'000;

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
  Report Analyze() const { return collector::Analyze(test::TraceOf({&r0, &r1}), {}); }
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
  EXPECT_TRUE(test::Says(b.rank_text, "rank 1 is the straggler: it reaches DDP's gradient all-reduce (start of backward) "
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
  EXPECT_TRUE(test::Says(p0.text,
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
  for (const CsvTable& csv : RenderCsv(report)) {  // bottleneck.csv: collective_percent (field 18) empty
    if (csv.name != "bottleneck.csv") continue;
    const size_t row = csv.text.find("\r\n401,");
    ASSERT_NE(row, std::string::npos) << csv.text;
    std::vector<std::string> fields(1);
    for (size_t i = row + 2; i < csv.text.size() && csv.text[i] != '\r'; ++i) {
      if (csv.text[i] == ',') fields.emplace_back();
      else fields.back() += csv.text[i];
    }
    ASSERT_GT(fields.size(), 18u);
    EXPECT_EQ(fields[16], "3.7037037037037037") << csv.text;  // optimizer: 2 ms of 54 ms
    EXPECT_EQ(fields[17], "") << csv.text;
  }
}

}  // namespace
}  // namespace trainprof::collector
