// Conversion of CUPTI activity records (built by hand, as CUPTI would lay them out) into trace
// records, decoded back field by field.
#include "cupti/activity_convert.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu_record_decoder.h"

namespace trainprof::inject::cupti {
namespace {

using format::MemcpyKind;
using format::MemoryKind;
using format::RecordTag;
using testing::DecodeOne;
using testing::Decoded;
using testing::Time;

constexpr uint64_t kBase = 5'000'000'000ull;  // the chunk's base_ns

template <typename T>
T Zeroed() {
  T r;
  memset(static_cast<void*>(&r), 0, sizeof(r));
  return r;
}

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

// Roundtrip, and the record must come back as `tag`.
Decoded RoundtripAs(RecordTag tag, const void* rec, uint32_t name = 0) {
  Decoded d = Roundtrip(rec, name);
  EXPECT_EQ(d.tag, tag);
  return d;
}

// The fields of a timed GPU record in format order, its start and end (fields 0 and 1) back in ns.
std::vector<uint64_t> TimedFields(const Decoded& d, uint64_t base = kBase) {
  std::vector<uint64_t> f = d.f;
  if (f.size() >= 2) {
    f[0] = Time(f[0], base);
    f[1] = Time(f[1], base);
  }
  return f;
}

// A format enum as the field value it is written as.
template <typename E>
constexpr uint64_t U(E e) {
  return static_cast<uint64_t>(e);
}

KernelRecord SampleKernel() {
  KernelRecord k{.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                 .registersPerThread = 40,
                 .start = kBase + 1000,
                 .end = kBase + 251000,
                 .deviceId = 1, .contextId = 7, .streamId = 13,
                 .gridX = 1024, .gridY = 2, .gridZ = 3,
                 .blockX = 256, .blockY = 4, .blockZ = 1,
                 .staticSharedMemory = 4096, .dynamicSharedMemory = 49152,
                 .correlationId = 4242,
                 .name = "_Z6vecAddPKfS0_Pfi",
                 .launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR,
                 .graphId = 0};
  return k;
}

TEST(CuptiConvert, KernelEveryField) {
  KernelRecord k = SampleKernel();
  Decoded d = RoundtripAs(RecordTag::kGpuKernel, &k, /*name=*/77);
  EXPECT_EQ(TimedFields(d), (std::vector<uint64_t>{
                                kBase + 1000, kBase + 251000,  // start, end
                                1, 7, 13, 4242,                // device, context, stream, correlation
                                77,                            // name id
                                1024, 2, 3, 256, 4, 1,         // grid, block
                                40, 4096, 49152,               // registers per thread, static and dynamic shared
                                0, U(format::KernelLaunch::kRegular)}));  // graph id, launch kind
  EXPECT_STREQ(ActivityName(reinterpret_cast<const CUpti_Activity*>(&k)), "_Z6vecAddPKfS0_Pfi");
}

TEST(CuptiConvert, SerialKernelKindConvertsLikeConcurrent) {
  KernelRecord k = SampleKernel();
  k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  Decoded d = Roundtrip(&k, 5);
  EXPECT_EQ(d.tag, RecordTag::kGpuKernel);
  EXPECT_EQ(d.f[5], 4242u);
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
  EXPECT_EQ(d.f[16], 31u);
  EXPECT_EQ(d.f[17], static_cast<uint64_t>(format::KernelLaunch::kGraph));
}

TEST(CuptiConvert, ZeroTimestampsAreKeptForTheReader) {
  KernelRecord k = SampleKernel();
  k.start = 0;
  k.end = 0;
  Decoded d = Roundtrip(&k, 1);
  EXPECT_EQ(Time(d.f[0], kBase), 0u);
  EXPECT_EQ(Time(d.f[1], kBase), 0u);
  EXPECT_EQ(format::UnZigZag(d.f[0]), -static_cast<int64_t>(kBase));
}

TEST(CuptiConvert, ReversedTimestampsAreKeptForTheReader) {
  KernelRecord k = SampleKernel();
  k.start = kBase + 900;
  k.end = kBase + 100;
  Decoded d = Roundtrip(&k, 1);
  EXPECT_EQ(Time(d.f[0], kBase), kBase + 900);
  EXPECT_EQ(Time(d.f[1], kBase), kBase + 100);
}

TEST(CuptiConvert, TimesBeforeTheChunkBaseAreNegative) {
  // Activity is drained later than it ran: it is usually older than the chunk it is written in.
  KernelRecord k = SampleKernel();
  k.start = kBase - 3'000'000'000ull;
  k.end = kBase - 2'999'000'000ull;
  Decoded d = Roundtrip(&k, 1);
  EXPECT_LT(format::UnZigZag(d.f[0]), 0);
  EXPECT_EQ(Time(d.f[0], kBase), k.start);
  EXPECT_EQ(Time(d.f[1], kBase), k.end);
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
  EXPECT_EQ(Time(d.f[0], 0), ~0ull);
  EXPECT_EQ(d.f[7], 0xFFFFFFFFu);  // a negative int32 size is written as its unsigned bits
  EXPECT_EQ(d.f[13], 0xFFFFu);
}

TEST(CuptiConvert, MemcpyEveryField) {
  MemcpyRecord m{.kind = CUPTI_ACTIVITY_KIND_MEMCPY,
                 .copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,  // from pageable host memory to the device
                 .srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, .dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                 .flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC,
                 .bytes = 6ull << 30,  // more than 32 bits
                 .start = kBase + 10, .end = kBase + 20,
                 .deviceId = 2, .contextId = 3, .streamId = 4, .correlationId = 900,
                 .runtimeCorrelationId = 0, .graphId = 12};
  Decoded d = RoundtripAs(RecordTag::kGpuMemcpy, &m);
  // start, end, device, context, stream, correlation; copy kind, source and destination memory, bytes;
  // source and destination device (both the copy's device), async, graph id
  EXPECT_EQ(TimedFields(d), (std::vector<uint64_t>{kBase + 10, kBase + 20, 2, 3, 4, 900, U(MemcpyKind::kHtoD),
                                                   U(MemoryKind::kPageable), U(MemoryKind::kDevice), 6ull << 30,
                                                   2, 2, 1, 12}));

  m.flags = 0;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  d = Roundtrip(&m);
  EXPECT_EQ(d.f[6], U(MemcpyKind::kDtoH));
  EXPECT_EQ(d.f[8], U(MemoryKind::kPinned));
  EXPECT_EQ(d.f[12], 0u);
}

TEST(CuptiConvert, MemcpyLinksToTheRuntimeCallWhenCuptiGivesIt) {
  auto m = Zeroed<MemcpyRecord>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.correlationId = 501;  // the driver call inside
  m.runtimeCorrelationId = 500;
  EXPECT_EQ(MemcpyCorrelation(m), 500u);
  EXPECT_EQ(Roundtrip(&m).f[5], 500u);
  m.runtimeCorrelationId = 0;
  EXPECT_EQ(MemcpyCorrelation(m), 501u);
}

TEST(CuptiConvert, PeerMemcpyNamesBothDevices) {
  PeerMemcpyRecord m{.kind = CUPTI_ACTIVITY_KIND_MEMCPY2,
                     .copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP,  // device memory to device memory
                     .srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, .dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                     .flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC,
                     .bytes = 1 << 20,
                     .start = kBase + 5, .end = kBase + 6,
                     .deviceId = 0, .contextId = 1, .streamId = 14,
                     .srcDeviceId = 0, .dstDeviceId = 3,
                     .correlationId = 77,
                     .graphId = 0};
  Decoded d = RoundtripAs(RecordTag::kGpuMemcpy, &m);
  // As MemcpyEveryField, with the source and the destination device of the record.
  EXPECT_EQ(TimedFields(d), (std::vector<uint64_t>{kBase + 5, kBase + 6, 0, 1, 14, 77, U(MemcpyKind::kPtoP),
                                                   U(MemoryKind::kDevice), U(MemoryKind::kDevice), 1u << 20,
                                                   0, 3, 1, 0}));
}

TEST(CuptiConvert, MemsetEveryField) {
  MemsetRecord m{.kind = CUPTI_ACTIVITY_KIND_MEMSET,
                 .value = 0xAB,
                 .bytes = 123456789,
                 .start = kBase + 40, .end = kBase + 4000,
                 .deviceId = 0, .contextId = 1, .streamId = 7, .correlationId = 31,
                 .flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC,
                 .memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                 .graphId = 5};
  Decoded d = RoundtripAs(RecordTag::kGpuMemset, &m);
  EXPECT_EQ(TimedFields(d), (std::vector<uint64_t>{
                                kBase + 40, kBase + 4000, 0, 1, 7, 31,  // start, end, device, context, stream, corr.
                                123456789, 0xAB,                        // bytes, value
                                U(MemoryKind::kDevice),
                                1,     // async
                                5}));  // graph id
}

TEST(CuptiConvert, SyncStreamIsPlusOneAndNoneIsZero) {
  SyncRecord s{.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
               .type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
               .start = kBase + 1, .end = kBase + 1000001,
               .correlationId = 64,
               .contextId = 1,
               .streamId = 0};  // stream 0 is a real stream: written as 1
  Decoded d = RoundtripAs(RecordTag::kGpuSync, &s);
  EXPECT_EQ(TimedFields(d), (std::vector<uint64_t>{kBase + 1, kBase + 1000001,
                                                   1, 1,  // context, stream + 1
                                                   U(format::SyncType::kStreamSynchronize), 64}));

  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  d = Roundtrip(&s);
  EXPECT_EQ(d.f[3], 0u);
  EXPECT_EQ(d.f[4], U(format::SyncType::kContextSynchronize));
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
  Decoded d = RoundtripAs(RecordTag::kGpuOverhead, &o);
  EXPECT_EQ(TimedFields(d), (std::vector<uint64_t>{kBase + 2, kBase + 3, U(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH),
                                                   U(CUPTI_ACTIVITY_OBJECT_THREAD), 101}));

  // The object id each object kind names (the union's member for that kind).
  o.objectId.dcs.deviceId = 1;
  o.objectId.dcs.contextId = 2;
  o.objectId.dcs.streamId = 3;
  const std::pair<CUpti_ActivityObjectKind, uint64_t> kIds[] = {
      {CUPTI_ACTIVITY_OBJECT_STREAM, 3},
      {CUPTI_ACTIVITY_OBJECT_CONTEXT, 2},
      {CUPTI_ACTIVITY_OBJECT_DEVICE, 1},
      {CUPTI_ACTIVITY_OBJECT_UNKNOWN, 0},
  };
  for (auto [kind, id] : kIds) {
    o.objectKind = kind;
    EXPECT_EQ(Roundtrip(&o).f[4], id) << kind;
  }
  o.objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
  o.objectId.pt.processId = 100;
  EXPECT_EQ(Roundtrip(&o).f[4], 100u);
}

TEST(CuptiConvert, DeviceAndContextDefinitions) {
  DeviceRecord dev{.kind = CUPTI_ACTIVITY_KIND_DEVICE,
                   .globalMemorySize = 150ull << 30,
                   .numMultiprocessors = 132,
                   .computeCapabilityMajor = 9, .computeCapabilityMinor = 0,
                   .id = 3,
                   .name = "NVIDIA H200"};
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

TEST(CuptiConvert, ActivityStartIsTheStartOfTimedKindsOnly) {
  // A zeroed record of a kind, its start set where it has one; ActivityStart's answer (0: false).
  auto start_of = [](auto record, CUpti_ActivityKind kind, uint64_t start) -> uint64_t {
    record.kind = kind;
    if constexpr (requires { record.start; }) record.start = start;
    uint64_t got = 99;
    return ActivityStart(reinterpret_cast<const CUpti_Activity*>(&record), &got) ? got : 0;
  };
  EXPECT_EQ(start_of(Zeroed<KernelRecord>(), CUPTI_ACTIVITY_KIND_KERNEL, 11), 11u);
  EXPECT_EQ(start_of(Zeroed<KernelRecord>(), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 12), 12u);
  EXPECT_EQ(start_of(Zeroed<MemcpyRecord>(), CUPTI_ACTIVITY_KIND_MEMCPY, 13), 13u);
  EXPECT_EQ(start_of(Zeroed<PeerMemcpyRecord>(), CUPTI_ACTIVITY_KIND_MEMCPY2, 14), 14u);
  EXPECT_EQ(start_of(Zeroed<MemsetRecord>(), CUPTI_ACTIVITY_KIND_MEMSET, 15), 15u);
  EXPECT_EQ(start_of(Zeroed<SyncRecord>(), CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, 16), 16u);
  EXPECT_EQ(start_of(Zeroed<OverheadRecord>(), CUPTI_ACTIVITY_KIND_OVERHEAD, 17), 17u);
  // Definitions are not timed; API records come from callbacks.
  EXPECT_EQ(start_of(Zeroed<DeviceRecord>(), CUPTI_ACTIVITY_KIND_DEVICE, 18), 0u);
  EXPECT_EQ(start_of(Zeroed<ContextRecord>(), CUPTI_ACTIVITY_KIND_CONTEXT, 19), 0u);
  EXPECT_EQ(start_of(Zeroed<CUpti_ActivityAPI>(), CUPTI_ACTIVITY_KIND_RUNTIME, 20), 0u);
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
  EXPECT_EQ(Roundtrip(&k, 9).f[6], 9u);
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
    EXPECT_EQ(Time(d.f[0], kBase), kBase + 1);
    EXPECT_EQ(d.f[2], 4u);
    EXPECT_EQ(d.f[4], 9u);
    EXPECT_EQ(d.f[5], 55u);
    EXPECT_EQ(d.f[7], 8u);
    EXPECT_EQ(d.f[12], 2u);
    EXPECT_EQ(d.f[13], 16u);
    EXPECT_EQ(d.f[15], 1024u);
    EXPECT_EQ(d.f[16], 3u);
    EXPECT_EQ(d.f[17], static_cast<uint64_t>(format::KernelLaunch::kCooperative));
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
    EXPECT_EQ(d.f[5], 12u);
    EXPECT_EQ(d.f[6], static_cast<uint64_t>(format::MemcpyKind::kDtoD));
    EXPECT_EQ(d.f[9], 4096u);
    EXPECT_EQ(d.f[13], 2u);
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
    EXPECT_EQ(d.f, (std::vector<uint64_t>{d.f[0], d.f[1], 1, 0, 1, 3}));
  }
}

}  // namespace
}  // namespace trainprof::inject::cupti
