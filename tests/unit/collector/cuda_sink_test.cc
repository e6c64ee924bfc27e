// The reader's CUDA sink (model/cuda_sink.h): every whole call and valid GPU record reaches it,
// with the same fields as the kept ones (a call's stack, unreturned calls, a reused correlation
// id), and with KeepCuda::kNone nothing is kept while counters and definitions stay (kStackedCalls: only the
// calls with a stack).
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
namespace fmt = trainprof::format;

constexpr uint64_t T0 = 1'000'000'000;

// Keeps what it is given, names resolved as the reader resolves CudaData's.
struct Collect final : CudaSink {
  CudaData got;
  int resolved = 0;
  void Call(const CudaCall& c) override { got.calls.push_back(c); }
  void Kernel(const GpuKernel& k, const KernelConfig& config) override {
    got.kernels.push_back(k);
    got.kernels.back().config = got.kernel_configs.Intern(config);
  }
  void Memcpy(const GpuMemcpy& m) override { got.memcpys.push_back(m); }
  void Memset(const GpuMemset& m) override { got.memsets.push_back(m); }
  void Sync(const GpuSync& s) override { got.syncs.push_back(s); }
  void Overhead(const GpuOverhead& o) override { got.overheads.push_back(o); }
  void Resolve(const std::vector<StringId>& pool_of_ref) override {
    ++resolved;
    auto map = [&](StringId& ref) { ref = ref < pool_of_ref.size() ? pool_of_ref[ref] : 0; };
    for (CudaCall& c : got.calls) map(c.name);
    for (GpuKernel& k : got.kernels) map(k.name);
  }
};

auto CallKey(const CudaCall& c) {
  return std::make_tuple(c.begin_ns, c.end_ns, c.correlation, c.name, c.thread, c.cbid, c.status, c.api, c.returned,
                         c.stack);
}

// Two threads of calls (one nested driver call, one failing, one with a stack, one never
// returned, a correlation id reused while open, an exit nothing opened) and GPU records of every
// kind, one with reversed times.
TraceBuilder Planted(uint64_t* stack_id = nullptr) {
  TraceBuilder b(300, 1, T0);
  const int t = b.Thread(300), u = b.Thread(301), g = b.Thread(302);
  b.GpuStatus(t, T0 + 100, fmt::GpuState::kOn, 0, 18, 12040);
  b.Device(g, 0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85'000'000'000);
  const uint64_t stack = b.Stack(t, {0x401000, 0x402000});
  if (stack_id != nullptr) *stack_id = stack;
  b.ApiCall(t, T0 + 1'000, T0 + 6'000, "cudaLaunchKernel_v7000", 11);
  b.ApiCall(t, T0 + 7'000, T0 + 9'500, "cuMemcpyDtoHAsync_v2", 12, 0, fmt::CudaApi::kDriver);
  b.ApiEnter(t, T0 + 10'000, "cudaStreamSynchronize_v3020", 13);
  b.ApiExit(t, T0 + 12'000, 13);
  b.EventStack(t, stack);
  b.ApiCall(t, T0 + 13'000, T0 + 13'400, "cudaMemsetAsync_v3020", 14, 700);
  b.ApiEnter(u, T0 + 2'000, "cudaLaunchKernel_v7000", 21);  // reused while open: never returned
  b.ApiEnter(u, T0 + 3'000, "cudaLaunchKernel_v7000", 21);
  b.ApiExit(u, T0 + 4'000, 21);
  b.ApiExit(u, T0 + 4'500, 99);  // nothing open
  b.ApiEnter(u, T0 + 5'000, "cudaDeviceSynchronize_v3020", 22);  // never returned
  b.Kernel(g, {.start = T0 + 8'000, .end = T0 + 20'000, .name = "_Z6matmulPfS_S_i", .correlation = 11, .stream = 7,
               .grid = {256, 2, 1}, .block = {128, 1, 1}});
  b.Kernel(g, {.start = T0 + 9'000, .end = T0 + 8'500, .name = "_Z8reversedv", .correlation = 21});
  b.Memcpy(g, {.start = T0 + 21'000, .end = T0 + 23'000, .kind = fmt::MemcpyKind::kDtoH, .bytes = 4,
               .correlation = 12});
  b.Memset(g, {.start = T0 + 24'000, .end = T0 + 24'500, .bytes = 1 << 20, .correlation = 14, .value = 0});
  b.Sync(g, T0 + 10'100, T0 + 11'900, fmt::SyncType::kStreamSynchronize, 13, 7);
  b.Overhead(g, T0 + 40'000, T0 + 45'000, 2, 1, 300);
  return b;
}

ReadResult Read(const TraceBuilder& b, StringPool* pool, const ReadOptions& o) {
  return ReadTraceBytes(b.Build(), b.FileName(), pool, o);
}

TEST(CudaSink, SeesWhatTheReaderKeeps) {
  uint64_t stack = 0;
  const TraceBuilder b = Planted(&stack);
  StringPool pool;
  Collect sink;
  ReadResult r = Read(b, &pool, {.cuda_sink = &sink});
  ASSERT_TRUE(r.image);
  const CudaData& kept = r.image->cuda;
  EXPECT_EQ(sink.resolved, 1);
  ASSERT_EQ(kept.calls.size(), 7u);  // 4 on thread t, 3 on u (id 21 twice, 22 never returned)
  ASSERT_EQ(sink.got.calls.size(), kept.calls.size());
  std::vector<CudaCall> calls = sink.got.calls;  // file order; the kept ones are by enter time
  std::stable_sort(calls.begin(), calls.end(), [](const CudaCall& a, const CudaCall& b) { return a.begin_ns < b.begin_ns; });
  for (size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(CallKey(calls[i]), CallKey(kept.calls[i])) << "call " << i;

  // Thread t's calls come first, each at its exit; then thread u's: the first call with id 21 when
  // the id is reused, its successor at its exit; the one never returned at the end.
  EXPECT_EQ(pool.Get(sink.got.calls[0].name), "cudaLaunchKernel_v7000");
  EXPECT_EQ(sink.got.calls[2].correlation, 13u);
  EXPECT_EQ(sink.got.calls[2].stack, stack) << "the EVENT_STACK after the exit";
  EXPECT_EQ(sink.got.calls[3].status, 700u);
  EXPECT_EQ(sink.got.calls[4].begin_ns, T0 + 2'000);
  EXPECT_FALSE(sink.got.calls[4].returned);
  EXPECT_EQ(sink.got.calls[5].begin_ns, T0 + 3'000);
  EXPECT_TRUE(sink.got.calls[5].returned);
  EXPECT_EQ(sink.got.calls[5].end_ns, T0 + 4'000);
  EXPECT_EQ(pool.Get(sink.got.calls[6].name), "cudaDeviceSynchronize_v3020");
  EXPECT_FALSE(sink.got.calls[6].returned);
  EXPECT_EQ(kept.unmatched_exits, 1u);

  ASSERT_EQ(sink.got.kernels.size(), 1u);  // the reversed one is counted, not passed on
  EXPECT_EQ(kept.invalid_timestamps, 1u);
  EXPECT_EQ(pool.Get(sink.got.kernels[0].name), "_Z6matmulPfS_S_i");
  EXPECT_EQ(sink.got.kernels[0].start_ns, kept.kernels[0].start_ns);
  EXPECT_EQ(sink.got.kernel_configs[sink.got.kernels[0].config].grid[0], 256u);
  EXPECT_EQ(sink.got.kernels[0].stream, 7u);
  ASSERT_EQ(sink.got.memcpys.size(), 1u);
  EXPECT_EQ(sink.got.memcpys[0].bytes, 4u);
  EXPECT_EQ(sink.got.memcpys[0].kind, fmt::MemcpyKind::kDtoH);
  ASSERT_EQ(sink.got.memsets.size(), 1u);
  EXPECT_EQ(sink.got.memsets[0].bytes, 1u << 20);
  ASSERT_EQ(sink.got.syncs.size(), 1u);
  EXPECT_EQ(sink.got.syncs[0].correlation, 13u);
  ASSERT_EQ(sink.got.overheads.size(), 1u);
  EXPECT_EQ(sink.got.overheads[0].end_ns - sink.got.overheads[0].start_ns, 5'000u);
}

TEST(CudaSink, NothingKeptWhenAskedAndTheCountersStay) {
  const TraceBuilder b = Planted();
  StringPool kept_pool, pool;
  ReadResult kept = Read(b, &kept_pool, {});
  Collect sink;
  ReadResult r = Read(b, &pool, {.cuda_sink = &sink, .keep_cuda = KeepCuda::kNone});
  ASSERT_TRUE(r.image);
  const CudaData& c = r.image->cuda;
  EXPECT_TRUE(c.calls.empty());
  EXPECT_TRUE(c.kernels.empty());
  EXPECT_TRUE(c.memcpys.empty());
  EXPECT_TRUE(c.memsets.empty());
  EXPECT_TRUE(c.syncs.empty());
  EXPECT_TRUE(c.overheads.empty());
  EXPECT_EQ(c.unmatched_exits, 1u);
  EXPECT_EQ(c.invalid_timestamps, 1u);
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(pool.Get(c.devices[0].name), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c.status.size(), 1u);
  EXPECT_TRUE(c.any());
  ASSERT_EQ(sink.got.calls.size(), kept.image->cuda.calls.size());
  std::vector<CudaCall> calls = sink.got.calls;
  std::stable_sort(calls.begin(), calls.end(), [](const CudaCall& a, const CudaCall& b) { return a.begin_ns < b.begin_ns; });
  for (size_t i = 0; i < calls.size(); ++i) {
    CudaCall k = kept.image->cuda.calls[i];
    EXPECT_EQ(pool.Get(calls[i].name), kept_pool.Get(k.name)) << "call " << i;
    k.name = calls[i].name;
    EXPECT_EQ(CallKey(calls[i]), CallKey(k)) << "call " << i;
  }
  EXPECT_EQ(sink.got.kernels.size(), 1u);
  EXPECT_EQ(sink.got.memcpys.size(), 1u);
}

}  // namespace
}  // namespace trainprof::collector
