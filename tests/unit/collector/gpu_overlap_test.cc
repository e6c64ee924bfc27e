// Kernel categories, their overlaps, the communication hidden behind computation (per process and
// per step) and the temporal breakdown (stats/kernel_categories.h, stats/temporal_breakdown.h),
// on synthetic CudaData with known timelines; and the three report formats of them.
//
// The timeline of OneProcess (µs from T0; HTA's definitions, docs/analysis.md):
//
//   computation  [0,100) [50,150)              [300,400)
//   communication          [100 ─────────────── 350)
//   memory                    [120,130)                   [500,600)
//   other                                                           [700,800)  (a "...Sync" kernel)
//   sync (host)  [900,1000)                                                    (not GPU work)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "collector/base/kernel_names.h"
#include "collector/render/render.h"
#include "collector/render/table_render.h"
#include "collector/report/report.h"
#include "collector/stats/kernel_categories.h"
#include "collector/stats/temporal_breakdown.h"
#include "phase_builder.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

namespace fmt = trainprof::format;
using test::kMs;
using test::PhaseThread;
using test::TraceBuilder;
using test::TraceOf;

constexpr uint64_t T0 = 1'000'000'000;
constexpr uint64_t kUs = 1'000;

constexpr const char* kCompute = "_Z6matmulPfS_S_i";
constexpr const char* kNccl = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)";
constexpr const char* kSyncKernel = "_ZN4cuda13DeviceSyncKernelEv";  // cuda::DeviceSyncKernel()

struct Builder {
  StringPool strings;
  Process process;
  Builder() { process.images.emplace_back(); }
  CudaData& cuda() { return process.images.back().cuda; }
  void Kernel(const char* name, uint64_t from_us, uint64_t to_us, uint64_t correlation = 0, uint32_t device = 0) {
    GpuKernel k;
    k.start_ns = T0 + from_us * kUs;
    k.end_ns = T0 + to_us * kUs;
    k.name = strings.Intern(name);
    k.correlation = correlation;
    k.device = device;
    cuda().kernels.push_back(k);
  }
  void Call(uint64_t at_us, uint64_t correlation) {
    CudaCall c;
    c.begin_ns = c.end_ns = T0 + at_us * kUs;
    c.correlation = correlation;
    c.returned = true;
    cuda().calls.push_back(c);
  }
  void Memcpy(uint64_t from_us, uint64_t to_us) {
    GpuMemcpy m;
    m.start_ns = T0 + from_us * kUs;
    m.end_ns = T0 + to_us * kUs;
    cuda().memcpys.push_back(m);
  }
  void Memset(uint64_t from_us, uint64_t to_us) {
    GpuMemset m;
    m.start_ns = T0 + from_us * kUs;
    m.end_ns = T0 + to_us * kUs;
    cuda().memsets.push_back(m);
  }
  CategorizedActivity Activity() const { return CategorizeActivity(process, strings); }
};

Builder OneProcess() {
  Builder b;
  b.Kernel(kCompute, 0, 100);
  b.Kernel(kCompute, 50, 150);
  b.Kernel(kCompute, 300, 400);
  b.Kernel(kNccl, 100, 350);
  b.Memcpy(120, 130);
  b.Memset(500, 600);
  b.Kernel(kSyncKernel, 700, 800);
  GpuSync s;
  s.start_ns = T0 + 900 * kUs;
  s.end_ns = T0 + 1000 * kUs;
  b.cuda().syncs.push_back(s);
  return b;
}

// HTA's get_kernel_type (hta/utils/utils.py) on the names as CUPTI (mangled) and Kineto
// (demangled) write them.
TEST(KernelCategories, CategoryOfAName) {
  for (const char* comm : {kNccl, "_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork",
                           "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                           "ncclDevKernel_Generic"}) {
    EXPECT_EQ(KernelCategoryOf(comm), KernelCategory::kCommunication) << comm;
    EXPECT_TRUE(IsNcclKernel(comm)) << comm;
  }
  for (const char* memory : {"Memcpy DtoD (Device -> Device)", "Memset (Device)", "dmaCopy"}) {
    EXPECT_EQ(KernelCategoryOf(memory), KernelCategory::kMemory) << memory;
  }
  for (const char* other : {kSyncKernel, "void at::native::fooMemcpyKernel<float>(float*)", "Context Sync"}) {
    EXPECT_EQ(KernelCategoryOf(other), KernelCategory::kOther) << other;
  }
  // "nccl" without "Kernel" after it is not communication (HTA's ^nccl.*Kernel), nor is a name
  // with nccl inside; both are computation.
  for (const char* comp : {kCompute, "ncclHelper(int)", "my_nccl_helper", "_ZN2at6native18elementwise_kernelILi128ELi2EEEviT_",
                           "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)"}) {
    EXPECT_EQ(KernelCategoryOf(comp), KernelCategory::kComputation) << comp;
    EXPECT_FALSE(IsNcclKernel(comp)) << comp;
  }
}

TEST(KernelCategories, ExclusiveTimeOfEachCombination) {
  const KernelCategoryBreakdown b = BreakDownCategories(OneProcess().Activity());
  EXPECT_EQ(b.computation_ns, 150 * kUs);  // [0,100) [350,400)
  EXPECT_EQ(b.communication_ns, 150 * kUs);  // [150,300)
  EXPECT_EQ(b.memory_ns, 100 * kUs);         // [500,600)
  EXPECT_EQ(b.computation_overlapping_communication_ns, 90 * kUs);  // [100,120) [130,150) [300,350)
  EXPECT_EQ(b.computation_overlapping_communication_overlapping_memory_ns, 10 * kUs);  // [120,130)
  EXPECT_EQ(b.communication_overlapping_memory_ns, 0u);
  EXPECT_EQ(b.computation_overlapping_memory_ns, 0u);
  EXPECT_EQ(b.communication_total_ns, 250 * kUs);
  EXPECT_EQ(b.communication_hidden_ns, 100 * kUs);
  ASSERT_TRUE(b.communication_hidden_percent);
  EXPECT_DOUBLE_EQ(*b.communication_hidden_percent, 40.0);
}

TEST(KernelCategories, NoCommunicationHasNoHiddenShare) {
  Builder b;
  b.Kernel(kCompute, 0, 10);
  b.Memcpy(5, 20);
  const KernelCategoryBreakdown k = BreakDownCategories(b.Activity());
  EXPECT_EQ(k.computation_ns, 5 * kUs);
  EXPECT_EQ(k.computation_overlapping_memory_ns, 5 * kUs);
  EXPECT_EQ(k.memory_ns, 10 * kUs);
  EXPECT_EQ(k.communication_total_ns, 0u);
  EXPECT_FALSE(k.communication_hidden_percent);  // HTA: NaN
}

TEST(TemporalBreakdown, IdleComputeAndNonComputeOfTheActiveSpan) {
  const TemporalBreakdown t = TemporalBreakdownOf(OneProcess().Activity());
  EXPECT_EQ(t.active_span_ns, 800 * kUs);  // first kernel to the "other" kernel's end; the sync is not GPU work
  EXPECT_EQ(t.idle_ns, 200 * kUs);         // [400,500) [600,700)
  EXPECT_EQ(t.compute_ns, 250 * kUs);      // [0,150) [300,400)
  EXPECT_EQ(t.non_compute_ns, 350 * kUs);  // communication, memory and the other kernel alone
  EXPECT_DOUBLE_EQ(*t.idle_percent, 25.0);
  EXPECT_DOUBLE_EQ(*t.compute_percent, 31.25);
  EXPECT_DOUBLE_EQ(*t.non_compute_percent, 43.75);
}

// Idle is measured on the union of every stream and device of the process (HTA merges all of a
// rank's GPU events), over all of its images.
TEST(TemporalBreakdown, UnionOverDevicesAndImages) {
  Builder b;
  b.Kernel(kCompute, 0, 100, 0, /*device=*/0);
  b.Kernel(kCompute, 50, 200, 0, /*device=*/1);
  b.process.images.emplace_back();  // after an exec
  b.Kernel(kNccl, 300, 400);
  const TemporalBreakdown t = TemporalBreakdownOf(b.Activity());
  EXPECT_EQ(t.active_span_ns, 400 * kUs);
  EXPECT_EQ(t.idle_ns, 100 * kUs);
  EXPECT_EQ(t.compute_ns, 200 * kUs);
  EXPECT_EQ(t.non_compute_ns, 100 * kUs);
}

TEST(TemporalBreakdown, NoActivity) {
  Builder b;
  const CategorizedActivity a = b.Activity();
  EXPECT_TRUE(a.empty());
  const TemporalBreakdown t = TemporalBreakdownOf(a);
  EXPECT_EQ(t.active_span_ns, 0u);
  EXPECT_FALSE(t.idle_percent);
}

// Steps [0,200) and [200,600): the NCCL kernels go to the step of their launch call, and their
// hidden part is their overlap with computation of any step.
TEST(KernelCategories, CommunicationPerStepByLaunch) {
  Builder b;
  b.Call(10, 1);
  b.Kernel(kNccl, 100, 250, 1);  // launched in step 0, runs into step 1's time
  b.Call(210, 2);
  b.Kernel(kNccl, 300, 400, 2);  // step 1
  b.Call(220, 3);
  b.Kernel(kNccl, 350, 450, 3);  // step 1, overlapping the other one
  b.Call(700, 4);
  b.Kernel(kNccl, 700, 720, 4);  // after the steps: in none
  b.Kernel(kNccl, 800, 900, 5);  // no launch call: in none
  b.Kernel(kCompute, 200, 260);
  b.Kernel(kCompute, 420, 500);
  const std::vector<StepCommunication> steps =
      CommunicationPerStep(b.Activity(), {{0, {T0, T0 + 200 * kUs}}, {1, {T0 + 200 * kUs, T0 + 600 * kUs}}});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, 0u);
  EXPECT_EQ(steps[0].communication_ns, 150 * kUs);
  EXPECT_EQ(steps[0].hidden_ns, 50 * kUs);  // [200,250)
  EXPECT_DOUBLE_EQ(*steps[0].hidden_percent, 100.0 / 3);
  EXPECT_EQ(steps[1].step, 1u);
  EXPECT_EQ(steps[1].communication_ns, 150 * kUs);  // [300,450)
  EXPECT_EQ(steps[1].hidden_ns, 30 * kUs);          // [420,450)
  EXPECT_DOUBLE_EQ(*steps[1].hidden_percent, 20.0);
  EXPECT_TRUE(CommunicationPerStep(b.Activity(), {}).empty());
}

// ----- the report -----

// A rank (pid 300, RANK=1) with 3 steps of 10 ms: each a 1 ms data wait, a forward with a compute
// kernel [2, 6) ms and a backward that launches an all-reduce [5, 9) ms: 1 ms of the 4 hidden.
void WriteRank(TraceBuilder* b) {
  b->Env("RANK", "1").Env("WORLD_SIZE", "2").HeaderEnd(fmt::EndKind::kExit, 0, T0 + 100 * kMs);
  PhaseThread m(*b, 300);
  const int gpu = b->Thread(399);
  b->GpuStatus(m.thread(), T0 + 1, fmt::GpuState::kOn);
  uint64_t correlation = 0;
  auto launch = [&](uint64_t at, uint64_t start, uint64_t end, const char* name) {
    b->ApiCall(m.thread(), at, at + 5 * kUs, "cudaLaunchKernel_v7000", ++correlation);
    b->Kernel(gpu, {.start = start, .end = end, .name = name, .correlation = correlation});
  };
  for (uint64_t s = T0 + 10 * kMs; s < T0 + 40 * kMs; s += 10 * kMs) {
    m.Range(s, s + kMs, fmt::Phase::kDataWait);
    m.Push(s + kMs, fmt::Phase::kForward);
    launch(s + kMs + 10 * kUs, s + 2 * kMs, s + 6 * kMs, kCompute);
    m.Pop(s + 4 * kMs);
    m.Push(s + 4 * kMs, fmt::Phase::kBackward);
    launch(s + 4 * kMs + 10 * kUs, s + 5 * kMs, s + 9 * kMs, "_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork");
    m.Pop(s + 9 * kMs);
  }
  m.EpochEnd(T0 + 40 * kMs, kMs);
}

TEST(GpuOverlapReport, JsonTextAndCsv) {
  TraceBuilder rank(300, 1, T0);
  WriteRank(&rank);
  const Report r = Analyze(TraceOf({&rank}), {});
  ASSERT_EQ(r.temporal_breakdown.size(), 1u);
  ASSERT_EQ(r.kernel_categories.size(), 1u);

  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(RenderJson(r));  // members in order
  const nlohmann::ordered_json& t = j["temporal_breakdown"][0];
  EXPECT_EQ(t["pid"], 300);
  EXPECT_EQ(t["rank"], 1);
  EXPECT_EQ(t["active_span_ns"], 27 * kMs);  // 12 ms to 39 ms
  EXPECT_EQ(t["idle_ns"], 6 * kMs);          // 3 ms between steps
  EXPECT_EQ(t["compute_ns"], 12 * kMs);
  EXPECT_EQ(t["non_compute_ns"], 9 * kMs);
  EXPECT_DOUBLE_EQ(t["idle_percent"].get<double>(), 600.0 / 27);
  EXPECT_DOUBLE_EQ(t["compute_percent"].get<double>(), 1200.0 / 27);
  EXPECT_DOUBLE_EQ(t["non_compute_percent"].get<double>(), 900.0 / 27);
  const std::vector<std::string> members = {"host", "pid", "rank", "active_span_ns", "idle_ns", "compute_ns",
                                            "non_compute_ns", "idle_percent", "compute_percent", "non_compute_percent"};
  std::vector<std::string> keys;
  for (const auto& [k, v] : t.items()) keys.push_back(k);
  EXPECT_EQ(keys, members);

  const nlohmann::ordered_json& k = j["kernel_categories"][0];
  EXPECT_EQ(k["rank"], 1);
  EXPECT_EQ(k["computation_ns"], 9 * kMs);
  EXPECT_EQ(k["communication_ns"], 9 * kMs);
  EXPECT_EQ(k["memory_ns"], 0);
  EXPECT_EQ(k["computation_overlapping_communication_ns"], 3 * kMs);
  EXPECT_EQ(k["communication_total_ns"], 12 * kMs);
  EXPECT_EQ(k["communication_hidden_ns"], 3 * kMs);
  EXPECT_DOUBLE_EQ(k["communication_hidden_percent"].get<double>(), 25.0);
  ASSERT_EQ(k["steps"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const nlohmann::ordered_json& s = k["steps"][i];
    EXPECT_EQ(s["step"], i);
    EXPECT_EQ(s["communication_ns"], 4 * kMs);
    EXPECT_EQ(s["hidden_ns"], kMs);
    EXPECT_DOUBLE_EQ(s["hidden_percent"].get<double>(), 25.0);
  }

  const std::string text = RenderText(r);
  EXPECT_NE(text.find("\nGPU temporal breakdown\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nGPU kernel categories\n"), std::string::npos);
  EXPECT_NE(text.find("  pid 300 (rank 1): median 25.0%, lowest 25.0% (step 0), over 3 steps with communication\n"),
            std::string::npos)
      << text;

  std::map<std::string, std::string> csv = test::CsvByName(r);
  EXPECT_EQ(csv["temporal_breakdown.csv"],
            "host,pid,rank,active_span_ns,idle_ns,compute_ns,non_compute_ns,idle_percent,compute_percent,"
            "non_compute_percent\r\n" +
                r.temporal_breakdown[0].host + ",300,1,27000000,6000000,12000000,9000000," +
                CsvNumber(600.0 / 27) + "," + CsvNumber(1200.0 / 27) + "," + CsvNumber(900.0 / 27) + "\r\n");
  EXPECT_EQ(csv["kernel_category_steps.csv"],
            "host,pid,rank,step,communication_ns,hidden_ns,hidden_percent\r\n" + r.temporal_breakdown[0].host +
                ",300,1,0,4000000,1000000,25\r\n" + r.temporal_breakdown[0].host + ",300,1,1,4000000,1000000,25\r\n" +
                r.temporal_breakdown[0].host + ",300,1,2,4000000,1000000,25\r\n");
  EXPECT_NE(csv["kernel_categories.csv"].find(",300,1,9000000,9000000,0,3000000,0,0,0,12000000,3000000,25\r\n"),
            std::string::npos)
      << csv["kernel_categories.csv"];
}

// Without GPU activity: empty JSON arrays and CSV headers, no text section.
TEST(GpuOverlapReport, NoGpuActivity) {
  TraceBuilder b(400, 1, T0);
  int t = b.Thread(400);
  b.Push(t, T0 + 1'000, "step");
  b.Pop(t, T0 + 2'000);
  b.HeaderEnd(fmt::EndKind::kExit, 0, T0 + kMs);
  const Report r = Analyze(TraceOf({&b}), {});
  const nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  EXPECT_TRUE(j["temporal_breakdown"].is_array() && j["temporal_breakdown"].empty());
  EXPECT_TRUE(j["kernel_categories"].is_array() && j["kernel_categories"].empty());
  EXPECT_EQ(RenderText(r).find("GPU temporal breakdown"), std::string::npos);
  std::map<std::string, std::string> csv = test::CsvByName(r);
  EXPECT_EQ(csv["kernel_category_steps.csv"], "host,pid,rank,step,communication_ns,hidden_ns,hidden_percent\r\n");
}

}  // namespace
}  // namespace trainprof::collector
