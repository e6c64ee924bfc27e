// Reading torch.profiler (Kineto) JSON traces: collector/read/kineto_reader.h and the stages behind
// it (kineto_input, kineto_sax, kineto_mapping), on small hand-written snippets with exact values.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "collector/analysis/training_steps.h"
#include "collector/read/kineto_mapping.h"
#include "collector/read/kineto_reader.h"
#include "collector/read/kineto_sax.h"
#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
#include "collector/render/render.h"
#include "collector/report/report.h"
#include "trainprof/trace_format.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {
using test::Join;
using test::Says;

std::span<const uint8_t> Bytes(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

std::string Gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A trace as torch.profiler writes it, in miniature: one host thread (tid 11) and one GPU stream
// (device 0, stream 7).
const std::string kTrace = R"js({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85000000000, "computeMajor": 9,
                        "computeMinor": 0, "numSms": 132}],
  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2, "pg_config": [{"ranks": [0, 1]}]},
  "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 42, "tid": 11, "ts": 1000.5, "dur": 100, "args": {"External id": 1}},
    {"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "pid": 42, "tid": 11, "ts": 1001, "dur": 9.25},
    {"ph": "X", "cat": "user_annotation", "name": "## forward ##", "pid": 42, "tid": 11, "ts": 1011, "dur": 30},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 42, "tid": 11, "ts": 1012, "dur": 20.001, "args": {"Input Dims": [[2, 3]]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 42, "tid": 11, "ts": 1015, "dur": 4, "args": {"cbid": 211, "correlation": 77}},
    {"ph": "s", "id": 77, "pid": 42, "tid": 11, "ts": 1015, "cat": "ac2g", "name": "ac2g"},
    {"ph": "X", "cat": "kernel", "name": "void gemm<float>(float*)", "pid": 0, "tid": 7, "ts": 1020, "dur": 5.5,
     "args": {"device": 0, "context": 1, "stream": 7, "correlation": 77, "registers per thread": 40, "shared memory": 400,
              "grid": [512, 2, 1], "block": [128, 1, 1], "est. achieved occupancy %": 75}},
    {"ph": "f", "id": 77, "pid": 0, "tid": 7, "ts": 1020, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 1030, "dur": 2,
     "args": {"device": 0, "context": 1, "stream": 7, "correlation": 78, "bytes": 4096}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1033, "dur": 1,
     "args": {"device": 0, "context": 1, "stream": 7, "correlation": 79, "bytes": 512}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 1035, "dur": 3,
     "args": {"cuda_sync_kind": "Stream Sync", "stream": 7, "correlation": 80, "device": 0, "context": 1}},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "## forward ##", "pid": 0, "tid": 7, "ts": 1020, "dur": 16},
    {"ph": "X", "cat": "python_function", "name": "train.py(42): step", "pid": 42, "tid": 11, "ts": 1010, "dur": 50},
    {"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#SGD.step", "pid": 42, "tid": 11, "ts": 1050, "dur": 20},
    {"ph": "X", "cat": "user_annotation", "name": "Optimizer.zero_grad#SGD.zero_grad", "pid": 42, "tid": 11, "ts": 1071, "dur": 2},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 42, "tid": 11, "ts": 1100.5, "dur": 50},
    {"name": "process_name", "ph": "M", "ts": 1000, "pid": 42, "tid": 0, "args": {"name": "python3.11"}},
    {"name": "thread_name", "ph": "M", "ts": 1000, "pid": 42, "tid": 11, "args": {"name": "thread 11 (python3.11)"}},
    {"ph": "X", "cat": "Trace", "ts": 900, "dur": 300, "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)"}
  ],
  "traceName": "x.json",
  "baseTimeNanoseconds": 1700000000000000000
})js";

TEST(KinetoTime, MicrosecondTextToNanosecondsExactly) {
  EXPECT_EQ(MicrosTextToNs("12"), 12000u);
  EXPECT_EQ(MicrosTextToNs("63.813"), 63813u);
  EXPECT_EQ(MicrosTextToNs("1712195495505543.2"), 1712195495505543200u);  // beyond a double's ns precision
  EXPECT_EQ(MicrosTextToNs("4458676522690.655"), 4458676522690655u);
  EXPECT_EQ(MicrosTextToNs("1.5e3"), 1500000u);
  EXPECT_EQ(MicrosTextToNs("2E-3"), 2u);
  EXPECT_EQ(MicrosTextToNs("0.0004"), 0u);
  EXPECT_EQ(MicrosTextToNs("0.0005"), 1u);  // the fourth decimal rounds half up
  EXPECT_EQ(MicrosTextToNs("0"), 0u);
  EXPECT_EQ(MicrosTextToNs("-0.0"), 0u);
  EXPECT_EQ(MicrosTextToNs("-1"), std::nullopt);
  EXPECT_EQ(MicrosTextToNs("1e30"), std::nullopt);
  EXPECT_EQ(MicrosTextToNs("abc"), std::nullopt);
  EXPECT_EQ(MicrosTextToNs(""), std::nullopt);
  EXPECT_EQ(MicrosTextToNs("18446744073709551.615"), UINT64_MAX);
  EXPECT_EQ(MicrosTextToNs("18446744073709551.616"), std::nullopt);
}

TEST(KinetoNames, PhasesFromTorchProfilerNames) {
  using format::Phase;
  EXPECT_EQ(KinetoPhase("ProfilerStep#12"), Phase::kProfilerStep);
  EXPECT_EQ(KinetoPhase("ProfilerStep#"), Phase::kNone);
  EXPECT_EQ(KinetoPhase("ProfilerStep#1a"), Phase::kNone);
  EXPECT_EQ(KinetoPhase("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"), Phase::kDataWait);
  EXPECT_EQ(KinetoPhase("Optimizer.step#AdamW.step"), Phase::kOptimizerStep);
  EXPECT_EQ(KinetoPhase("Optimizer.zero_grad#SGD.zero_grad"), Phase::kZeroGrad);
  EXPECT_EQ(KinetoPhase("## forward ##"), Phase::kNone);
  EXPECT_EQ(HostFromKinetoFileName("/runs/log/node-3_1234.1700000000123.pt.trace.json.gz"), "node-3");
  EXPECT_EQ(HostFromKinetoFileName("a_b_77.5.pt.trace.json"), "a_b");
  EXPECT_EQ(HostFromKinetoFileName("trace.json"), "");
  EXPECT_EQ(HostFromKinetoFileName("host.5.pt.trace.json"), "");
  // The export's name for a second file of the same worker and millisecond.
  EXPECT_EQ(HostFromKinetoFileName("vm_5558.1796159834949-2.pt.trace.json"), "vm");
  EXPECT_EQ(HostFromKinetoFileName("1.0-2.pt.trace.json"), "");
}

TEST(KinetoSniff, ByContent) {
  EXPECT_TRUE(LooksLikeKineto(Bytes("  \n{\"traceEvents\": []}")));
  EXPECT_TRUE(LooksLikeKineto(Bytes("\xEF\xBB\xBF{")));
  EXPECT_TRUE(LooksLikeKineto(Bytes(Gzip("{}"))));
  EXPECT_TRUE(LooksLikeKineto(Bytes("[{}]")));  // read as JSON: "not a Kineto trace: not a JSON object"
  EXPECT_FALSE(LooksLikeKineto(Bytes("TRPROF\r\n")));
  EXPECT_FALSE(LooksLikeKineto(Bytes("")));
}

TEST(KinetoReader, MapsEveryCategory) {
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(kTrace), "host-a_42.1700000000000.pt.trace.json", &pool);
  ASSERT_TRUE(r.status.usable) << Join(r.status.errors);
  EXPECT_TRUE(r.status.errors.empty()) << Join(r.status.errors);
  EXPECT_EQ(r.status.format, ImageSource::kKineto);
  EXPECT_EQ(r.status.bytes_read, kTrace.size());
  ASSERT_TRUE(r.image);
  const TraceImage& img = *r.image;
  EXPECT_EQ(img.source, ImageSource::kKineto);
  EXPECT_EQ(img.pid, 42);
  EXPECT_EQ(*r.status.pid, 42);
  EXPECT_EQ(img.host, "host-a");
  EXPECT_EQ(img.executable, "python3.11");
  ASSERT_NE(img.Env("RANK"), nullptr);
  EXPECT_EQ(*img.Env("RANK"), "1");
  EXPECT_EQ(*img.Env("WORLD_SIZE"), "2");
  EXPECT_EQ(img.Env("LOCAL_RANK"), nullptr);
  EXPECT_EQ(img.start_ns, 900000u);  // the profiler's Trace span starts first
  EXPECT_EQ(img.end_ns, 1200000u);
  EXPECT_EQ(img.start_realtime_ns, 1700000000000000000u + 900000u);

  // Threads: the host thread, then the GPU track of gpu_user_annotation.
  ASSERT_EQ(img.threads.size(), 2u);
  EXPECT_EQ(img.threads[0].tid, 11u);
  EXPECT_EQ(pool.Get(img.threads[0].name), "thread 11 (python3.11)");
  EXPECT_EQ(pool.Get(img.threads[1].name), "GPU 0 stream 7");

  const CudaData& c = img.cuda;
  ASSERT_EQ(c.calls.size(), 1u);
  EXPECT_EQ(pool.Get(c.calls[0].name), "cudaLaunchKernel");
  EXPECT_EQ(c.calls[0].begin_ns, 1015000u);
  EXPECT_EQ(c.calls[0].end_ns, 1019000u);
  EXPECT_EQ(c.calls[0].correlation, 77u);
  EXPECT_EQ(c.calls[0].cbid, 211u);
  EXPECT_EQ(c.calls[0].api, format::CudaApi::kRuntime);
  EXPECT_TRUE(c.calls[0].returned);

  ASSERT_EQ(c.kernels.size(), 1u);
  const GpuKernel& k = c.kernels[0];
  EXPECT_EQ(pool.Get(k.name), "void gemm<float>(float*)");
  EXPECT_EQ(k.start_ns, 1020000u);
  EXPECT_EQ(k.end_ns, 1025500u);
  EXPECT_EQ(k.device, 0u);
  EXPECT_EQ(k.context, 1u);
  EXPECT_EQ(k.stream, 7u);
  EXPECT_EQ(k.correlation, 77u);
  const KernelConfig& config = c.kernel_configs[k.config];
  EXPECT_EQ(config.grid[0], 512u);
  EXPECT_EQ(config.grid[1], 2u);
  EXPECT_EQ(config.block[0], 128u);
  EXPECT_EQ(config.registers, 40u);
  EXPECT_EQ(config.static_shared, 400u);

  ASSERT_EQ(c.memcpys.size(), 1u);
  EXPECT_EQ(c.memcpys[0].kind, format::MemcpyKind::kHtoD);
  EXPECT_EQ(c.memcpys[0].src_memory, format::MemoryKind::kPageable);
  EXPECT_EQ(c.memcpys[0].dst_memory, format::MemoryKind::kDevice);
  EXPECT_TRUE(c.memcpys[0].pageable());
  EXPECT_EQ(c.memcpys[0].bytes, 4096u);
  EXPECT_EQ(c.memcpys[0].duration(), 2000u);
  ASSERT_EQ(c.memsets.size(), 1u);
  EXPECT_EQ(c.memsets[0].bytes, 512u);
  EXPECT_EQ(c.memsets[0].memory, format::MemoryKind::kDevice);
  ASSERT_EQ(c.syncs.size(), 1u);
  EXPECT_EQ(c.syncs[0].type, format::SyncType::kStreamSynchronize);
  EXPECT_TRUE(c.syncs[0].has_stream);
  EXPECT_EQ(c.syncs[0].stream, 7u);
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(pool.Get(c.devices[0].name), "NVIDIA H100");
  EXPECT_EQ(c.devices[0].cc_major, 9u);
  EXPECT_EQ(c.devices[0].sm_count, 132u);
  EXPECT_EQ(c.devices[0].global_memory, 85000000000u);

  ASSERT_EQ(img.host_ops.size(), 2u);
  EXPECT_EQ(pool.Get(img.host_ops[0].name), "aten::addmm");
  EXPECT_EQ(img.host_ops[0].kind, HostOpKind::kOperator);
  EXPECT_EQ(img.host_ops[0].end_ns - img.host_ops[0].begin_ns, 20001u);
  EXPECT_EQ(img.host_ops[0].thread, 0u);
  EXPECT_EQ(pool.Get(img.host_ops[1].name), "train.py(42): step");
  EXPECT_EQ(img.host_ops[1].kind, HostOpKind::kPythonFunction);

  // NVTX: every annotation in the summary, by domain.
  const StringId phase = pool.Find("trainprof"), gpu = pool.Find("gpu_user_annotation");
  auto range = [&](StringId domain, const std::string& name) -> const RangeSamples* {
    for (const RangeSamples& s : img.nvtx_summary.ranges)
      if (s.key.domain == domain && pool.Get(s.key.name) == name) return &s;
    return nullptr;
  };
  ASSERT_NE(range(phase, "ProfilerStep#3"), nullptr);
  EXPECT_EQ(range(phase, "ProfilerStep#3")->durations.total(), 100000u);
  ASSERT_NE(range(phase, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), nullptr);
  EXPECT_EQ(range(phase, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")->durations.total(), 9250u);
  ASSERT_NE(range(0, "## forward ##"), nullptr);
  ASSERT_NE(range(gpu, "## forward ##"), nullptr);
  EXPECT_EQ(range(gpu, "## forward ##")->durations.total(), 16000u);
  EXPECT_EQ(img.nvtx_summary.unbalanced, 0u);
  // The events: pushes and pops in time order, phases with their category.
  size_t pushes = 0;
  for (const NvtxEvent& e : img.nvtx) pushes += e.kind() == NvtxKind::kPush;
  EXPECT_EQ(pushes, 7u);  // 6 user_annotation (phases included), 1 gpu_user_annotation
  ASSERT_FALSE(img.nvtx.empty());
  EXPECT_EQ(img.nvtx[0].kind(), NvtxKind::kPush);
  EXPECT_EQ(pool.Get(img.nvtx[0].name), "ProfilerStep#3");
  EXPECT_EQ(img.nvtx[0].domain, phase);
  EXPECT_EQ(img.nvtx[0].category, static_cast<uint32_t>(format::Phase::kProfilerStep));
  EXPECT_EQ(img.nvtx[0].time_ns, 1000500u);
}

TEST(KinetoReader, PhasesKeptOnlyWhenAskedAndStepsAreProfilerSteps) {
  const std::string text = kTrace;
  Trace trace = LoadTraceBytes({{"t.json", Bytes(text)}}, ReadOptions{KeepNvtx::kPhases});
  ASSERT_EQ(trace.processes.size(), 1u);
  const Process& p = trace.processes[0];
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.world_size, 2);
  for (const NvtxEvent& e : p.first().nvtx) EXPECT_EQ(e.domain, trace.strings.Find("trainprof"));
  const ProcessPhases phases = CollectPhases(p, trace.strings.Find("trainprof"), &trace.strings);
  EXPECT_EQ(phases.Count(format::Phase::kProfilerStep), 2u);
  EXPECT_EQ(phases.Count(format::Phase::kDataWait), 1u);
  EXPECT_EQ(phases.Count(format::Phase::kOptimizerStep), 1u);
  EXPECT_EQ(phases.Count(format::Phase::kZeroGrad), 1u);
  const StepSplit split = SplitSteps(phases);
  ASSERT_EQ(split.steps.size(), 2u);
  EXPECT_EQ(split.profiler_steps, 2u);
  EXPECT_EQ(split.steps[0].begin_ns, 1000500u);
  EXPECT_EQ(split.steps[0].end_ns, 1100500u);
  EXPECT_EQ(split.steps[0].part(Part::kDataWait), 9250u);
  EXPECT_EQ(split.steps[0].part(Part::kOptimizer), 22000u);
  EXPECT_EQ(split.steps[0].data_waits, 1u);
  EXPECT_FALSE(split.steps[0].eval);  // it has an optimizer step
  EXPECT_EQ(split.steps[1].begin_ns, 1100500u);
  EXPECT_EQ(split.steps[1].duration(), 50000u);
  EXPECT_TRUE(split.steps[1].eval);
}

TEST(KinetoReader, DataWaitsMarkStepsWhenAProfilerStepHoldsSeveral) {
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
    {"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#SGD.step", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
    {"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "pid": 1, "tid": 1, "ts": 20, "dur": 2},
    {"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#SGD.step", "pid": 1, "tid": 1, "ts": 30, "dur": 5}
  ]})";
  Trace trace = LoadTraceBytes({{"t.json", Bytes(text)}});
  const ProcessPhases phases = CollectPhases(trace.processes.at(0), trace.strings.Find("trainprof"), &trace.strings);
  const StepSplit split = SplitSteps(phases);
  EXPECT_EQ(split.profiler_steps, 0u);
  ASSERT_EQ(split.steps.size(), 2u);
  EXPECT_EQ(split.steps[0].begin_ns, 1000u);
  EXPECT_EQ(split.steps[0].end_ns, 20000u);
}

TEST(KinetoReader, GzipIsTheSame) {
  const std::string gz = Gzip(kTrace);
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(gz), "t.json.gz", &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.errors.empty()) << Join(r.status.errors);
  EXPECT_EQ(r.status.bytes_read, gz.size());
  EXPECT_EQ(r.image->cuda.kernels.size(), 1u);
  EXPECT_EQ(r.image->host_ops.size(), 2u);
  // Two gzip members one after another (cat a.gz b.gz) are one stream.
  const std::string half = kTrace.substr(0, 300);
  const std::string two = Gzip(half) + Gzip(kTrace.substr(300));
  StringPool pool2;
  ReadResult r2 = ReadTraceBytes(Bytes(two), "t.json.gz", &pool2);
  EXPECT_TRUE(r2.status.errors.empty()) << Join(r2.status.errors);
  ASSERT_TRUE(r2.image);
  EXPECT_EQ(r2.image->cuda.kernels.size(), 1u);
}

// A long trace: many kernels, so that a cut keeps some.
std::string ManyKernels(int n) {
  std::string s = R"({"distributedInfo": {"rank": 3}, "traceEvents": [)";
  for (int i = 0; i < n; ++i) {
    if (i > 0) s += ",\n";
    s += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i % 7) + R"(", "pid": 0, "tid": 7, "ts": )" +
         std::to_string(1000 + i * 10) + R"(.125, "dur": 2.5, "args": {"device": 0, "stream": 7, "correlation": )" +
         std::to_string(i + 1) + "}}";
  }
  return s + "]}";
}

TEST(KinetoReport, NeverReadInCudaWindows) {
  // A Kineto file keeps its records whatever the read options say and has no chunk index: sliced
  // window by window, its look-ups would be made over all of it for each window. It gets one
  // window, and its bytes do not count towards the automatic windows (report.h).
  const char* saved = std::getenv("TRAINPROF_CUDA_WINDOW_RECORDS");
  const std::string keep = saved == nullptr ? "" : saved;
  const std::string text = ManyKernels(2000);
  ::setenv("TRAINPROF_CUDA_WINDOW_RECORDS", "3", 1);
  const Trace windowed = LoadTraceBytesForReport({{"t.json", Bytes(text)}});
  EXPECT_EQ(windowed.cuda_window_records, 3u);
  ASSERT_EQ(windowed.processes.size(), 1u);
  EXPECT_EQ(windowed.processes[0].images[0].cuda.kernels.size(), 2000u);  // kept
  EXPECT_FALSE(ReadsCudaWindows(windowed));
  ::setenv("TRAINPROF_CUDA_WINDOW_RECORDS", "0", 1);
  const Trace whole = LoadTraceBytesForReport({{"t.json", Bytes(text)}});
  EXPECT_EQ(RenderJson(Analyze(windowed, {})), RenderJson(Analyze(whole, {})));

  ::unsetenv("TRAINPROF_CUDA_WINDOW_RECORDS");
  // Only trainprof files count: the same size as JSON does not make windows, with the magic it does.
  std::vector<uint8_t> big(kAutoWindowTraceBytes, ' ');
  EXPECT_EQ(LoadTraceBytesForReport({{"big.json", big}}).cuda_window_records, 0u);
  std::memcpy(big.data(), format::kFileMagic, sizeof format::kFileMagic);
  EXPECT_EQ(LoadTraceBytesForReport({{"big.trace", big}}).cuda_window_records, kAutoWindowRecords);
  if (saved == nullptr) {
    ::unsetenv("TRAINPROF_CUDA_WINDOW_RECORDS");
  } else {
    ::setenv("TRAINPROF_CUDA_WINDOW_RECORDS", keep.c_str(), 1);
  }
}

TEST(KinetoDamage, TruncatedGzipKeepsWhatCameBefore) {
  const std::string text = ManyKernels(20000);
  std::string gz = Gzip(text);
  gz.resize(gz.size() / 2);
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(gz), "cut.json.gz", &pool);
  ASSERT_TRUE(r.status.usable);
  EXPECT_TRUE(r.status.truncated);
  EXPECT_TRUE(Says(r.status.errors, "truncated gzip")) << Join(r.status.errors);
  EXPECT_EQ(r.status.errors.size(), 1u) << Join(r.status.errors);  // the JSON cut is the same fact
  ASSERT_TRUE(r.image);
  EXPECT_GT(r.image->cuda.kernels.size(), 1000u);
  EXPECT_LT(r.image->cuda.kernels.size(), 20000u);
  EXPECT_EQ(*r.image->Env("RANK"), "3");
  EXPECT_LE(r.status.bytes_read, gz.size());
}

TEST(KinetoDamage, DamagedGzipSaysWhere) {
  // The trailer's CRC damaged: every event is read, and the damage is said.
  std::string gz = Gzip(ManyKernels(5000));
  for (size_t i = gz.size() - 8; i < gz.size() - 4; ++i) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(gz), "bad.json.gz", &pool);
  EXPECT_TRUE(Says(r.status.errors, "gzip data damaged at byte")) << Join(r.status.errors);
  EXPECT_TRUE(Says(r.status.errors, "incorrect data check")) << Join(r.status.errors);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.image->cuda.kernels.size(), 5000u);
  // Damage in the middle: what inflates before it is read, and the file is named damaged.
  std::string mid = Gzip(ManyKernels(5000));
  for (size_t i = mid.size() / 2; i < mid.size() / 2 + 64; ++i) mid[i] = static_cast<char>(mid[i] ^ 0x5a);
  ReadResult m = ReadTraceBytes(Bytes(mid), "bad.json.gz", &pool);
  EXPECT_TRUE(m.status.damaged());
  ASSERT_TRUE(m.image);
  EXPECT_GT(m.image->cuda.kernels.size(), 1000u);
  EXPECT_LT(m.image->cuda.kernels.size(), 5000u);
}

TEST(KinetoDamage, TruncatedJsonKeepsWhatCameBefore) {
  const std::string text = ManyKernels(100);
  const std::string cut = text.substr(0, text.size() / 2);
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(cut), "cut.json", &pool);
  ASSERT_TRUE(r.status.usable);
  EXPECT_TRUE(r.status.truncated);
  EXPECT_TRUE(Says(r.status.errors, "truncated JSON")) << Join(r.status.errors);
  ASSERT_TRUE(r.image);
  const size_t n = r.image->cuda.kernels.size();
  EXPECT_GE(n, 45u);
  EXPECT_LE(n, 50u);
  EXPECT_EQ(r.status.bytes_read, cut.size());
}

TEST(KinetoDamage, NotAKinetoTrace) {
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(R"({"name": "package.json", "version": "1.0"})"), "package.json", &pool);
  EXPECT_FALSE(r.status.usable);
  EXPECT_FALSE(r.image);
  EXPECT_EQ(r.status.errors.at(0), "not a Kineto trace: a JSON object without a traceEvents array");
  EXPECT_EQ(r.status.losses[Loss::header_errors], 1u);
  ReadResult g = ReadTraceBytes(Bytes(Gzip("hello")), "x.gz", &pool);
  EXPECT_FALSE(g.status.usable);
  EXPECT_EQ(g.status.errors.at(0), "not a Kineto trace: not a JSON object");
}

TEST(KinetoDamage, WrongTypesAndMissingFieldsAreNamedAndSkipped) {
  const std::string text = R"({"distributedInfo": [1], "baseTimeNanoseconds": "soon", "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "good", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "bad ts", "pid": 0, "tid": 7, "ts": "10", "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "no dur", "pid": 0, "tid": 7, "ts": 10},
    {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": 10, "dur": 1},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaFree", "pid": "x", "tid": 1, "ts": 10, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "negative", "pid": 0, "tid": 7, "ts": -5, "dur": 1},
    {"cat": "kernel", "name": "no ph", "pid": 0, "tid": 7, "ts": 10, "dur": 1},
    17,
    {"ph": "X", "cat": "kernel", "name": "good too", "pid": 0, "tid": 7, "ts": 20, "dur": 1}
  ]})";
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(text), "types.json", &pool);
  ASSERT_TRUE(r.image);
  const std::vector<std::string>& e = r.status.errors;
  EXPECT_TRUE(Says(e, "distributedInfo is an array, not an object: no rank")) << Join(e);
  EXPECT_TRUE(Says(e, "baseTimeNanoseconds is a string, not a number: ignored")) << Join(e);
  EXPECT_TRUE(Says(e, "traceEvents[1] (kernel): ts is not a non-negative number of microseconds: skipped")) << Join(e);
  EXPECT_TRUE(Says(e, "traceEvents[2] (kernel): no dur: skipped")) << Join(e);
  EXPECT_TRUE(Says(e, "traceEvents[3] (kernel): no name: skipped")) << Join(e);
  EXPECT_TRUE(Says(e, "traceEvents[4] (cuda_runtime): pid is not an integer: skipped")) << Join(e);
  EXPECT_TRUE(Says(e, "traceEvents[5] (kernel): ts is not a non-negative")) << Join(e);
  EXPECT_TRUE(Says(e, "traceEvents[6] (kernel): no ph: skipped")) << Join(e);
  EXPECT_TRUE(Says(e, "traceEvents[7] is a number, not an event object: skipped")) << Join(e);
  EXPECT_EQ(r.status.losses[Loss::malformed_records], 9u);
  ASSERT_EQ(r.image->cuda.kernels.size(), 2u);
  EXPECT_EQ(pool.Get(r.image->cuda.kernels[1].name), "good too");
  EXPECT_TRUE(r.image->env.empty());
  EXPECT_EQ(r.status.bytes_read, text.size());  // the JSON itself is whole
}

TEST(KinetoDamage, ManyProblemsListedUpToALimitAndAllCounted) {
  std::string text = R"({"traceEvents": [)";
  for (int i = 0; i < 100; ++i) text += std::string(i ? "," : "") + R"({"ph": "X", "cat": "kernel", "name": "k"})";
  text += "]}";
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(text), "many.json", &pool);
  EXPECT_EQ(r.status.losses[Loss::malformed_records], 100u);
  // No event had a time: the file gives no process (it would put the run's start at the epoch).
  EXPECT_FALSE(r.image);
  EXPECT_FALSE(r.status.usable);
  ASSERT_EQ(r.status.errors.size(), 34u);
  EXPECT_EQ(r.status.errors.front(), "no event with a usable time (ts) in traceEvents: nothing to report");
  EXPECT_EQ(r.status.errors.back(), "and 68 more problems");
}

TEST(KinetoDamage, NoEventsGiveNoProcess) {
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(R"({"traceEvents": []})"), "empty.json", &pool);
  EXPECT_FALSE(r.image);
  EXPECT_FALSE(r.status.usable);
  EXPECT_EQ(r.status.errors, std::vector<std::string>{"no event with a usable time (ts) in traceEvents: nothing to report"});
  EXPECT_EQ(r.status.losses[Loss::header_errors], 1u);
}

TEST(KinetoFiles, DirectoriesFindTensorboardTraceHandlerNames) {
  test::ScratchDir dir;
  std::filesystem::create_directories(dir / "log");
  for (const char* name : {"log/h_1.2.pt.trace.json", "log/h_3.4.pt.trace.json.gz", "log/notes.json", "pid-5.trace"})
    std::ofstream(dir / name) << "{}";
  const TraceFileList list = FindTraceFiles({dir.path()});
  ASSERT_EQ(list.files.size(), 3u);
  EXPECT_EQ(list.files[0], dir / "log/h_1.2.pt.trace.json");
  EXPECT_EQ(list.files[1], dir / "log/h_3.4.pt.trace.json.gz");
  EXPECT_EQ(list.files[2], dir / "pid-5.trace");
}

TEST(KinetoFiles, MixedWithTrainprofTraces) {
  test::TraceBuilder b(/*pid=*/500);
  const int t = b.Thread(500);
  b.Push(t, 1'000'001'000, "compute");
  b.Pop(t, 1'000'002'000);
  const std::vector<uint8_t> tp = b.Build();
  Trace trace = LoadTraceBytes({{"pid-500.trace", std::span<const uint8_t>(tp)}, {"k.json", Bytes(kTrace)}});
  ASSERT_EQ(trace.files.size(), 2u);
  EXPECT_EQ(trace.files[0].format, ImageSource::kTrainprof);
  EXPECT_EQ(trace.files[1].format, ImageSource::kKineto);
  ASSERT_EQ(trace.processes.size(), 2u);
}

// --- Kineto input as untrusted data: bounded nesting, held events bounded by the file's size, and
// numbers checked against their ranges (issue 35, classes 6 to 8).

TEST(KinetoLimits, NestingPastTheLimitEndsTheReadKeepingWhatCameBefore) {
  // Real traces nest 5 or 6 deep; an event whose args nest 100 deep ends the read there.
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "[";
  for (int i = 0; i < 100; ++i) deep += "]";
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 20, "dur": 1, "args": {"Input Dims": [[2, 3]]}},
    {"ph": "X", "cat": "kernel", "name": "c", "pid": 0, "tid": 7, "ts": 30, "dur": 1, "args": {"x": )" + deep + R"(}},
    {"ph": "X", "cat": "kernel", "name": "d", "pid": 0, "tid": 7, "ts": 40, "dur": 1}
  ]})";
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(text), "deep.json", &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.damaged());
  EXPECT_EQ(r.status.errors, std::vector<std::string>{"JSON nested more than 64 levels deep (Kineto traces nest about 6): "
                                                      "not read past there (events before it are read)"});
  EXPECT_EQ(r.status.losses[Loss::malformed_records], 1u);
  ASSERT_EQ(r.image->cuda.kernels.size(), 2u);
  EXPECT_EQ(pool.Get(r.image->cuda.kernels[1].name), "b");
  EXPECT_LT(r.status.bytes_read, text.size() + 1);
  // 64 levels are read.
  std::string ok = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"x": )";
  for (int i = 0; i < 60; ++i) ok += "[";
  for (int i = 0; i < 60; ++i) ok += "]";
  ok += "}}]}";
  StringPool pool2;
  ReadResult r2 = ReadTraceBytes(Bytes(ok), "ok.json", &pool2);
  EXPECT_TRUE(r2.status.errors.empty()) << Join(r2.status.errors);
  ASSERT_TRUE(r2.image);
  EXPECT_EQ(r2.image->cuda.kernels.size(), 1u);
}

TEST(KinetoLimits, DeepNestingIsRefusedAtOnceAndTheOtherFilesRead) {
  // 10^6 '[' (a gzip of 1 KB): refused at the 65th, not parsed to the end (what held memory per level).
  const std::string gz = Gzip(std::string(1'000'000, '['));
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(gz), "nest.json.gz", &pool);
  EXPECT_FALSE(r.image);
  EXPECT_EQ(r.status.errors, (std::vector<std::string>{
                                 "not a Kineto trace: not a JSON object",
                                 "JSON nested more than 64 levels deep (Kineto traces nest about 6): not read past there"}));
  // The rest of the input set is read.
  Trace trace = LoadTraceBytes({{"nest.json.gz", Bytes(gz)}, {"k.json", Bytes(kTrace)}});
  ASSERT_EQ(trace.files.size(), 2u);
  EXPECT_FALSE(trace.files[0].usable);
  EXPECT_TRUE(trace.files[1].usable);
  EXPECT_EQ(trace.processes.size(), 1u);
}

TEST(KinetoLimits, DevicePropertiesAreBounded) {
  std::string text = R"({"deviceProperties": [)";
  for (int i = 0; i < 1100; ++i) text += std::string(i ? "," : "") + R"({"id": )" + std::to_string(i) + "}";
  text += R"(], "traceEvents": [{"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 10, "dur": 1}]})";
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(text), "devices.json", &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.image->cuda.devices.size(), kMaxKinetoDevices);
  EXPECT_EQ(r.status.errors, std::vector<std::string>{"deviceProperties has more than 1024 entries: the rest left out"});
}

TEST(KinetoLimits, EventsPastWhatTheFileSizeHoldsAreNotRead) {
  // A gzip bomb: 270k identical operators are ~50 KB of gzip and would hold 8.6 MB. A file holds at
  // most 16 bytes per byte of it, at least 8 MiB: the operators past that are not read, and said.
  const size_t n = 270'000;
  std::string text = R"({"traceEvents": [)";
  text.reserve(n * 80);
  for (size_t i = 0; i < n; ++i) {
    text += std::string(i ? ",\n" : "") + R"({"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":)" +
            std::to_string(i % 100) + R"(,"dur":1})";
  }
  text += "]}";
  const std::string gz = Gzip(text);
  ASSERT_LT(gz.size() * kKinetoHeldPerFileByte, kKinetoHeldFloorBytes);
  EXPECT_EQ(KinetoHeldLimit(gz.size()), kKinetoHeldFloorBytes);
  EXPECT_EQ(KinetoHeldLimit(1 << 20), 16u << 20);
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(gz), "bomb.json.gz", &pool);
  ASSERT_TRUE(r.image);
  const size_t kept = r.image->host_ops.size();
  EXPECT_LT(kept, n);
  EXPECT_NEAR(static_cast<double>(kept * sizeof(HostOp)), static_cast<double>(kKinetoHeldFloorBytes), 1024.0);
  EXPECT_EQ(r.status.errors, std::vector<std::string>{"more events than a file of this size holds (8 MiB for them, 16 "
                                                      "bytes per byte of the file, at least 8 MiB): traceEvents[" +
                                                      std::to_string(kept) + "] and after not read (events before it are read)"});
  EXPECT_TRUE(r.status.damaged());
  EXPECT_LT(r.status.bytes_read, gz.size());
}

TEST(KinetoNumbers, BaseTimePastItsRangeIsSaidNotWrapped) {
  auto read = [](const std::string& base, StringPool* pool) {
    return ReadTraceBytes(Bytes(R"({"baseTimeNanoseconds": )" + base + R"(, "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 10, "dur": 1}]})"),
                          "base.json", pool);
  };
  StringPool pool;
  ReadResult r = read("18446744073709551615", &pool);  // 2^64 - 1
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.errors, std::vector<std::string>{"baseTimeNanoseconds 18446744073709551615 is not a time (0 to 2^62 ns "
                                                      "since the epoch): ignored, times read as since the epoch"});
  EXPECT_EQ(r.image->start_realtime_ns, 10'000u);
  ReadResult f = read("1e30", &pool);
  EXPECT_EQ(f.status.errors, std::vector<std::string>{"baseTimeNanoseconds 1e+30 is not a time (0 to 2^62 "
                                                      "ns since the epoch): ignored, times read as since the epoch"});
  // Each in range, their sum past 2^62.
  ReadResult sum = ReadTraceBytes(Bytes(R"({"baseTimeNanoseconds": 4611686018427387000, "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 10, "dur": 1}]})"), "sum.json", &pool);
  ASSERT_TRUE(sum.image);
  EXPECT_EQ(sum.status.errors, std::vector<std::string>{"baseTimeNanoseconds 4611686018427387000 + the first ts (10000 ns) "
                                                        "is past 2^62 ns (the year 2116): baseTimeNanoseconds ignored, "
                                                        "times read as since the epoch"});
  EXPECT_EQ(sum.image->start_realtime_ns, 10'000u);
  ReadResult good = read("1700000000000000000", &pool);
  EXPECT_TRUE(good.status.errors.empty()) << Join(good.status.errors);
  EXPECT_EQ(good.image->start_realtime_ns, 1'700'000'000'000'010'000u);
}

TEST(KinetoNumbers, HeaderNumbersOutOfRangeAreNamed) {
  const std::string text = R"({"schemaVersion": -1, "distributedInfo": {"rank": -1, "world_size": 0, "local_rank": 4294967296},
    "deviceProperties": [{"id": 4294967296}, {"id": 1, "numSms": 1099511627776, "totalGlobalMem": 18446744073709551615,
                          "computeMajor": 9.5}],
    "traceEvents": [{"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 10, "dur": 1}]})";
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(text), "header.json", &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.errors, (std::vector<std::string>{
                                 "schemaVersion -1 is not a whole number in 0..2^31-1: ignored",
                                 "distributedInfo.rank -1 is not a whole number in 0..2^31-1: ignored",
                                 "distributedInfo.world_size 0 is not a whole number in 1..2^31-1: ignored",
                                 "distributedInfo.local_rank 4294967296 is not a whole number in 0..2^31-1: ignored",
                                 "deviceProperties[0].id 4294967296 is not a device id (0..2^32-1): skipped",
                                 "deviceProperties[1].computeMajor 9.5 is out of range (0..4294967295): left out",
                                 "deviceProperties[1].numSms 1099511627776 is out of range (0..4294967295): left out",
                             }));
  EXPECT_TRUE(r.image->env.empty());
  ASSERT_EQ(r.image->cuda.devices.size(), 1u);
  EXPECT_EQ(r.image->cuda.devices[0].id, 1u);
  EXPECT_EQ(r.image->cuda.devices[0].sm_count, 0u);
  EXPECT_EQ(r.image->cuda.devices[0].global_memory, UINT64_MAX);  // in range: uint64
}

TEST(KinetoNumbers, EventNumbersOutOfRangeSkipTheEvent) {
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ok", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"device": 0, "stream": 4294967295}},
    {"ph": "X", "cat": "kernel", "name": "d", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"device": 4294967296}},
    {"ph": "X", "cat": "kernel", "name": "s", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"stream": 1099511627776}},
    {"ph": "X", "cat": "kernel", "name": "c", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"correlation": -5}},
    {"ph": "X", "cat": "kernel", "name": "g", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"grid": [8589934592, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "p", "pid": 8589934592, "tid": 7, "ts": 10, "dur": 1},
    {"ph": "X", "cat": "cuda_runtime", "name": "cb", "pid": 5, "tid": 5, "ts": 10, "dur": 1, "args": {"cbid": 70000}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hp", "pid": -5, "tid": 5, "ts": 10, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "t", "pid": 5, "tid": 8589934592, "ts": 10, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "late", "pid": 5, "tid": 5, "ts": 4611686018427387.904, "dur": 1},
    {"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"stream": -1}},
    {"ph": "X", "cat": "cpu_op", "name": "ok too", "pid": 5, "tid": -5, "ts": 10, "dur": 1}
  ]})";
  StringPool pool;
  ReadResult r = ReadTraceBytes(Bytes(text), "events.json", &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.errors, (std::vector<std::string>{
                                 "traceEvents[1] (kernel): args.device 4294967296 is out of range (0..2^32-1): skipped",
                                 "traceEvents[2] (kernel): args.stream 1099511627776 is out of range (0..2^32-1): skipped",
                                 "traceEvents[3] (kernel): args.correlation -5 is out of range (0..2^64-1): skipped",
                                 "traceEvents[4] (kernel): args.grid or args.block has an element that is not a whole "
                                 "number in 0..2^32-1: skipped",
                                 "traceEvents[5] (kernel): pid 8589934592 is out of range (32 bits): skipped",
                                 "traceEvents[6] (cuda_runtime): args.cbid 70000 is out of range (a CUPTI callback id, "
                                 "0..65535): skipped",
                                 "traceEvents[7] (cuda_runtime): pid -5 is out of range (a process id, 0..2^31-1): skipped",
                                 "traceEvents[8] (cpu_op): tid 8589934592 is out of range (32 bits): skipped",
                                 "traceEvents[9] (cpu_op): ts + dur is past 2^62 ns (the year 2116): not a time: skipped",
                             }));
  ASSERT_EQ(r.image->cuda.kernels.size(), 1u);
  EXPECT_EQ(r.image->cuda.kernels[0].stream, UINT32_MAX);
  ASSERT_EQ(r.image->cuda.syncs.size(), 1u);
  EXPECT_FALSE(r.image->cuda.syncs[0].has_stream);
  EXPECT_TRUE(r.image->cuda.calls.empty());
  ASSERT_EQ(r.image->host_ops.size(), 1u);
  EXPECT_EQ(r.image->threads[r.image->host_ops[0].thread].tid, static_cast<uint32_t>(-5));
}

}  // namespace
}  // namespace trainprof::collector
