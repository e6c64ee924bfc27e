// Conversion of CUPTI activity records (built by hand, as CUPTI would lay them out) into trace
// records, decoded back field by field.
#include "cupti/activity_convert.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cupti_records.h"
#include "gpu_record_decoder.h"

namespace trainprof::inject::cupti {
namespace {

using format::RecordTag;
using testing::DecodeOne;
using testing::Decoded;
using testing::Time;
namespace rec = format::rec;

constexpr uint64_t kBase = 5'000'000'000ull;  // the chunk's base_ns

using testing::Zeroed;

// Encodes through the kind dispatcher, checks the size it reports, decodes.
Decoded Roundtrip(const void* rec, uint32_t name = 0, uint64_t base = kBase) {
  uint8_t buf[kMaxGpuRecordBytes + 16];
  memset(buf, 0xEE, sizeof(buf));
  size_t n = EncodeActivity(static_cast<const CUpti_Activity*>(rec), base, name, buf);
  EXPECT_GT(n, 0u);
  EXPECT_LE(n, kMaxGpuRecordBytes);
  Decoded d = DecodeOne(buf, buf + n);
  EXPECT_EQ(d.size, n) << "the record must decode to exactly the bytes written";
  return d;
}

KernelRecord SampleKernel() {
  return testing::MakeKernel({.start = kBase + 1000, .end = kBase + 251000, .device = 1, .context = 7, .stream = 13,
                              .correlation = 4242, .grid = {1024, 2, 3}, .block = {256, 4, 1}, .registers = 40,
                              .static_shared = 4096, .dynamic_shared = 49152, .name = "_Z6vecAddPKfS0_Pfi"});
}

TEST(CuptiConvert, KernelEveryField) {
  KernelRecord k = SampleKernel();
  Decoded d = Roundtrip(&k, /*name=*/77);
  ASSERT_EQ(d.tag, RecordTag::kGpuKernel);
  ASSERT_EQ(d.f.size(), 18u);
  EXPECT_EQ(Time(d.As<rec::GpuKernel>().zs, kBase), kBase + 1000);
  EXPECT_EQ(Time(d.As<rec::GpuKernel>().ze, kBase), kBase + 251000);
  EXPECT_EQ(d.As<rec::GpuKernel>().device, 1u);      // device
  EXPECT_EQ(d.As<rec::GpuKernel>().context, 7u);      // context
  EXPECT_EQ(d.As<rec::GpuKernel>().stream, 13u);     // stream
  EXPECT_EQ(d.As<rec::GpuKernel>().correlation, 4242u);   // correlation
  EXPECT_EQ(d.As<rec::GpuKernel>().name, 77u);     // name id
  EXPECT_EQ(d.As<rec::GpuKernel>().grid_x, 1024u);   // grid
  EXPECT_EQ(d.As<rec::GpuKernel>().grid_y, 2u);
  EXPECT_EQ(d.As<rec::GpuKernel>().grid_z, 3u);
  EXPECT_EQ(d.As<rec::GpuKernel>().block_x, 256u);   // block
  EXPECT_EQ(d.As<rec::GpuKernel>().block_y, 4u);
  EXPECT_EQ(d.As<rec::GpuKernel>().block_z, 1u);
  EXPECT_EQ(d.As<rec::GpuKernel>().registers, 40u);    // registers per thread
  EXPECT_EQ(d.As<rec::GpuKernel>().static_shared, 4096u);  // static shared
  EXPECT_EQ(d.As<rec::GpuKernel>().dynamic_shared, 49152u); // dynamic shared
  EXPECT_EQ(d.As<rec::GpuKernel>().graph, 0u);     // graph id
  EXPECT_EQ(d.As<rec::GpuKernel>().launch, static_cast<uint64_t>(format::KernelLaunch::kRegular));
  EXPECT_STREQ(ActivityName(reinterpret_cast<const CUpti_Activity*>(&k)), "_Z6vecAddPKfS0_Pfi");
}

TEST(CuptiConvert, SerialKernelKindConvertsLikeConcurrent) {
  KernelRecord k = SampleKernel();
  k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  Decoded d = Roundtrip(&k, 5);
  EXPECT_EQ(d.tag, RecordTag::kGpuKernel);
  EXPECT_EQ(d.As<rec::GpuKernel>().correlation, 4242u);
}

TEST(CuptiConvert, KernelLaunchKinds) {
  EXPECT_EQ(KernelLaunchOf(CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR, 0), format::KernelLaunch::kRegular);
  EXPECT_EQ(KernelLaunchOf(CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR, 9), format::KernelLaunch::kGraph);
  EXPECT_EQ(KernelLaunchOf(CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE, 0), format::KernelLaunch::kCooperative);
  EXPECT_EQ(KernelLaunchOf(CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE, 0),
            format::KernelLaunch::kCooperativeMultiDevice);
  // A cooperative kernel of a graph keeps its cooperative kind (the graph id says the rest).
  EXPECT_EQ(KernelLaunchOf(CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE, 9), format::KernelLaunch::kCooperative);
  // A launch type newer than this build reads as regular.
  EXPECT_EQ(KernelLaunchOf(CUPTI_ACTIVITY_LAUNCH_TYPE_CBL_COMMANDLIST, 0), format::KernelLaunch::kRegular);

  KernelRecord k = SampleKernel();
  k.graphId = 31;
  Decoded d = Roundtrip(&k, 1);
  EXPECT_EQ(d.As<rec::GpuKernel>().graph, 31u);
  EXPECT_EQ(d.As<rec::GpuKernel>().launch, static_cast<uint64_t>(format::KernelLaunch::kGraph));
}

TEST(CuptiConvert, ZeroTimestampsAreKeptForTheReader) {
  KernelRecord k = SampleKernel();
  k.start = 0;
  k.end = 0;
  Decoded d = Roundtrip(&k, 1);
  EXPECT_EQ(Time(d.As<rec::GpuKernel>().zs, kBase), 0u);
  EXPECT_EQ(Time(d.As<rec::GpuKernel>().ze, kBase), 0u);
  EXPECT_EQ(d.As<rec::GpuKernel>().zs, -static_cast<int64_t>(kBase));
}

TEST(CuptiConvert, ReversedTimestampsAreKeptForTheReader) {
  KernelRecord k = SampleKernel();
  k.start = kBase + 900;
  k.end = kBase + 100;
  Decoded d = Roundtrip(&k, 1);
  EXPECT_EQ(Time(d.As<rec::GpuKernel>().zs, kBase), kBase + 900);
  EXPECT_EQ(Time(d.As<rec::GpuKernel>().ze, kBase), kBase + 100);
}

TEST(CuptiConvert, TimesBeforeTheChunkBaseAreNegative) {
  // Activity is drained later than it ran: it is usually older than the chunk it is written in.
  KernelRecord k = SampleKernel();
  k.start = kBase - 3'000'000'000ull;
  k.end = kBase - 2'999'000'000ull;
  Decoded d = Roundtrip(&k, 1);
  EXPECT_LT(d.As<rec::GpuKernel>().zs, 0);
  EXPECT_EQ(Time(d.As<rec::GpuKernel>().zs, kBase), k.start);
  EXPECT_EQ(Time(d.As<rec::GpuKernel>().ze, kBase), k.end);
}

TEST(CuptiConvert, ExtremeValuesFitTheRecordBound) {
  KernelRecord k = SampleKernel();
  k.start = ~0ull;
  k.end = 1;
  k.deviceId = k.contextId = k.streamId = k.correlationId = 0xFFFFFFFFu;
  k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = -1;
  k.staticSharedMemory = k.dynamicSharedMemory = -1;
  k.registersPerThread = 0xFFFF;
  k.graphId = 0xFFFFFFFFu;
  Decoded d = Roundtrip(&k, 0xFFFFFFFFu, /*base=*/0);
  EXPECT_EQ(Time(d.As<rec::GpuKernel>().zs, 0), ~0ull);
  EXPECT_EQ(d.As<rec::GpuKernel>().grid_x, 0xFFFFFFFFu);  // a negative int32 size is written as its unsigned bits
  EXPECT_EQ(d.As<rec::GpuKernel>().registers, 0xFFFFu);
}

TEST(CuptiConvert, MemcpyEveryField) {
  auto m = testing::MakeCopy<MemcpyRecord>(
      {.start = kBase + 10, .end = kBase + 20, .copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
       .src_kind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, .dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
       .flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC, .bytes = 6ull << 30,  // more than 32 bits
       .device = 2, .context = 3, .stream = 4, .correlation = 900, .graph = 12});
  Decoded d = Roundtrip(&m);
  ASSERT_EQ(d.tag, RecordTag::kGpuMemcpy);
  ASSERT_EQ(d.f.size(), 14u);
  EXPECT_EQ(d.As<rec::GpuMemcpy>(),
            (rec::GpuMemcpy{.zs = 10, .ze = 20, .device = 2, .context = 3, .stream = 4, .correlation = 900,
                            .copy_kind = static_cast<uint64_t>(format::MemcpyKind::kHtoD),
                            .src_kind = static_cast<uint64_t>(format::MemoryKind::kPageable),
                            .dst_kind = static_cast<uint64_t>(format::MemoryKind::kDevice), .bytes_copied = 6ull << 30,
                            .src_device = 2, .dst_device = 2,  // both the copy's device
                            .flags = 1, .graph = 12}));  // async

  m.flags = 0;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  d = Roundtrip(&m);
  EXPECT_EQ(d.As<rec::GpuMemcpy>().copy_kind, static_cast<uint64_t>(format::MemcpyKind::kDtoH));
  EXPECT_EQ(d.As<rec::GpuMemcpy>().dst_kind, static_cast<uint64_t>(format::MemoryKind::kPinned));
  EXPECT_EQ(d.As<rec::GpuMemcpy>().flags, 0u);
}

TEST(CuptiConvert, MemcpyLinksToTheRuntimeCallWhenCuptiGivesIt) {
  auto m = Zeroed<MemcpyRecord>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.correlationId = 501;  // the driver call inside
  m.runtimeCorrelationId = 500;
  EXPECT_EQ(MemcpyCorrelation(m), 500u);
  EXPECT_EQ(Roundtrip(&m).As<rec::GpuMemcpy>().correlation, 500u);
  m.runtimeCorrelationId = 0;
  EXPECT_EQ(MemcpyCorrelation(m), 501u);
}

TEST(CuptiConvert, PeerMemcpyNamesBothDevices) {
  auto m = testing::MakeCopy<PeerMemcpyRecord>(
      {.start = kBase + 5, .end = kBase + 6, .copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP,
       .src_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, .dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
       .flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC, .bytes = 1 << 20, .device = 0, .context = 1, .stream = 14,
       .correlation = 77, .src_device = 0, .dst_device = 3});
  Decoded d = Roundtrip(&m);
  ASSERT_EQ(d.tag, RecordTag::kGpuMemcpy);
  EXPECT_EQ(d.As<rec::GpuMemcpy>(),
            (rec::GpuMemcpy{.zs = 5, .ze = 6, .device = 0, .context = 1, .stream = 14, .correlation = 77,
                            .copy_kind = static_cast<uint64_t>(format::MemcpyKind::kPtoP),
                            .src_kind = static_cast<uint64_t>(format::MemoryKind::kDevice),
                            .dst_kind = static_cast<uint64_t>(format::MemoryKind::kDevice), .bytes_copied = 1u << 20,
                            .src_device = 0, .dst_device = 3, .flags = 1, .graph = 0}));
}

TEST(CuptiConvert, MemsetEveryField) {
  auto m = testing::MakeMemset({.start = kBase + 40, .end = kBase + 4000, .value = 0xAB, .bytes = 123456789,
                                .device = 0, .context = 1, .stream = 7, .correlation = 31, .graph = 5,
                                .flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC, .memory = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE});
  Decoded d = Roundtrip(&m);
  ASSERT_EQ(d.tag, RecordTag::kGpuMemset);
  ASSERT_EQ(d.f.size(), 11u);
  EXPECT_EQ(d.As<rec::GpuMemset>(),
            (rec::GpuMemset{.zs = 40, .ze = 4000, .device = 0, .context = 1, .stream = 7, .correlation = 31,
                            .bytes_set = 123456789, .value = 0xAB,
                            .memory = static_cast<uint64_t>(format::MemoryKind::kDevice), .flags = 1, .graph = 5}));
}

TEST(CuptiConvert, SyncStreamIsPlusOneAndNoneIsZero) {
  auto s = Zeroed<SyncRecord>();
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.start = kBase + 1;
  s.end = kBase + 1000001;
  s.correlationId = 64;
  s.contextId = 1;
  s.streamId = 0;  // stream 0 is a real stream: written as 1
  Decoded d = Roundtrip(&s);
  ASSERT_EQ(d.tag, RecordTag::kGpuSync);
  ASSERT_EQ(d.f.size(), 6u);
  EXPECT_EQ(Time(d.As<rec::GpuSync>().zs, kBase), kBase + 1);
  EXPECT_EQ(Time(d.As<rec::GpuSync>().ze, kBase), kBase + 1000001);
  EXPECT_EQ(d.As<rec::GpuSync>().context, 1u);
  EXPECT_EQ(d.As<rec::GpuSync>().stream_plus_1, 1u);
  EXPECT_EQ(d.As<rec::GpuSync>().type, static_cast<uint64_t>(format::SyncType::kStreamSynchronize));
  EXPECT_EQ(d.As<rec::GpuSync>().correlation, 64u);

  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  d = Roundtrip(&s);
  EXPECT_EQ(d.As<rec::GpuSync>().stream_plus_1, 0u);
  EXPECT_EQ(d.As<rec::GpuSync>().type, static_cast<uint64_t>(format::SyncType::kContextSynchronize));
}

TEST(CuptiConvert, OverheadObjectIdFollowsTheObjectKind) {
  auto o = Zeroed<OverheadRecord>();
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = 100;
  o.objectId.pt.threadId = 101;
  o.start = kBase + 2;
  o.end = kBase + 3;
  Decoded d = Roundtrip(&o);
  ASSERT_EQ(d.tag, RecordTag::kGpuOverhead);
  ASSERT_EQ(d.f.size(), 5u);
  EXPECT_EQ(Time(d.As<rec::GpuOverhead>().zs, kBase), kBase + 2);
  EXPECT_EQ(Time(d.As<rec::GpuOverhead>().ze, kBase), kBase + 3);
  EXPECT_EQ(d.As<rec::GpuOverhead>().kind, static_cast<uint64_t>(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH));
  EXPECT_EQ(d.As<rec::GpuOverhead>().object_kind, static_cast<uint64_t>(CUPTI_ACTIVITY_OBJECT_THREAD));
  EXPECT_EQ(d.As<rec::GpuOverhead>().object_id, 101u);

  o.objectKind = CUPTI_ACTIVITY_OBJECT_STREAM;
  o.objectId.dcs.deviceId = 1;
  o.objectId.dcs.contextId = 2;
  o.objectId.dcs.streamId = 3;
  EXPECT_EQ(Roundtrip(&o).As<rec::GpuOverhead>().object_id, 3u);
  o.objectKind = CUPTI_ACTIVITY_OBJECT_CONTEXT;
  EXPECT_EQ(Roundtrip(&o).As<rec::GpuOverhead>().object_id, 2u);
  o.objectKind = CUPTI_ACTIVITY_OBJECT_DEVICE;
  EXPECT_EQ(Roundtrip(&o).As<rec::GpuOverhead>().object_id, 1u);
  o.objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
  o.objectId.pt.processId = 100;
  EXPECT_EQ(Roundtrip(&o).As<rec::GpuOverhead>().object_id, 100u);
  o.objectKind = CUPTI_ACTIVITY_OBJECT_UNKNOWN;
  EXPECT_EQ(Roundtrip(&o).As<rec::GpuOverhead>().object_id, 0u);
}

TEST(CuptiConvert, DeviceAndContextDefinitions) {
  DeviceRecord dev =
      testing::MakeDevice({.id = 3, .name = "NVIDIA H200", .cc_major = 9, .cc_minor = 0, .sms = 132, .memory = 150ull << 30});
  EXPECT_STREQ(ActivityName(reinterpret_cast<const CUpti_Activity*>(&dev)), "NVIDIA H200");
  Decoded d = Roundtrip(&dev, 19);
  ASSERT_EQ(d.tag, RecordTag::kGpuDevice);
  EXPECT_EQ(d.f, (std::vector<uint64_t>{3, 19, 9, 0, 132, 150ull << 30}));

  auto ctx = Zeroed<ContextRecord>();
  ctx.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  ctx.contextId = 8;
  ctx.deviceId = 3;
  EXPECT_EQ(ActivityName(reinterpret_cast<const CUpti_Activity*>(&ctx)), nullptr);
  d = Roundtrip(&ctx);
  ASSERT_EQ(d.tag, RecordTag::kGpuContext);
  EXPECT_EQ(d.f, (std::vector<uint64_t>{8, 3}));
}

TEST(CuptiConvert, UnknownKindsAreNotConvertedAndAreCounted) {
  auto api = Zeroed<CUpti_ActivityAPI>();
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;  // API records come from callbacks, not activity
  uint8_t buf[kMaxGpuRecordBytes];
  EXPECT_FALSE(IsConvertedKind(CUPTI_ACTIVITY_KIND_RUNTIME));
  EXPECT_EQ(EncodeActivity(reinterpret_cast<const CUpti_Activity*>(&api), kBase, 0, buf), 0u);
  auto future = Zeroed<KernelRecord>();
  future.kind = static_cast<CUpti_ActivityKind>(4000);  // a kind newer than this build
  EXPECT_FALSE(IsConvertedKind(future.kind));
  EXPECT_EQ(EncodeActivity(reinterpret_cast<const CUpti_Activity*>(&future), kBase, 0, buf), 0u);

  // A buffer as CUPTI hands it over: kernel, unknown, memset, unknown, context.
  KernelRecord k = SampleKernel();
  auto ms = Zeroed<MemsetRecord>();
  ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  auto ctx = Zeroed<ContextRecord>();
  ctx.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  std::vector<CUpti_Activity*> records = {
      reinterpret_cast<CUpti_Activity*>(&k), reinterpret_cast<CUpti_Activity*>(&api),
      reinterpret_cast<CUpti_Activity*>(&ms), reinterpret_cast<CUpti_Activity*>(&future),
      reinterpret_cast<CUpti_Activity*>(&ctx)};
  size_t i = 0;
  std::vector<CUpti_ActivityKind> written;
  uint64_t skipped = ForEachConverted(
      [&](CUpti_Activity** rec) {
        if (i == records.size()) return false;
        *rec = records[i++];
        return true;
      },
      [&](const CUpti_Activity* rec) { written.push_back(rec->kind); });
  EXPECT_EQ(skipped, 2u);
  EXPECT_EQ(written, (std::vector<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                      CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_CONTEXT}));
}

TEST(CuptiConvert, EnabledKindsAllConvert) {
  for (auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
                    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_DEVICE,
                    CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_OVERHEAD}) {
    EXPECT_TRUE(IsConvertedKind(kind)) << kind;
  }
}

TEST(CuptiConvert, LongTemplateKernelNamesAreCutAtAUtf8Boundary) {
  std::string name = "_ZN7cutlass6KernelINS_4gemm6kernel4GemmI";
  while (name.size() < 7000) name += "NS_6half_tELi128ELi128ELi32ENS_6layout8RowMajorE";
  name += "E";
  EXPECT_EQ(NameLength(name.c_str()), format::kMaxStringBytes);
  EXPECT_EQ(NameLength("short"), 5u);
  EXPECT_EQ(NameLength(""), 0u);
  std::string exact(format::kMaxStringBytes, 'k');
  EXPECT_EQ(NameLength(exact.c_str()), format::kMaxStringBytes);

  // A 3-byte character straddling the limit is left out whole.
  std::string utf8(format::kMaxStringBytes - 1, 'a');
  utf8 += "\xE2\x82\xAC";  // €, bytes 4095..4097
  utf8 += "tail";
  EXPECT_EQ(NameLength(utf8.c_str()), format::kMaxStringBytes - 1);

  // The record still carries the kernel, named by whatever id the caller interned.
  KernelRecord k = SampleKernel();
  k.name = name.c_str();
  EXPECT_EQ(ActivityName(reinterpret_cast<const CUpti_Activity*>(&k)), name.c_str());
  EXPECT_EQ(Roundtrip(&k, 9).As<rec::GpuKernel>().name, 9u);
}

// Records laid out by an older libcupti (CUDA 12.x / 11.8 structs) read the same: see
// activity_layout.h. Each is built in a buffer of exactly its own size.
TEST(CuptiConvert, OlderCuptiStructVersionsReadTheSame) {
  {
    std::vector<uint8_t> mem(sizeof(CUpti_ActivityKernel7));
    auto* k = reinterpret_cast<CUpti_ActivityKernel7*>(mem.data());
    k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k->start = kBase + 1;
    k->end = kBase + 2;
    k->deviceId = 4;
    k->streamId = 9;
    k->correlationId = 55;
    k->gridX = 8;
    k->blockZ = 2;
    k->registersPerThread = 16;
    k->dynamicSharedMemory = 1024;
    k->graphId = 3;
    k->launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
    k->name = "old";
    Decoded d = Roundtrip(mem.data(), 2);
    EXPECT_EQ(Time(d.As<rec::GpuKernel>().zs, kBase), kBase + 1);
    EXPECT_EQ(d.As<rec::GpuKernel>().device, 4u);
    EXPECT_EQ(d.As<rec::GpuKernel>().stream, 9u);
    EXPECT_EQ(d.As<rec::GpuKernel>().correlation, 55u);
    EXPECT_EQ(d.As<rec::GpuKernel>().grid_x, 8u);
    EXPECT_EQ(d.As<rec::GpuKernel>().block_z, 2u);
    EXPECT_EQ(d.As<rec::GpuKernel>().registers, 16u);
    EXPECT_EQ(d.As<rec::GpuKernel>().dynamic_shared, 1024u);
    EXPECT_EQ(d.As<rec::GpuKernel>().graph, 3u);
    EXPECT_EQ(d.As<rec::GpuKernel>().launch, static_cast<uint64_t>(format::KernelLaunch::kCooperative));
    EXPECT_STREQ(ActivityName(reinterpret_cast<const CUpti_Activity*>(mem.data())), "old");
  }
  {
    std::vector<uint8_t> mem(sizeof(CUpti_ActivityMemcpy5));
    auto* m = reinterpret_cast<CUpti_ActivityMemcpy5*>(mem.data());
    m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    m->bytes = 4096;
    m->start = kBase + 7;
    m->correlationId = 12;
    m->graphId = 2;
    Decoded d = Roundtrip(mem.data());
    EXPECT_EQ(d.As<rec::GpuMemcpy>().correlation, 12u);
    EXPECT_EQ(d.As<rec::GpuMemcpy>().copy_kind, static_cast<uint64_t>(format::MemcpyKind::kDtoD));
    EXPECT_EQ(d.As<rec::GpuMemcpy>().bytes_copied, 4096u);
    EXPECT_EQ(d.As<rec::GpuMemcpy>().graph, 2u);
  }
  {
    std::vector<uint8_t> mem(sizeof(CUpti_ActivitySynchronization));
    auto* s = reinterpret_cast<CUpti_ActivitySynchronization*>(mem.data());
    s->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
    s->contextId = 1;
    s->streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    s->correlationId = 3;
    Decoded d = Roundtrip(mem.data());
    const auto r = d.As<rec::GpuSync>();
    EXPECT_EQ((std::vector<uint64_t>{r.context, r.stream_plus_1, r.type, r.correlation}),
              (std::vector<uint64_t>{1, 0, 1, 3}));
  }
}

}  // namespace
}  // namespace trainprof::inject::cupti
