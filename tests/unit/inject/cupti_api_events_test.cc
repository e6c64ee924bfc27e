// CUPTI runtime/driver callbacks (callback data built by hand) → CUDA_API_ENTER / CUDA_API_EXIT,
// written by the real hot-path recorder into a chunk in memory and decoded back.
#include "cupti/api_events.h"

#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "gpu_record_decoder.h"
#include "recorder.h"

// The recorder's slow paths, which these tests never reach (the chunk has room): the real ones
// live in recorder.cc with the process's trace file.
namespace trainprof::inject {
uint8_t* ReserveSlow(ThreadState*, uint32_t) {
  ADD_FAILURE() << "the test chunk ran out of room";
  return nullptr;
}
void CountDropped(uint64_t) { ADD_FAILURE() << "a record was dropped"; }
}  // namespace trainprof::inject

namespace trainprof::inject::cupti {
namespace {

using format::CudaApi;
using format::RecordTag;
using testing::DecodeOne;
using testing::Decoded;

// A thread state whose chunk is a buffer of the test.
struct FakeThread {
  std::vector<uint8_t> mem = std::vector<uint8_t>(64 * 1024);
  ThreadState t;
  FakeThread() {
    auto* c = new (mem.data()) format::ChunkHeader();
    t.chunk = c;
    t.records = mem.data() + sizeof(format::ChunkHeader);
    t.cur = t.records;
    t.limit = mem.data() + mem.size();
    t.prev_ns = NowNs();
    c->base_ns = t.prev_ns;
  }
  std::vector<Decoded> Records() const {
    std::vector<Decoded> out;
    const uint8_t* p = t.records;
    const uint8_t* end = t.records + t.chunk->committed.load();
    while (p < end) {
      Decoded d = DecodeOne(p, end);
      if (d.tag == RecordTag::kInvalid) {
        ADD_FAILURE() << "undecodable record at " << (p - t.records);
        break;
      }
      out.push_back(d);
      p += d.size;
    }
    return out;
  }
};

CUpti_CallbackData Data(CUpti_ApiCallbackSite site, const char* name, uint32_t correlation, uint64_t* call_data,
                        void* ret = nullptr) {
  CUpti_CallbackData d;
  memset(&d, 0, sizeof(d));
  d.callbackSite = site;
  d.functionName = name;
  d.correlationId = correlation;
  d.correlationData = call_data;
  d.functionReturnValue = ret;
  return d;
}

// What the tracer's callback does, minus CUPTI and the string table: name ids are given.
void Callback(FakeThread* ft, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& d,
              uint32_t name_id) {
  ApiCall c;
  ASSERT_TRUE(DecodeApiCallback(domain, cbid, &d, &c));
  if (!TrackNesting(&ft->t.cuda_runtime_depth, d.correlationData, c)) return;
  if (c.enter) {
    RecordTimed(&ft->t, ApiEnterRecord(c, name_id));
  } else {
    RecordTimed(&ft->t, ApiExitRecord(c));
  }
}

TEST(CuptiApiEvents, DecodesEnterAndExit) {
  uint64_t cd = 0;
  CUpti_CallbackData enter = Data(CUPTI_API_ENTER, "cudaLaunchKernel_v7000", 515, &cd);
  ApiCall c;
  ASSERT_TRUE(DecodeApiCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &enter, &c));
  EXPECT_TRUE(c.enter);
  EXPECT_EQ(c.api, CudaApi::kRuntime);
  EXPECT_EQ(c.cbid, static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_STREQ(c.name, "cudaLaunchKernel_v7000");
  EXPECT_EQ(c.correlation, 515u);

  int status = 98;  // cudaErrorInvalidDeviceFunction
  CUpti_CallbackData exit = Data(CUPTI_API_EXIT, "cudaLaunchKernel_v7000", 515, &cd, &status);
  ASSERT_TRUE(DecodeApiCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &exit, &c));
  EXPECT_FALSE(c.enter);
  EXPECT_EQ(c.status, 98u);

  CUpti_CallbackData drv = Data(CUPTI_API_ENTER, "cuLaunchKernelEx", 9, &cd);
  ASSERT_TRUE(DecodeApiCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &drv, &c));
  EXPECT_EQ(c.api, CudaApi::kDriver);

  // Other domains are not API calls.
  EXPECT_FALSE(DecodeApiCallback(CUPTI_CB_DOMAIN_RESOURCE, 1, &enter, &c));
  EXPECT_FALSE(DecodeApiCallback(CUPTI_CB_DOMAIN_SYNCHRONIZE, 1, &enter, &c));
  EXPECT_FALSE(DecodeApiCallback(CUPTI_CB_DOMAIN_RUNTIME_API, 1, nullptr, &c));
}

TEST(CuptiApiEvents, RuntimeCallWithItsDriverCallsIsOneCall) {
  FakeThread ft;
  uint64_t rt_cd = 0, drv1_cd = 0, drv2_cd = 0, top_cd = 0;
  int ok = 0;
  // cudaMalloc → cuMemAlloc_v2, cuCtxGetCurrent inside; then cuLaunchKernel called directly.
  Callback(&ft, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
           Data(CUPTI_API_ENTER, "cudaMalloc_v3020", 10, &rt_cd), 101);
  Callback(&ft, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
           Data(CUPTI_API_ENTER, "cuCtxGetCurrent", 11, &drv1_cd), 102);
  Callback(&ft, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
           Data(CUPTI_API_EXIT, "cuCtxGetCurrent", 11, &drv1_cd, &ok), 102);
  Callback(&ft, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
           Data(CUPTI_API_ENTER, "cuMemAlloc_v2", 12, &drv2_cd), 103);
  Callback(&ft, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
           Data(CUPTI_API_EXIT, "cuMemAlloc_v2", 12, &drv2_cd, &ok), 103);
  int oom = 2;  // cudaErrorMemoryAllocation
  Callback(&ft, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
           Data(CUPTI_API_EXIT, "cudaMalloc_v3020", 10, &rt_cd, &oom), 101);
  EXPECT_EQ(ft.t.cuda_runtime_depth, 0u);
  Callback(&ft, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
           Data(CUPTI_API_ENTER, "cuLaunchKernel", 13, &top_cd), 104);
  Callback(&ft, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
           Data(CUPTI_API_EXIT, "cuLaunchKernel", 13, &top_cd, &ok), 104);

  // Each record's tag and its fields after dt: enter (api, cbid, name, correlation), exit
  // (correlation, the call's status).
  const std::pair<RecordTag, std::vector<uint64_t>> want[] = {
      {RecordTag::kCudaApiEnter,
       {static_cast<uint64_t>(CudaApi::kRuntime), CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 101, 10}},
      {RecordTag::kCudaApiExit, {10, 2}},
      {RecordTag::kCudaApiEnter,
       {static_cast<uint64_t>(CudaApi::kDriver), CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 104, 13}},
      {RecordTag::kCudaApiExit, {13, 0}},
  };
  auto recs = ft.Records();
  ASSERT_EQ(recs.size(), std::size(want));
  for (size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(recs[i].tag, want[i].first) << "record " << i;
    EXPECT_EQ(std::vector<uint64_t>(recs[i].f.begin() + 1, recs[i].f.end()), want[i].second) << "record " << i;
  }
  // dt: non-decreasing times on one thread.
  uint64_t t = ft.t.chunk->base_ns;
  for (const auto& r : recs) t += r.f[0];
  EXPECT_EQ(t, ft.t.prev_ns);
}

TEST(CuptiApiEvents, EveryKindOfLaunchCarriesItsCorrelation) {
  struct Launch {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    const char* name;
  };
  const Launch launches[] = {
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, "cudaLaunchKernel_ptsz"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, "cudaLaunchKernelExC"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, "__cudaLaunchKernel"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
       "cudaLaunchCooperativeKernel"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000,
       "cudaLaunchCooperativeKernelMultiDevice"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch"},
  };
  FakeThread ft;
  uint32_t corr = 1000;
  for (const Launch& l : launches) {
    uint64_t cd = 0;
    int ok = 0;
    Callback(&ft, l.domain, l.cbid, Data(CUPTI_API_ENTER, l.name, corr, &cd), 1);
    Callback(&ft, l.domain, l.cbid, Data(CUPTI_API_EXIT, l.name, corr, &cd, &ok), 1);
    ++corr;
  }
  auto recs = ft.Records();
  ASSERT_EQ(recs.size(), 2 * std::size(launches));
  for (size_t i = 0; i < std::size(launches); ++i) {
    SCOPED_TRACE(launches[i].name);
    EXPECT_EQ(recs[2 * i].tag, RecordTag::kCudaApiEnter);
    EXPECT_EQ(recs[2 * i].As<format::rec::CudaApiEnter>().cbid, launches[i].cbid);
    EXPECT_EQ(recs[2 * i].As<format::rec::CudaApiEnter>().correlation, 1000 + i);
    EXPECT_EQ(recs[2 * i + 1].tag, RecordTag::kCudaApiExit);
    EXPECT_EQ(recs[2 * i + 1].As<format::rec::CudaApiExit>().correlation, 1000 + i);
  }
}

TEST(CuptiApiEvents, ACallRunningWhenCuptiWasSubscribedLeavesNoExitAndNoDepth) {
  // cuInit (and so our subscription) runs inside the program's first runtime call: its exit
  // callback comes without an enter, with correlationData CUPTI never saw us set.
  FakeThread ft;
  uint64_t cd = 0x1234;  // whatever CUPTI holds there
  int ok = 0;
  Callback(&ft, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
           Data(CUPTI_API_EXIT, "cudaGetDeviceCount", 1, &cd, &ok), 1);
  EXPECT_EQ(ft.t.cuda_runtime_depth, 0u);
  EXPECT_TRUE(ft.Records().empty());
  // The next driver call at top level is recorded.
  uint64_t cd2 = 0;
  Callback(&ft, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
           Data(CUPTI_API_ENTER, "cuCtxSynchronize", 2, &cd2), 1);
  EXPECT_EQ(ft.Records().size(), 1u);
}

TEST(CuptiApiEvents, NestedRuntimeCallsAreEachRecorded) {
  uint32_t depth = 0;
  uint64_t outer = 0, inner = 0, drv = 0;
  ApiCall c;
  c.api = CudaApi::kRuntime;
  c.enter = true;
  c.correlation = 1;
  EXPECT_TRUE(TrackNesting(&depth, &outer, c));
  c.correlation = 2;
  EXPECT_TRUE(TrackNesting(&depth, &inner, c));
  EXPECT_EQ(depth, 2u);
  ApiCall d = c;
  d.api = CudaApi::kDriver;
  d.correlation = 3;
  EXPECT_FALSE(TrackNesting(&depth, &drv, d));
  d.enter = false;
  EXPECT_FALSE(TrackNesting(&depth, &drv, d));
  c.enter = false;
  EXPECT_TRUE(TrackNesting(&depth, &inner, c));
  c.correlation = 1;
  EXPECT_TRUE(TrackNesting(&depth, &outer, c));
  EXPECT_EQ(depth, 0u);
  // The same exit twice (it cannot happen, but must not underflow).
  EXPECT_FALSE(TrackNesting(&depth, &outer, c));
  EXPECT_EQ(depth, 0u);
}

TEST(CuptiApiEvents, WithoutPerCallDataTheDepthDecides) {
  uint32_t depth = 0;
  ApiCall rt;
  rt.api = CudaApi::kRuntime;
  ApiCall drv;
  drv.api = CudaApi::kDriver;
  rt.enter = false;
  EXPECT_FALSE(TrackNesting(&depth, nullptr, rt));  // exit without enter
  rt.enter = true;
  EXPECT_TRUE(TrackNesting(&depth, nullptr, rt));
  drv.enter = true;
  EXPECT_FALSE(TrackNesting(&depth, nullptr, drv));
  drv.enter = false;
  EXPECT_FALSE(TrackNesting(&depth, nullptr, drv));
  rt.enter = false;
  EXPECT_TRUE(TrackNesting(&depth, nullptr, rt));
  drv.enter = true;
  EXPECT_TRUE(TrackNesting(&depth, nullptr, drv));
  EXPECT_EQ(depth, 0u);
}

TEST(CuptiApiEvents, ProfilerStartAndStop) {
  EXPECT_EQ(ProfilerApiOf(CudaApi::kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000), 1);
  EXPECT_EQ(ProfilerApiOf(CudaApi::kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000), -1);
  EXPECT_EQ(ProfilerApiOf(CudaApi::kDriver, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart), 1);
  EXPECT_EQ(ProfilerApiOf(CudaApi::kDriver, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop), -1);
  EXPECT_EQ(ProfilerApiOf(CudaApi::kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000), 0);
  // The numbers differ between the domains: a runtime cbid equal to cuProfilerStart's is not it.
  EXPECT_EQ(ProfilerApiOf(CudaApi::kRuntime, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart), 0);
}

}  // namespace
}  // namespace trainprof::inject::cupti
