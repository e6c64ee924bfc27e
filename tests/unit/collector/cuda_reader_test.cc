// The reader on CUDA records (format v2, tags 48..59): every field decoded, enter/exit matched by
// correlation, GPU times from the chunk base, invalid timestamps counted and left out, version 1.
#include <gtest/gtest.h>

#include <cstddef>
#include <algorithm>
#include <cstring>
#include <random>

#include "collector/read/cuda_records.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
namespace fmt = trainprof::format;

ReadResult Read(const TraceBuilder& b, StringPool* pool) { return ReadTraceBytes(b.Build(), b.FileName(), pool); }

constexpr uint64_t T0 = 1'000'000'000;

TEST(CudaReader, EveryRecordKindDecoded) {
  TraceBuilder b(300, 1, T0);
  int t = b.Thread(300), g = b.Thread(301);
  b.GpuStatus(t, T0 + 100, fmt::GpuState::kOn, 0, 18, 12040);
  b.Device(g, 0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85'000'000'000);
  b.Context(g, 1, 0);
  b.ApiCall(t, T0 + 1'000, T0 + 6'000, "cudaLaunchKernel_v7000", 11);
  b.ApiCall(t, T0 + 7'000, T0 + 9'500, "cuMemcpyDtoHAsync_v2", 12, 0, fmt::CudaApi::kDriver);
  b.ApiCall(t, T0 + 10'000, T0 + 10'400, "cudaMemsetAsync_v3020", 13, 700);  // cudaErrorLaunchFailure-like
  b.Kernel(g, {.start = T0 + 8'000,
               .end = T0 + 20'000,
               .name = "_Z6matmulPfS_S_i",
               .correlation = 11,
               .device = 0,
               .context = 1,
               .stream = 7,
               .grid = {256, 2, 1},
               .block = {128, 1, 1},
               .registers = 40,
               .static_shared = 1024,
               .dynamic_shared = 4096,
               .graph = 0,
               .launch = fmt::KernelLaunch::kRegular});
  b.Memcpy(g, {.start = T0 + 21'000,
               .end = T0 + 23'000,
               .kind = fmt::MemcpyKind::kDtoH,
               .bytes = 4,
               .correlation = 12,
               .src = fmt::MemoryKind::kDevice,
               .dst = fmt::MemoryKind::kPageable,
               .async = true});
  b.Memset(g, {.start = T0 + 24'000, .end = T0 + 24'500, .bytes = 1 << 20, .correlation = 13, .value = 0});
  b.Sync(g, T0 + 9'600, T0 + 23'100, fmt::SyncType::kStreamSynchronize, 14, 7);
  b.Sync(g, T0 + 30'000, T0 + 31'000, fmt::SyncType::kContextSynchronize, 15, -1);
  b.Overhead(g, T0 + 40'000, T0 + 45'000, 2, 1, 300);
  b.GpuDropped(t, T0 + 50'000, 17);
  b.GpuDropped(t, T0 + 50'001, 3);
  b.Capture(t, T0 + 60'000, false, fmt::CaptureReason::kCudaProfilerApi);
  b.GpuStatus(t, T0 + 70'000, fmt::GpuState::kFlushed, 0, 18, 12040);

  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  ASSERT_TRUE(r.status.errors.empty()) << r.status.errors[0];
  const CudaData& c = r.image->cuda;
  EXPECT_TRUE(c.any());
  EXPECT_TRUE(c.any_activity());

  ASSERT_EQ(c.calls.size(), 3u);
  const CudaCall& launch = c.calls[0];
  EXPECT_EQ(pool.Get(launch.name), "cudaLaunchKernel_v7000");
  EXPECT_EQ(launch.begin_ns, T0 + 1'000);
  EXPECT_EQ(launch.end_ns, T0 + 6'000);
  EXPECT_EQ(launch.duration(), 5'000u);
  EXPECT_EQ(launch.correlation, 11u);
  EXPECT_EQ(launch.api, fmt::CudaApi::kRuntime);
  EXPECT_EQ(launch.thread, 0u);
  EXPECT_TRUE(launch.returned);
  EXPECT_EQ(launch.status, 0u);
  EXPECT_EQ(c.calls[1].api, fmt::CudaApi::kDriver);
  EXPECT_EQ(pool.Get(c.calls[1].name), "cuMemcpyDtoHAsync_v2");
  EXPECT_EQ(c.calls[2].status, 700u);

  ASSERT_EQ(c.kernels.size(), 1u);
  const GpuKernel& k = c.kernels[0];
  EXPECT_EQ(k.start_ns, T0 + 8'000);  // chunk base (the drainer's, T0) + zs
  EXPECT_EQ(k.end_ns, T0 + 20'000);
  EXPECT_EQ(pool.Get(k.name), "_Z6matmulPfS_S_i");
  EXPECT_EQ(k.correlation, 11u);
  EXPECT_EQ(k.device, 0u);
  EXPECT_EQ(k.context, 1u);
  EXPECT_EQ(k.stream, 7u);
  const KernelConfig& config = c.kernel_configs[k.config];
  EXPECT_NE(k.config, 0u);  // index 0 is the all-zero configuration
  EXPECT_EQ(config.grid[0], 256u);
  EXPECT_EQ(config.grid[1], 2u);
  EXPECT_EQ(config.block[0], 128u);
  EXPECT_EQ(config.registers, 40u);
  EXPECT_EQ(config.static_shared, 1024u);
  EXPECT_EQ(config.dynamic_shared, 4096u);
  EXPECT_EQ(config.launch, fmt::KernelLaunch::kRegular);

  ASSERT_EQ(c.memcpys.size(), 1u);
  const GpuMemcpy& m = c.memcpys[0];
  EXPECT_EQ(m.start_ns, T0 + 21'000);
  EXPECT_EQ(m.duration(), 2'000u);
  EXPECT_EQ(m.kind, fmt::MemcpyKind::kDtoH);
  EXPECT_EQ(m.bytes, 4u);
  EXPECT_EQ(m.src_memory, fmt::MemoryKind::kDevice);
  EXPECT_EQ(m.dst_memory, fmt::MemoryKind::kPageable);
  EXPECT_TRUE(m.pageable());
  EXPECT_TRUE(m.async);

  ASSERT_EQ(c.memsets.size(), 1u);
  EXPECT_EQ(c.memsets[0].bytes, 1u << 20);
  EXPECT_EQ(c.memsets[0].duration(), 500u);
  EXPECT_EQ(c.memsets[0].memory, fmt::MemoryKind::kDevice);

  ASSERT_EQ(c.syncs.size(), 2u);
  EXPECT_EQ(c.syncs[0].type, fmt::SyncType::kStreamSynchronize);
  EXPECT_TRUE(c.syncs[0].has_stream);
  EXPECT_EQ(c.syncs[0].stream, 7u);
  EXPECT_EQ(c.syncs[0].correlation, 14u);
  EXPECT_FALSE(c.syncs[1].has_stream);
  EXPECT_EQ(c.syncs[1].type, fmt::SyncType::kContextSynchronize);

  ASSERT_EQ(c.overheads.size(), 1u);
  EXPECT_EQ(c.overheads[0].end_ns - c.overheads[0].start_ns, 5'000u);
  EXPECT_EQ(c.overheads[0].kind, 2u);
  EXPECT_EQ(c.overheads[0].object_id, 300u);

  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(pool.Get(c.devices[0].name), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c.devices[0].cc_major, 9u);
  EXPECT_EQ(c.devices[0].sm_count, 132u);
  EXPECT_EQ(c.devices[0].global_memory, 85'000'000'000u);
  ASSERT_EQ(c.contexts.size(), 1u);
  EXPECT_EQ(c.contexts[0].id, 1u);
  EXPECT_EQ(c.contexts[0].device, 0u);

  EXPECT_EQ(c.records_dropped, 20u);
  EXPECT_EQ(c.invalid_timestamps, 0u);
  EXPECT_EQ(c.unmatched_exits, 0u);
  ASSERT_EQ(c.status.size(), 2u);
  EXPECT_EQ(c.status[0].state, fmt::GpuState::kOn);
  EXPECT_EQ(c.status[0].cupti_version, 18u);
  EXPECT_EQ(c.status[0].driver_version, 12040u);
  EXPECT_EQ(c.status[0].time_ns, T0 + 100);
  EXPECT_EQ(c.status[1].state, fmt::GpuState::kFlushed);
  ASSERT_EQ(c.captures.size(), 1u);
  EXPECT_FALSE(c.captures[0].on);
  EXPECT_EQ(c.captures[0].reason, static_cast<uint32_t>(fmt::CaptureReason::kCudaProfilerApi));
  EXPECT_EQ(c.captures[0].time_ns, T0 + 60'000);
  // 3 strings... every record counted; timed CUDA records move the image's last record time.
  EXPECT_EQ(r.image->records, b.records());
  EXPECT_EQ(r.image->last_record_ns, T0 + 70'000);
}

// An enter without exit is a call that never returned: kept, flagged; an exit whose enter is not
// there is counted.
TEST(CudaReader, EnterWithoutExitIsKeptAsUnfinished) {
  TraceBuilder b(300, 1, T0);
  int t = b.Thread(300), u = b.Thread(302);
  b.ApiCall(t, T0 + 1'000, T0 + 2'000, "cudaMalloc_v3020", 1);
  b.ApiEnter(t, T0 + 3'000, "cudaStreamSynchronize_v3020", 2);  // the process was killed inside it
  b.ApiEnter(u, T0 + 3'500, "cudaLaunchKernel_v7000", 3);
  b.ApiExit(u, T0 + 4'000, 3, 0);
  b.ApiExit(u, T0 + 5'000, 99, 0);  // no enter with correlation 99
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.errors.empty());
  const CudaData& c = r.image->cuda;
  ASSERT_EQ(c.calls.size(), 3u);
  EXPECT_TRUE(c.calls[0].returned);
  const CudaCall& hung = c.calls[1];  // by enter time
  EXPECT_EQ(pool.Get(hung.name), "cudaStreamSynchronize_v3020");
  EXPECT_FALSE(hung.returned);
  EXPECT_EQ(hung.begin_ns, T0 + 3'000);
  EXPECT_EQ(hung.end_ns, T0 + 3'000);
  EXPECT_EQ(hung.status, 0u);
  EXPECT_TRUE(c.calls[2].returned);
  EXPECT_EQ(c.calls[2].thread, 1u);
  EXPECT_EQ(c.calls[2].duration(), 500u);
  EXPECT_EQ(c.unmatched_exits, 1u);
}

// Damaged bytes of a thread mark the calls open on it then as exit_lost (their exit may have been
// in the bytes skipped); calls open on other threads, and calls entered after, are not marked.
TEST(CudaReader, DamageMarksTheThreadsOpenCallsExitLost) {
  TraceBuilder b(300, 1, T0);
  int t = b.Thread(300), u = b.Thread(302);
  b.ApiEnter(t, T0 + 1'000, "cudaStreamSynchronize_v3020", 1);
  b.ApiEnter(u, T0 + 1'500, "cudaDeviceSynchronize_v3020", 2);
  b.Raw(t, {200, 1, 2, 3});
  b.ApiExit(t, T0 + 2'000, 1, 0);  // skipped with the rest of the chunk
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_FALSE(r.status.errors.empty());
  const CudaData& c = r.image->cuda;
  ASSERT_EQ(c.calls.size(), 2u);
  EXPECT_EQ(pool.Get(c.calls[0].name), "cudaStreamSynchronize_v3020");
  EXPECT_FALSE(c.calls[0].returned);
  EXPECT_TRUE(c.calls[0].exit_lost);
  EXPECT_FALSE(c.calls[1].returned);
  EXPECT_FALSE(c.calls[1].exit_lost);
  ASSERT_EQ(r.image->cuda_digest.api().size(), 2u);
  uint64_t lost = 0, unfinished = 0;
  for (const CudaApiSamples& row : r.image->cuda_digest.api()) {
    lost += row.exit_lost;
    unfinished += row.unfinished;
  }
  EXPECT_EQ(lost, 1u);
  EXPECT_EQ(unfinished, 1u);
}

// A whole chunk lost (its header damaged, or its pages zeroed) leaves a gap in the thread's chunk
// sequence: the calls open on that thread before the gap are exit_lost; a call entered after the
// gap and still open at the end is one the process ended inside.
TEST(CudaReader, ALostChunkMarksTheThreadsOpenCallsExitLost) {
  for (const uint32_t magic : {0u, 0xdeadbeefu}) {
    SCOPED_TRACE(magic);
    TraceBuilder b(300, 1, T0);
    int t = b.Thread(300);
    b.ApiEnter(t, T0 + 1'000, "cudaStreamSynchronize_v3020", 1);
    b.NewChunk(t);
    b.ApiExit(t, T0 + 2'000, 1, 0);  // in the chunk that is lost
    b.NewChunk(t);
    b.ApiCall(t, T0 + 3'000, T0 + 4'000, "cudaMalloc_v3020", 2);
    b.ApiEnter(t, T0 + 5'000, "cudaDeviceSynchronize_v3020", 3);
    ASSERT_EQ(b.chunks(), 3u);
    std::vector<uint8_t> bytes = b.Build();
    const size_t lost = fmt::kHeaderRegionSize + size_t{fmt::kDefaultChunkSize};  // chunk 1's header
    std::memcpy(bytes.data() + lost + offsetof(fmt::ChunkHeader, magic), &magic, sizeof magic);
    StringPool pool;
    ReadResult r = ReadTraceBytes(bytes, b.FileName(), &pool);
    ASSERT_TRUE(r.image);
    // Zeros read as an unclaimed slot, said as a number missing from the thread's chunks; a
    // bad magic said as itself.
    ASSERT_EQ(r.status.errors.size(), 1u);
    EXPECT_EQ(r.status.errors[0].rfind(magic == 0 ? "1 chunk missing from their thread's sequence" : "chunk 1: bad chunk magic", 0),
              0u)
        << r.status.errors[0];
    const CudaData& c = r.image->cuda;
    ASSERT_EQ(c.calls.size(), 3u);
    EXPECT_EQ(pool.Get(c.calls[0].name), "cudaStreamSynchronize_v3020");
    EXPECT_FALSE(c.calls[0].returned);
    EXPECT_TRUE(c.calls[0].exit_lost);
    EXPECT_TRUE(c.calls[1].returned);
    EXPECT_EQ(pool.Get(c.calls[2].name), "cudaDeviceSynchronize_v3020");
    EXPECT_FALSE(c.calls[2].returned);
    EXPECT_FALSE(c.calls[2].exit_lost);
    EXPECT_EQ(c.unmatched_exits, 0u);
  }
}

// Zero and reversed GPU timestamps are counted, and no such record reaches the model.
TEST(CudaReader, InvalidTimestampsAreCountedAndLeftOut) {
  TraceBuilder b(300, 1, T0);
  int g = b.Thread(301);
  b.Kernel(g, {.start = T0 + 1'000, .end = T0 + 2'000, .name = "_Z2okv"});
  b.Kernel(g, {.start = 0, .end = T0 + 2'000, .name = "_Z4zerov"});         // start 0
  b.Kernel(g, {.start = T0 + 3'000, .end = 0, .name = "_Z4zerov"});         // end 0
  b.Kernel(g, {.start = T0 + 5'000, .end = T0 + 4'000, .name = "_Z3revv"});  // end < start
  b.Memcpy(g, {.start = 0, .end = 0, .kind = fmt::MemcpyKind::kHtoD, .bytes = 8});
  b.Memset(g, {.start = T0 + 9'000, .end = T0 + 8'000, .bytes = 8});
  b.Sync(g, 0, T0, fmt::SyncType::kEventSynchronize, 4);
  b.Overhead(g, T0 + 2, T0 + 1, 1, 1, 1);
  b.Kernel(g, {.start = T0 + 6'000, .end = T0 + 6'000, .name = "_Z5emptyv"});  // zero length: valid
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.errors.empty());
  const CudaData& c = r.image->cuda;
  EXPECT_EQ(c.invalid_timestamps, 7u);
  ASSERT_EQ(c.kernels.size(), 2u);
  EXPECT_EQ(pool.Get(c.kernels[0].name), "_Z2okv");
  EXPECT_EQ(c.kernels[1].duration(), 0u);
  EXPECT_TRUE(c.memcpys.empty());
  EXPECT_TRUE(c.memsets.empty());
  EXPECT_TRUE(c.syncs.empty());
  EXPECT_TRUE(c.overheads.empty());
}

// GPU records take their times from the base of the chunk they are in, not from the dt chain, and
// may come in any order.
TEST(CudaReader, GpuTimesAreRelativeToTheirChunkBase) {
  TraceBuilder b(300, 1, T0);
  b.Layout(1024, 256);
  int g = b.Thread(301);
  b.GpuDropped(g, T0 + 5'000'000, 1);  // moves the drainer's time: the next chunk's base
  for (int i = 0; i < 20; ++i) {       // ~30 bytes each: several 192-byte chunks
    const uint64_t s = T0 + 10'000'000 - static_cast<uint64_t>(i) * 100'000;  // going back in time
    b.Kernel(g, {.start = s, .end = s + 50'000, .name = "_Z1kv", .correlation = static_cast<uint64_t>(i)});
  }
  ASSERT_GE(b.chunks(), 3u);
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  ASSERT_TRUE(r.status.errors.empty()) << r.status.errors[0];
  ASSERT_EQ(r.image->cuda.kernels.size(), 20u);
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_EQ(r.image->cuda.kernels[i].start_ns, T0 + 10'000'000 - i * 100'000) << i;
    EXPECT_EQ(r.image->cuda.kernels[i].duration(), 50'000u) << i;
  }
}

// Kernels keep their launch configuration as an index into the image's table: equal
// configurations share one entry, whatever kernels come between them; an all-zero one is index 0.
TEST(CudaReader, KernelsShareOneEntryPerDistinctLaunchConfiguration) {
  TraceBuilder b(300, 1, T0);
  const int g = b.Thread(301);
  const uint32_t n = 64;
  for (uint32_t i = 0; i < n; ++i) {  // two configurations, alternating, and a third every 16th kernel
    const bool odd = i % 2 == 1, third = i % 16 == 15;
    b.Kernel(g, {.start = T0 + 10 * i, .end = T0 + 10 * i + 5, .name = odd ? "_Z1av" : "_Z1bv",
                 .correlation = i + 1, .grid = {third ? 7u : odd ? 256u : 64u, 1, 1},
                 .block = {128, 1, 1}, .registers = odd ? 40u : 32u, .static_shared = 0,
                 .dynamic_shared = third ? 4096u : 0u});
  }
  b.Kernel(g, {.start = T0 + 10'000, .end = T0 + 10'001, .name = "_Z1zv", .correlation = 999, .grid = {0, 0, 0},
               .block = {0, 0, 0}, .registers = 0, .launch = fmt::KernelLaunch::kRegular});
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  const CudaData& c = r.image->cuda;
  ASSERT_EQ(c.kernels.size(), n + 1);
  EXPECT_EQ(c.kernel_configs.size(), 4u);  // the zero entry and three configurations
  for (uint32_t i = 0; i < n; ++i) {
    const KernelConfig& k = c.kernel_configs[c.kernels[i].config];
    const bool odd = i % 2 == 1, third = i % 16 == 15;
    EXPECT_EQ(k.grid[0], third ? 7u : odd ? 256u : 64u) << i;
    EXPECT_EQ(k.registers, odd ? 40u : 32u) << i;
    EXPECT_EQ(k.dynamic_shared, third ? 4096u : 0u) << i;
    EXPECT_EQ(k.block[0], 128u) << i;
    if (i >= 2 && !third && (i - 2) % 16 != 15) EXPECT_EQ(c.kernels[i].config, c.kernels[i - 2].config) << i;
  }
  EXPECT_NE(c.kernels[0].config, c.kernels[1].config);
  EXPECT_EQ(c.kernels[n].config, 0u);
  EXPECT_EQ(c.kernel_configs[c.kernels[n].config], KernelConfig{});
  EXPECT_EQ(c.kernel_configs[12345], KernelConfig{});  // an index never given: the zero entry
  EXPECT_EQ(sizeof(GpuKernel), 48u);
}

// The calls' time order: as std::stable_sort by enter time (ties in record order), for runs of
// several threads' calls, random orders with many ties, and calls already in order.
TEST(CudaReader, CallsSortByEnterTimeAsAStableSort) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 50; ++round) {
    std::vector<CudaCall> calls;
    const int threads = 1 + round % 5, per = 1 + static_cast<int>(rng() % 400);
    for (int t = 0; t < threads; ++t) {
      uint64_t at = rng() % 1000;
      for (int i = 0; i < per; ++i) {
        at += round % 3 == 0 ? rng() % 3 : rng() % 50;  // ties in a third of the rounds
        calls.push_back({.begin_ns = at, .end_ns = at + 1, .correlation = calls.size() + 1,
                         .thread = static_cast<uint32_t>(t)});
      }
    }
    if (round % 7 == 6) std::shuffle(calls.begin(), calls.end(), rng);
    std::vector<CudaCall> want = calls;
    std::stable_sort(want.begin(), want.end(), [](const CudaCall& a, const CudaCall& b) { return a.begin_ns < b.begin_ns; });
    SortByEnterTime(&calls);
    ASSERT_EQ(calls.size(), want.size());
    for (size_t i = 0; i < calls.size(); ++i) {
      ASSERT_EQ(calls[i].correlation, want[i].correlation) << "round " << round << ", call " << i;
      ASSERT_EQ(calls[i].begin_ns, want[i].begin_ns);
    }
  }
}

// Fields wider than the model's saturate instead of wrapping.
TEST(CudaReader, WideFieldsSaturate) {
  TraceBuilder b(300, 1, T0);
  int g = b.Thread(301);
  b.Kernel(g, {.start = T0 + 1, .end = T0 + 2, .name = "_Z1kv", .device = 7, .grid = {1, 1, 1}});
  // A kernel record written by hand with a 2^40 device id and grid x.
  std::vector<uint64_t> f = {fmt::ZigZag(10), fmt::ZigZag(20), 1ull << 40, 1, 7, 5, 0, 1ull << 40, 1, 1,
                             1, 1, 1, 0, 0, 0, 0, 0};
  b.RawFields(g, static_cast<uint8_t>(fmt::RecordTag::kGpuKernel), f);
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.image->cuda.kernels.size(), 2u);
  EXPECT_EQ(r.image->cuda.kernels[1].device, UINT32_MAX);
  EXPECT_EQ(r.image->cuda.kernel_configs[r.image->cuda.kernels[1].config].grid[0], UINT32_MAX);
  EXPECT_EQ(r.image->cuda.kernels[1].start_ns, T0 + 10);
}

// A CUPTI callback id is below 2^16 (the model keeps 16 bits); a larger recorded one saturates.
TEST(CudaReader, CallbackIdsPastSixteenBitsSaturate) {
  TraceBuilder b(300, 1, T0);
  const int t = b.Thread(300);
  b.ApiEnter(t, T0 + 1, "cudaLaunchKernel_v7000", 1, fmt::CudaApi::kRuntime, 211);
  b.ApiExit(t, T0 + 2, 1);
  b.ApiEnter(t, T0 + 3, "cuLaunchKernel", 2, fmt::CudaApi::kDriver, 1u << 20);
  b.ApiExit(t, T0 + 4, 2);
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.image->cuda.calls.size(), 2u);
  EXPECT_EQ(r.image->cuda.calls[0].cbid, 211u);
  EXPECT_EQ(r.image->cuda.calls[1].cbid, UINT16_MAX);
  EXPECT_EQ(r.image->cuda.calls[1].api, fmt::CudaApi::kDriver);
  EXPECT_EQ(sizeof(CudaCall), 48u);
}

// Version 1 files are read as before; in them tags 48..59 are not records (damage).
TEST(CudaReader, VersionOneFilesStillRead) {
  TraceBuilder b(300, 1, T0);
  b.Version(1);
  int t = b.Thread(300);
  b.Push(t, T0 + 1'000, "step");
  b.Pop(t, T0 + 2'000);
  b.ProcessEnd(t, T0 + 3'000, fmt::EndKind::kExit, 0);
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.errors.empty()) << r.status.errors[0];
  EXPECT_EQ(r.image->version, 1u);
  EXPECT_EQ(r.image->nvtx.size(), 2u);
  EXPECT_EQ(r.image->records, 4u);  // the string, push, pop, end
  EXPECT_FALSE(r.image->cuda.any());

  TraceBuilder c(300, 1, T0);
  c.Version(1);
  int u = c.Thread(300);
  c.Mark(u, T0 + 1'000, "m");
  c.ApiCall(u, T0 + 2'000, T0 + 3'000, "cudaMalloc", 1);  // STRING is fine, the enter is not v1
  r = Read(c, &pool);
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.status.errors.size(), 1u);
  EXPECT_EQ(r.status.errors[0].rfind("bad record tag 48 at byte ", 0), 0u) << r.status.errors[0];
  EXPECT_EQ(r.image->nvtx.size(), 1u);
  EXPECT_FALSE(r.image->cuda.any());
}

}  // namespace
}  // namespace trainprof::collector
