// CudaDigest: the per-name CUDA statistics the reader sums while it decodes, against the same
// statistics of the records it keeps (DigestOf), and its merging and ordering by hand.
#include "collector/model/cuda_digest.h"

#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
namespace fmt = trainprof::format;

constexpr uint64_t T0 = 1'000'000'000;

// API calls on two threads (the same names recorded on each: two refs a name), one failing, two
// never returning; kernels of two names and three configurations; copies of two kinds, one
// pageable; a memset; GPU overhead.
TraceBuilder Workload() {
  TraceBuilder b(500, 1, T0);
  int t = b.Thread(500), u = b.Thread(501), g = b.Thread(502);
  uint64_t now = T0 + 1'000, corr = 1;
  for (int i = 0; i < 40; ++i) {
    const int th = i % 3 == 0 ? u : t;
    b.ApiCall(th, now, now + 1'000 + 37 * i, "cudaLaunchKernel_v7000", corr, i == 7 ? 700 : 0);
    b.Kernel(g, {.start = now + 2'000, .end = now + 2'000 + 500 + 11 * i,
                 .name = i % 4 ? "_Z6matmulPfS_S_i" : "_Z4axpyfPfS_",
                 .correlation = corr, .grid = {uint32_t(i % 3 ? 64 : 128), 1, 1}});
    ++corr;
    b.ApiCall(th, now + 3'000, now + 3'500 + i, "cudaMemcpyAsync_v3020", corr);
    b.Memcpy(g, {.start = now + 4'000, .end = now + 4'300 + i, .kind = i % 2 ? fmt::MemcpyKind::kHtoD : fmt::MemcpyKind::kDtoH,
                 .bytes = 1000u + i, .correlation = corr,
                 .src = i == 5 ? fmt::MemoryKind::kPageable : fmt::MemoryKind::kPinned});
    ++corr;
    now += 10'000;
  }
  b.Memset(g, {.start = now, .end = now + 400, .bytes = 4096, .correlation = corr++});
  b.Overhead(g, now + 500, now + 1'500, 1, 1, 500);
  b.Overhead(g, now + 2'000, now + 2'250, 1, 1, 500);
  b.ApiEnter(u, now + 3'000, "cudaStreamSynchronize_v3020", corr++);  // never returns
  b.ApiEnter(t, now + 2'500, "cudaStreamSynchronize_v3020", corr++);  // never returns, earlier
  return b;
}

std::string Describe(const SampleStats& s) {
  return std::to_string(s.count) + " total " + std::to_string(s.total) + " min " + std::to_string(s.min) + " median " +
         std::to_string(s.median) + " max " + std::to_string(s.max) + " mean " + std::to_string(s.mean) + " sd " +
         std::to_string(s.std);
}

void ExpectSameDigest(const CudaDigest& a, const CudaDigest& b, const StringPool& pool) {
  EXPECT_EQ(a.calls(), b.calls());
  EXPECT_EQ(a.overhead_ns(), b.overhead_ns());
  ASSERT_EQ(a.api().size(), b.api().size());
  for (size_t i = 0; i < a.api().size(); ++i) {
    const CudaApiSamples &x = a.api()[i], &y = b.api()[i];
    SCOPED_TRACE(std::string(pool.Get(x.name)));
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.api, y.api);
    EXPECT_EQ(Describe(x.time.Stats()), Describe(y.time.Stats()));
    EXPECT_EQ(x.errors, y.errors);
    EXPECT_EQ(x.unfinished, y.unfinished);
    EXPECT_EQ(x.first_unfinished_ns, y.first_unfinished_ns);
  }
  ASSERT_EQ(a.kernels().size(), b.kernels().size());
  for (size_t i = 0; i < a.kernels().size(); ++i) {
    EXPECT_EQ(a.kernels()[i].name, b.kernels()[i].name);
    EXPECT_EQ(Describe(a.kernels()[i].time.Stats()), Describe(b.kernels()[i].time.Stats()));
    EXPECT_EQ(a.kernels()[i].grids, b.kernels()[i].grids);
    EXPECT_EQ(a.kernels()[i].blocks, b.kernels()[i].blocks);
  }
  ASSERT_EQ(a.memory().size(), b.memory().size());
  for (size_t i = 0; i < a.memory().size(); ++i) {
    const MemoryOpSamples &x = a.memory()[i], &y = b.memory()[i];
    EXPECT_EQ(x.memset, y.memset);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(Describe(x.time.Stats()), Describe(y.time.Stats()));
    EXPECT_EQ(Describe(x.size.Stats()), Describe(y.size.Stats()));
    EXPECT_EQ(x.pageable_count, y.pageable_count);
    EXPECT_EQ(x.pageable_bytes, y.pageable_bytes);
  }
}

TEST(CudaDigest, StreamedWhileReadingEqualsTheDigestOfTheKeptRecords) {
  const TraceBuilder b = Workload();
  StringPool pool;
  ReadResult r = ReadTraceBytes(b.Build(), b.FileName(), &pool);
  ASSERT_TRUE(r.image);
  ASSERT_TRUE(r.status.errors.empty()) << r.status.errors[0];
  const CudaDigest& streamed = r.image->cuda_digest;
  ExpectSameDigest(streamed, DigestOf(r.image->cuda), pool);

  // The values themselves.
  EXPECT_EQ(streamed.calls(), 82u);
  EXPECT_EQ(streamed.overhead_ns(), 1'250u);
  ASSERT_EQ(streamed.api().size(), 3u);  // one row a name, whichever thread recorded it
  const CudaApiSamples* launch = nullptr;
  const CudaApiSamples* sync = nullptr;
  for (const CudaApiSamples& row : streamed.api()) {
    if (pool.Get(row.name) == "cudaLaunchKernel_v7000") launch = &row;
    if (pool.Get(row.name) == "cudaStreamSynchronize_v3020") sync = &row;
  }
  ASSERT_TRUE(launch && sync);
  EXPECT_EQ(launch->time.count(), 40u);
  EXPECT_EQ(launch->time.min(), 1'000u);
  EXPECT_EQ(launch->time.max(), 1'000u + 37 * 39);
  EXPECT_EQ(launch->errors, 1u);
  EXPECT_EQ(sync->time.count(), 0u);
  EXPECT_EQ(sync->unfinished, 2u);
  EXPECT_EQ(sync->first_unfinished_ns, T0 + 1'000 + 400'000 + 2'500);
  ASSERT_EQ(streamed.kernels().size(), 2u);
  uint64_t kernels = 0;
  for (const KernelSamples& k : streamed.kernels()) {
    kernels += k.time.count();
    if (pool.Get(k.name) == "_Z4axpyfPfS_") {
      EXPECT_EQ(k.time.count(), 10u);
      // i = 0, 4, ..., 36: grid 128 where i % 3 == 0 (0, 12, 24, 36), else 64.
      EXPECT_EQ(k.grids, (std::map<LaunchDim, uint64_t>{{{64, 1, 1}, 6}, {{128, 1, 1}, 4}}));
      EXPECT_EQ(k.blocks, (std::map<LaunchDim, uint64_t>{{{128, 1, 1}, 10}}));
    }
  }
  EXPECT_EQ(kernels, 40u);
  ASSERT_EQ(streamed.memory().size(), 3u);  // HtoD, DtoH, then the memset
  EXPECT_TRUE(streamed.memory()[2].memset);
  EXPECT_EQ(streamed.memory()[2].size.total(), 4096u);
  uint64_t pageable = 0;
  for (const MemoryOpSamples& m : streamed.memory()) pageable += m.pageable_count;
  EXPECT_EQ(pageable, 1u);
}

TEST(CudaDigest, NotSummedWhenTheReaderIsAskedNotTo) {
  const TraceBuilder b = Workload();
  StringPool pool;
  ReadResult r = ReadTraceBytes(b.Build(), b.FileName(), &pool, {.cuda_digest = false});
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.image->cuda.calls.size(), 82u);  // the records are still kept
  EXPECT_EQ(r.image->cuda_digest.calls(), 0u);
  EXPECT_TRUE(r.image->cuda_digest.api().empty());
}

TEST(CudaDigest, RemapMergesRowsWhoseNamesBecomeOneAndSortsThem) {
  CudaDigest d;
  // Refs 3 and 5 are one name (recorded by two threads), ref 4 another.
  d.Call({.begin_ns = 100, .end_ns = 150, .name = 5, .returned = true});
  d.Call({.begin_ns = 200, .end_ns = 230, .name = 4, .status = 2, .returned = true});
  d.Call({.begin_ns = 300, .end_ns = 390, .name = 3, .returned = true});
  d.Call({.begin_ns = 900, .end_ns = 900, .name = 3, .returned = false});
  d.Call({.begin_ns = 800, .end_ns = 800, .name = 5, .returned = false});
  d.Kernel(test::At({.start_ns = 0, .end_ns = 10}, GpuKernel{.name = 5}), {.grid = {1, 1, 1}, .block = {32, 1, 1}});
  d.Kernel(test::At({.start_ns = 0, .end_ns = 30}, GpuKernel{.name = 3}), {.grid = {2, 1, 1}, .block = {32, 1, 1}});
  d.Remap({0, 0, 0, 20, 10, 20});
  ASSERT_EQ(d.api().size(), 2u);
  EXPECT_EQ(d.api()[0].name, 10u);
  EXPECT_EQ(d.api()[0].errors, 1u);
  EXPECT_EQ(d.api()[1].name, 20u);
  EXPECT_EQ(d.api()[1].time.count(), 2u);
  EXPECT_EQ(d.api()[1].time.total(), 140u);
  EXPECT_EQ(d.api()[1].unfinished, 2u);
  EXPECT_EQ(d.api()[1].first_unfinished_ns, 800u);
  EXPECT_EQ(d.calls(), 5u);
  ASSERT_EQ(d.kernels().size(), 1u);
  EXPECT_EQ(d.kernels()[0].time.total(), 40u);
  EXPECT_EQ(d.kernels()[0].grids, (std::map<LaunchDim, uint64_t>{{{1, 1, 1}, 1}, {{2, 1, 1}, 1}}));
  EXPECT_EQ(d.kernels()[0].blocks, (std::map<LaunchDim, uint64_t>{{{32, 1, 1}, 2}}));

  // After the remap, more records go to the merged rows.
  d.Call({.begin_ns = 1'000, .end_ns = 1'010, .name = 20, .returned = true});
  EXPECT_EQ(d.api()[1].time.count(), 3u);
}

TEST(CudaDigest, PastTheExactLimitCountsAndTotalsStayExact) {
  CudaDigest d;
  uint64_t total = 0;
  const uint64_t n = 3 * DurationSummary::kExactSamples;
  for (uint64_t i = 0; i < n; ++i) {
    d.Kernel(test::At({.start_ns = 0, .end_ns = 1'000 + i}, GpuKernel{.name = 1}), {});
    total += 1'000 + i;
  }
  d.Remap({0, 1});
  ASSERT_EQ(d.kernels().size(), 1u);
  const SampleStats s = d.kernels()[0].time.Stats();
  EXPECT_EQ(s.count, n);
  EXPECT_EQ(s.total, total);
  EXPECT_EQ(s.min, 1'000u);
  EXPECT_EQ(s.max, 1'000 + n - 1);
  EXPECT_FALSE(s.exact);
  const double true_median = 1'000 + (n - 1) / 2.0;
  EXPECT_NEAR(s.median, true_median, true_median * DurationSummary::kRelativeError);
}

}  // namespace
}  // namespace trainprof::collector
