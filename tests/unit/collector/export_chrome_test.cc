// The Chrome Trace Event export: every event parsed back with exact times, names and ids; gzip
// output identical once decompressed; write errors reported.
#include <gtest/gtest.h>
#include <zlib.h>

#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "collector/export/export_chrome.h"
#include "collector/base/output_sink.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::ScratchDir;
using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;
using nlohmann::json;

constexpr uint64_t kMs = 1'000'000;

// Rank 0 (pid 10) on host "a" and a process with the same pid 10 on host "b", whose monotonic
// clock is 500 s behind but whose realtime start is 2 ms after rank 0's.
struct TwoHosts {
  TraceBuilder a{10, 1, 1'000 * kMs};
  TraceBuilder b{10, 1, 500 * kMs};
  TwoHosts() {
    a.Host("a").Env("RANK", "0").StartRealtime(1'700'000'000'000'000'000ull).HeaderEnd(fmt::EndKind::kExit, 0, 1'100 * kMs);
    b.Host("b").StartRealtime(1'700'000'000'002'000'000ull).HeaderEnd(fmt::EndKind::kExit, 3, 600 * kMs);
    int t = a.Thread(10);
    a.ThreadName(t, 10, "main thread");
    const uint64_t base = 1'000 * kMs;
    a.Push(t, base + 1 * kMs, "step");
    a.Push(t, base + 2 * kMs + 500, "inner");
    a.Pop(t, base + 3 * kMs);
    a.Mark(t, base + 4 * kMs, "checkpoint");
    a.Pop(t, base + 5 * kMs + 1);
    a.Pop(t, base + 6 * kMs);  // pop without push: not written, counted
    a.Push(t, base + 7 * kMs, std::string("bad\xff name", 9));  // never closed: counted
    int t2 = a.Thread(11);
    a.Start(t, base + 8 * kMs, "async", 77);
    a.EndRange(t2, base + 9 * kMs, 77);
    a.Fork(t, base + 9 * kMs, 12);
    int tb = b.Thread(20);
    uint64_t d = b.Domain(tb, "trainprof");
    b.Push(tb, 500 * kMs + 1 * kMs, "fetch", d, 3);
    b.Pop(tb, 500 * kMs + 2 * kMs, d);
  }
};

json Export(const Trace& trace, ChromeExportStats* stats, const std::string& path) {
  std::string error;
  auto sink = OpenOutput(path, false, &error);
  EXPECT_TRUE(sink) << error;
  *stats = ExportChrome(trace, sink.get());
  EXPECT_EQ(sink->Close(), "");
  return json::parse(test::ReadFile(path));
}

std::vector<json> Events(const json& doc, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == ph) out.push_back(e);
  }
  return out;
}

TEST(ExportChrome, EventsTimesAndIdsAreExact) {
  TwoHosts run;
  Trace trace = TraceOf({&run.a, &run.b});
  ScratchDir dir;
  ChromeExportStats stats;
  json doc = Export(trace, &stats, dir / "t.json");

  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  EXPECT_EQ(doc["otherData"]["start_realtime_ns"], 1'700'000'000'000'000'000ull);
  EXPECT_EQ(stats.unmatched, 2u);  // the pop without push and the range never closed

  std::vector<json> x = Events(doc, "X");
  ASSERT_EQ(x.size(), 3u);
  // Written at their pop: inner first. ts = µs since the earliest process start (host a at 1000 ms).
  EXPECT_EQ(x[0]["name"], "inner");
  EXPECT_DOUBLE_EQ(x[0]["ts"].get<double>(), 2000.5);
  EXPECT_DOUBLE_EQ(x[0]["dur"].get<double>(), 999.5);
  EXPECT_EQ(x[0]["pid"], 10);
  EXPECT_EQ(x[0]["tid"], 10);
  EXPECT_EQ(x[0]["cat"], "nvtx");
  EXPECT_EQ(x[1]["name"], "step");
  EXPECT_DOUBLE_EQ(x[1]["ts"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(x[1]["dur"].get<double>(), 4000.001);
  // Host b: same pid, so renumbered; its clock mapped through its realtime start (+2 ms).
  EXPECT_EQ(x[2]["name"], "fetch");
  EXPECT_EQ(x[2]["pid"], 10 + 10'000'000);
  EXPECT_EQ(x[2]["cat"], "trainprof");
  EXPECT_EQ(x[2]["args"]["category"], 3);
  EXPECT_DOUBLE_EQ(x[2]["ts"].get<double>(), 3000.0);  // 2 ms later start + 1 ms
  EXPECT_DOUBLE_EQ(x[2]["dur"].get<double>(), 1000.0);

  std::vector<json> b = Events(doc, "b"), e = Events(doc, "e");
  ASSERT_EQ(b.size(), 1u);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(b[0]["id"], e[0]["id"]);
  EXPECT_EQ(b[0]["name"], "async");
  EXPECT_EQ(e[0]["tid"], 11);  // ended on another thread
  EXPECT_DOUBLE_EQ(e[0]["ts"].get<double>(), 9000.0);

  std::vector<json> inst = Events(doc, "i");
  bool mark = false, fork = false;
  for (const json& i : inst) {
    if (i["name"] == "checkpoint") {
      mark = true;
      EXPECT_EQ(i["s"], "t");
      EXPECT_DOUBLE_EQ(i["ts"].get<double>(), 4000.0);
    }
    if (i["name"] == "fork: child 12") fork = i["s"] == "p";
  }
  EXPECT_TRUE(mark);
  EXPECT_TRUE(fork);

  std::map<std::string, std::string> process_names;
  bool thread_named = false;
  for (const json& m : Events(doc, "M")) {
    if (m["name"] == "process_name") process_names[std::to_string(m["pid"].get<int64_t>())] = m["args"]["name"];
    if (m["name"] == "thread_name" && m["tid"] == 10) thread_named = m["args"]["name"] == "main thread";
  }
  EXPECT_EQ(process_names["10"], "rank 0: /usr/bin/python3 train.py");
  EXPECT_EQ(process_names["10000010"], "/usr/bin/python3 train.py");
  EXPECT_TRUE(thread_named);
}

// A header whose wall-clock start is 0xFF bytes (damage the reader says): before, the saturated
// clock offset put every event of the export at ts 0, the undamaged files' included. Now such a
// process takes its host's clock from the host's other processes, and a host with none starts at
// the axis' 0; the other processes' times do not move.
TEST(ExportChrome, ADamagedWallClockStartMovesNoOtherProcess) {
  TwoHosts run;
  run.b.StartRealtime(UINT64_MAX);
  TraceBuilder c(30, 1, 1'200 * kMs);  // host "a" (the builder's default is node0)
  c.Host("a").StartRealtime(UINT64_MAX).HeaderEnd(fmt::EndKind::kExit, 0, 1'300 * kMs);
  int tc = c.Thread(30);
  c.Push(tc, 1'201 * kMs, "late");
  c.Pop(tc, 1'202 * kMs);
  Trace trace = TraceOf({&run.a, &run.b, &c});
  ScratchDir dir;
  ChromeExportStats stats;
  json doc = Export(trace, &stats, dir / "t.json");
  EXPECT_EQ(doc["otherData"]["start_realtime_ns"], 1'700'000'000'000'000'000ull);
  std::map<std::string, double> ts;
  for (const json& x : Events(doc, "X")) ts[x["name"]] = x["ts"].get<double>();
  EXPECT_DOUBLE_EQ(ts["step"], 1000.0);    // rank 0 as in EventsTimesAndIdsAreExact
  EXPECT_DOUBLE_EQ(ts["inner"], 2000.5);
  EXPECT_DOUBLE_EQ(ts["fetch"], 1000.0);   // host b, no wall clock known: its start at 0, + 1 ms
  EXPECT_DOUBLE_EQ(ts["late"], 201'000.0); // host a's clock: 200 ms after rank 0's start, + 1 ms
  ASSERT_EQ(trace.processes.size(), 3u);
  for (const Process& p : trace.processes) {
    if (p.host == "a" && p.pid == 30) {
      EXPECT_EQ(p.start_realtime_ns, 1'700'000'000'200'000'000ull);
    } else if (p.host == "b") {
      EXPECT_EQ(p.start_realtime_ns, 0u);
    }
  }
}

// CUDA: API calls on their thread, GPU work on a track per (process, device) with a thread per
// stream, and a launch → kernel flow; exact times, names and ids.
TEST(ExportChrome, CudaCallsGpuTracksAndLaunchFlows) {
  TraceBuilder b(10, 1, 1'000 * kMs);
  b.StartRealtime(1'700'000'000'000'000'000ull).HeaderEnd(fmt::EndKind::kExit, 0, 1'100 * kMs);
  const uint64_t base = 1'000 * kMs;
  int t = b.Thread(10);
  int g = b.Thread(99);  // the CUPTI buffer drainer
  b.Device(g, 0, "NVIDIA H200");
  b.ApiCall(t, base + 1'000, base + 6'000, "cudaLaunchKernel_v7000", 11);
  b.ApiCall(t, base + 7'000, base + 9'000, "cuMemcpyHtoDAsync_v2", 12, 0, fmt::CudaApi::kDriver);
  b.ApiCall(t, base + 10'000, base + 11'000, "cudaMemsetAsync_v3020", 13, /*status=*/2);
  b.Kernel(g, {.start = base + 8'000, .end = base + 20'000, .name = "_Z6volumePf", .correlation = 11,
               .grid = {4, 2, 1}, .block = {256, 1, 1}, .registers = 40, .static_shared = 1024, .dynamic_shared = 512});
  b.Memcpy(g, {.start = base + 21'000, .end = base + 25'000, .kind = fmt::MemcpyKind::kHtoD, .bytes = 8'000,
               .correlation = 12, .src = fmt::MemoryKind::kPageable, .dst = fmt::MemoryKind::kDevice, .stream = 9});
  b.Memset(g, {.start = base + 26'000, .end = base + 27'000, .bytes = 64, .correlation = 13});
  Trace trace = TraceOf({&b});
  ScratchDir dir;
  ChromeExportStats stats;
  json doc = Export(trace, &stats, dir / "cuda.json");
  EXPECT_EQ(stats.cuda_api_calls, 3u);
  EXPECT_EQ(stats.gpu_ops, 3u);
  EXPECT_EQ(stats.flows, 3u);

  std::map<std::string, json> x;
  for (const json& e : Events(doc, "X")) x[e["name"]] = e;
  ASSERT_EQ(x.size(), 6u) << doc.dump(1);
  const json& launch = x["cudaLaunchKernel"];
  EXPECT_EQ(launch["cat"], "cuda_runtime");
  EXPECT_EQ(launch["pid"], 10);
  EXPECT_EQ(launch["tid"], 10);
  EXPECT_DOUBLE_EQ(launch["ts"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(launch["dur"].get<double>(), 5.0);
  EXPECT_EQ(launch["args"]["correlation"], 11);
  EXPECT_EQ(x["cuMemcpyHtoDAsync_v2"]["cat"], "cuda_driver");
  EXPECT_EQ(x["cudaMemsetAsync"]["args"]["status"], 2);

  const int64_t gpu_pid = 1'000'000'000;  // process 0, device 0
  const json& kernel = x["_Z6volumePf"];
  EXPECT_EQ(kernel["cat"], "kernel");
  EXPECT_EQ(kernel["pid"], gpu_pid);
  EXPECT_EQ(kernel["tid"], 7);  // the stream
  EXPECT_DOUBLE_EQ(kernel["ts"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(kernel["dur"].get<double>(), 12.0);
  EXPECT_EQ(kernel["args"]["grid"], json::array({4, 2, 1}));
  EXPECT_EQ(kernel["args"]["block"], json::array({256, 1, 1}));
  EXPECT_EQ(kernel["args"]["registers per thread"], 40);
  EXPECT_EQ(kernel["args"]["shared memory"], 1536);
  EXPECT_EQ(kernel["args"]["correlation"], 11);
  const json& copy = x["Memcpy HtoD (Pageable -> Device)"];
  EXPECT_EQ(copy["cat"], "gpu_memcpy");
  EXPECT_EQ(copy["tid"], 9);
  EXPECT_EQ(copy["args"]["bytes"], 8'000);
  EXPECT_DOUBLE_EQ(copy["args"]["memory bandwidth (GB/s)"].get<double>(), 2.0);  // 8000 B in 4 µs
  EXPECT_EQ(x["Memset (Device)"]["cat"], "gpu_memset");

  // Flows: each "s" on the calling thread at the call's start, its "f" on the GPU work's track.
  std::vector<json> s = Events(doc, "s"), f = Events(doc, "f");
  ASSERT_EQ(s.size(), 3u);
  ASSERT_EQ(f.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s[i]["id"], f[i]["id"]);
    EXPECT_EQ(s[i]["cat"], "ac2g");
    EXPECT_EQ(s[i]["pid"], 10);
    EXPECT_EQ(f[i]["pid"], gpu_pid);
    EXPECT_EQ(f[i]["bp"], "e");
  }
  EXPECT_DOUBLE_EQ(s[0]["ts"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(f[0]["ts"].get<double>(), 8.0);

  std::map<int64_t, std::string> process_names, thread_names;
  for (const json& m : Events(doc, "M")) {
    if (m["name"] == "process_name") process_names[m["pid"]] = m["args"]["name"];
    if (m["name"] == "thread_name" && m["pid"] == gpu_pid) thread_names[m["tid"]] = m["args"]["name"];
  }
  EXPECT_EQ(process_names[gpu_pid], "GPU 0: NVIDIA H200 (pid 10)");
  EXPECT_EQ(thread_names[7], "stream 7");
  EXPECT_EQ(thread_names[9], "stream 9");
}

// A CUDA call whose EVENT_STACK names a stack nothing defines (a damaged file) is exported
// without a stack member, and the JSON stays valid (it had a lone comma: found by a helper).
TEST(ExportChrome, CudaCallWithAnUndefinedStackIsValidJson) {
  TraceBuilder b(10, 1, 1'000 * kMs);
  b.StartRealtime(1'700'000'000'000'000'000ull).HeaderEnd(fmt::EndKind::kExit, 0, 1'100 * kMs);
  const int t = b.Thread(10);
  b.ApiCall(t, 1'000 * kMs + 1'000, 1'000 * kMs + 6'000, "cudaLaunchKernel_v7000", 11);
  b.EventStack(t, 777);  // no STACK record defines 777
  Trace trace = TraceOf({&b});
  ScratchDir dir;
  ChromeExportStats stats;
  json doc = Export(trace, &stats, dir / "undefined_stack.json");  // json::parse throws on invalid JSON
  EXPECT_EQ(stats.cuda_api_calls, 1u);
  const std::vector<json> calls = Events(doc, "X");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]["name"], "cudaLaunchKernel");
  EXPECT_EQ(calls[0]["args"]["correlation"], 11);
  EXPECT_FALSE(calls[0]["args"].contains("stack"));
}

TEST(ExportChrome, EndMarkersCarryTheStatusTheReportShows) {
  // Child 21 returned from main (the library saw no status) and its parent reaped it with exit 3;
  // child 22 returned too, but nobody reaped it; child 23 called exit(5); 24 was killed by 9.
  constexpr uint64_t base = 1'000 * kMs;
  TraceBuilder parent{20, 1, base};
  parent.HeaderEnd(fmt::EndKind::kExit, 0, base + 100 * kMs);
  const int tp = parent.Thread(20);
  std::vector<std::unique_ptr<TraceBuilder>> children;
  const std::pair<fmt::EndKind, int64_t> ends[] = {
      {fmt::EndKind::kReturned, 0}, {fmt::EndKind::kReturned, 0}, {fmt::EndKind::kExit, 5}, {fmt::EndKind::kSignal, 9}};
  for (int i = 0; i < 4; ++i) {
    const int32_t pid = 21 + i;
    parent.Fork(tp, base + (1 + i) * kMs, pid);
    auto c = std::make_unique<TraceBuilder>(pid, 20, base + (1 + i) * kMs);
    const int t = c->Thread(pid);
    c->ProcessEnd(t, base + 10 * kMs, ends[i].first, ends[i].second);
    children.push_back(std::move(c));
  }
  parent.ChildExit(tp, base + 11 * kMs, 21, fmt::EndKind::kExit, 3);
  Trace trace = TraceOf({&parent, children[0].get(), children[1].get(), children[2].get(), children[3].get()});
  ScratchDir dir;
  ChromeExportStats stats;
  json doc = Export(trace, &stats, dir / "t.json");
  std::map<int64_t, std::string> end_of;
  for (const json& i : Events(doc, "i")) {
    if (i["cat"] == "process" && i["pid"].get<int64_t>() != 20) end_of[i["pid"].get<int64_t>()] = i["name"];
  }
  EXPECT_EQ(end_of[21], "exit 3");
  EXPECT_EQ(end_of[22], "main returned (exit status not seen)");
  EXPECT_EQ(end_of[23], "exit 5");
  EXPECT_EQ(end_of[24], "killed by signal 9");
}

TEST(ExportChrome, GzipDecompressesToTheSameBytes) {
  TwoHosts run;
  Trace trace = TraceOf({&run.a, &run.b});
  ScratchDir dir;
  ChromeExportStats s1, s2;
  Export(trace, &s1, dir / "plain.json");
  std::string error;
  auto gz = OpenOutput(dir / "t.json.gz", true, &error);
  ASSERT_TRUE(gz) << error;
  s2 = ExportChrome(trace, gz.get());
  ASSERT_EQ(gz->Close(), "");
  EXPECT_EQ(s1.events, s2.events);

  gzFile in = gzopen((dir / "t.json.gz").c_str(), "rb");
  ASSERT_NE(in, nullptr);
  std::string unzipped;
  char buf[4096];
  int n;
  while ((n = gzread(in, buf, sizeof buf)) > 0) unzipped.append(buf, static_cast<size_t>(n));
  gzclose(in);
  std::string plain = test::ReadFile(dir / "plain.json");
  EXPECT_EQ(unzipped, plain);
  EXPECT_LT(test::ReadFile(dir / "t.json.gz").size(), plain.size());
}

TEST(ExportChrome, WriteErrorsAreReported) {
  TwoHosts run;
  Trace trace = TraceOf({&run.a, &run.b});
  for (bool gzip : {false, true}) {
    std::string error;
    auto sink = OpenOutput("/dev/full", gzip, &error);
    ASSERT_TRUE(sink) << error;
    ExportChrome(trace, sink.get());
    EXPECT_EQ(sink->Close(), "No space left on device") << "gzip " << gzip;
  }
  std::string error;
  EXPECT_FALSE(OpenOutput("/nonexistent-dir/x.json", false, &error));
  EXPECT_EQ(error, "No such file or directory");
}

}  // namespace
}  // namespace trainprof::collector
