// The Kineto export (collector/export/export_kineto.h): which files, their names, the top-level
// fields HTA reads (the rank line it greps), every event's category, times and args, exactly.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include <filesystem>

#include "collector/export/export_kineto.h"
#include "collector/export/selection.h"
#include "collector/base/output_sink.h"
#include "collector/read/exported_copies.h"
#include "collector/read/trace_set.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using namespace test;  // TraceBuilder, TraceOf, ScratchDir
using nlohmann::json;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kReal0 = 1'700'000'000'000'000'000ull;  // realtime of the launcher's start

// A launcher (pid 100, no rank) with two ranks (pids 101, 102), rank 0 with a DataLoader worker
// (pid 103, no RANK of its own) and CUDA work, and an unrelated process (pid 200, no rank).
struct Ranks {
  TraceBuilder launcher{100, 1, 1'000 * kMs};
  TraceBuilder r0{101, 100, 1'001 * kMs};
  TraceBuilder r1{102, 100, 1'002 * kMs};
  TraceBuilder worker{103, 101, 1'003 * kMs};
  TraceBuilder other{200, 1, 1'004 * kMs};
  Ranks() {
    launcher.Host("node-a").StartRealtime(kReal0).HeaderEnd(fmt::EndKind::kExit, 0, 1'100 * kMs);
    r0.Host("node-a").Env("RANK", "0").Env("WORLD_SIZE", "2").StartRealtime(kReal0 + 1 * kMs)
        .HeaderEnd(fmt::EndKind::kExit, 0, 1'090 * kMs);
    r1.Host("node-a").Env("RANK", "1").Env("WORLD_SIZE", "2").StartRealtime(kReal0 + 2 * kMs)
        .HeaderEnd(fmt::EndKind::kExit, 0, 1'090 * kMs);
    worker.Host("node-a").StartRealtime(kReal0 + 3 * kMs).HeaderEnd(fmt::EndKind::kExit, 0, 1'080 * kMs);
    other.Host("node/b").StartRealtime(kReal0 + 4 * kMs).HeaderEnd(fmt::EndKind::kExit, 0, 1'080 * kMs);
    const uint64_t b = 1'000 * kMs;  // the launcher's start: ts 0
    int t = r0.Thread(101);
    r0.ThreadName(t, 101, "MainThread");
    r0.Push(t, b + 10 * kMs, "forward");
    r0.Pop(t, b + 12 * kMs + 345);
    r0.Mark(t, b + 13 * kMs, "saved");
    int g = r0.Thread(150);
    r0.Device(g, 0, "NVIDIA H200", 9, 0, 132, 150ull << 30);
    r0.Context(g, 1, 0);
    r0.ApiCall(t, b + 20 * kMs, b + 20 * kMs + 5'000, "cudaLaunchKernel_v7000", 11);
    r0.ApiCall(t, b + 21 * kMs, b + 21 * kMs + 2'000, "cuMemcpyHtoDAsync_v2", 12, 0, fmt::CudaApi::kDriver);
    r0.ApiCall(t, b + 22 * kMs, b + 22 * kMs + 1'000, "cudaMemsetAsync_v3020", 13);
    r0.Kernel(g, {.start = b + 20 * kMs + 8'000, .end = b + 20 * kMs + 20'500, .name = "_Z6volumePf",
                  .correlation = 11, .grid = {4, 2, 1}, .block = {256, 1, 1}, .registers = 40,
                  .static_shared = 1024, .dynamic_shared = 512});
    r0.Memcpy(g, {.start = b + 21 * kMs + 3'000, .end = b + 21 * kMs + 7'000, .kind = fmt::MemcpyKind::kHtoD,
                  .bytes = 8'000, .correlation = 12, .src = fmt::MemoryKind::kPageable, .dst = fmt::MemoryKind::kDevice,
                  .stream = 9});
    r0.Memset(g, {.start = b + 22 * kMs + 2'000, .end = b + 22 * kMs + 3'000, .bytes = 64, .correlation = 13});
    r0.Sync(g, b + 23 * kMs, b + 23 * kMs + 4'000, fmt::SyncType::kStreamSynchronize, 14);
    int t1 = r1.Thread(102);
    r1.Push(t1, b + 30 * kMs, "forward");
    r1.Pop(t1, b + 31 * kMs);
    int tw = worker.Thread(103);
    worker.Push(tw, b + 40 * kMs, "fetch");
    worker.Pop(tw, b + 41 * kMs);
  }
  Trace Load() { return TraceOf({&launcher, &r0, &r1, &worker, &other}); }
};

size_t IndexOf(const Trace& trace, int32_t pid) {
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    if (trace.processes[i].pid == pid) return i;
  }
  ADD_FAILURE() << "no pid " << pid;
  return 0;
}

std::string Write(const Trace& trace, const KinetoFile& file, const std::vector<std::vector<StepSpan>>& steps,
                  const Selection& sel, const std::string& path, KinetoExportStats* stats = nullptr) {
  std::string error;
  auto sink = OpenOutput(path, false, &error);
  EXPECT_TRUE(sink) << error;
  KinetoExportStats s = ExportKineto(trace, MakeTimeAxis(trace), sel, file, steps, sink.get());
  if (stats != nullptr) *stats = s;
  EXPECT_EQ(sink->Close(), "");
  return test::ReadFile(path);
}

std::map<std::string, json> ByName(const json& doc, const std::string& ph) {
  std::map<std::string, json> out;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == ph) out[e["name"].get<std::string>()] = e;
  }
  return out;
}

TEST(ExportKineto, OneFilePerRankWorkersWithTheirRankLaunchersLeftOut) {
  Ranks run;
  Trace trace = run.Load();
  KinetoPlan plan = PlanKinetoFiles(trace, Selection(trace.processes.size()), false);
  ASSERT_EQ(plan.files.size(), 2u);
  EXPECT_EQ(plan.files[0].name, "node-a_101.1700000000001.pt.trace.json");
  EXPECT_EQ(plan.files[0].rank, 0);
  EXPECT_EQ(plan.files[0].world_size, 2);
  ASSERT_EQ(plan.files[0].processes.size(), 2u);
  EXPECT_EQ(trace.processes[plan.files[0].processes[0]].pid, 101);
  EXPECT_EQ(trace.processes[plan.files[0].processes[1]].pid, 103);  // rank 0's worker
  EXPECT_EQ(plan.files[1].name, "node-a_102.1700000000002.pt.trace.json");
  EXPECT_EQ(plan.files[1].rank, 1);
  ASSERT_EQ(plan.left_out.size(), 2u);  // the launcher and the unrelated process
  EXPECT_EQ(trace.processes[plan.left_out[0]].pid, 100);
  EXPECT_EQ(trace.processes[plan.left_out[1]].pid, 200);

  // No rank among the selected processes: one file per process; an unsafe host made file-safe.
  SelectionSpec spec;
  spec.pids = {100, 200};
  std::string error;
  std::optional<Selection> sel = ResolveSelection(trace, MakeTimeAxis(trace), spec, &error);
  ASSERT_TRUE(sel) << error;
  plan = PlanKinetoFiles(trace, *sel, true);
  ASSERT_EQ(plan.files.size(), 2u);
  EXPECT_EQ(plan.files[0].name, "node-a_100.1700000000000.pt.trace.json.gz");
  EXPECT_EQ(plan.files[1].name, "node_b_200.1700000000004.pt.trace.json.gz");
  EXPECT_FALSE(plan.files[0].rank);
  EXPECT_TRUE(plan.left_out.empty());

  // A worker selected without its rank's process still goes to the rank's file, named after it.
  spec.pids = {103};
  sel = ResolveSelection(trace, MakeTimeAxis(trace), spec, &error);
  ASSERT_TRUE(sel) << error;
  plan = PlanKinetoFiles(trace, *sel, false);
  ASSERT_EQ(plan.files.size(), 1u);
  EXPECT_EQ(plan.files[0].rank, 0);
  EXPECT_EQ(plan.files[0].name, "node-a_103.1700000000003.pt.trace.json");
}

TEST(ExportKineto, TopLevelFieldsAsHtaAndKinetoHaveThem) {
  Ranks run;
  Trace trace = run.Load();
  KinetoPlan plan = PlanKinetoFiles(trace, Selection(trace.processes.size()), false);
  ScratchDir dir;
  const std::string text = Write(trace, plan.files[0], {}, Selection(trace.processes.size()), dir / "r0.json");
  // Kineto's Trace span: the file's processes, from rank 0's start (1 ms) to its end (90 ms).
  {
    const json doc = json::parse(text);
    size_t spans = 0;
    for (const json& e : doc["traceEvents"]) {
      if (e["name"] != "PyTorch Profiler (0)") continue;
      ++spans;
      EXPECT_EQ(e["cat"], "Trace");
      EXPECT_EQ(e["pid"], "Spans");
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1000.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 89000.0);
    }
    EXPECT_EQ(spans, 1u);
  }
  // HTA's rank lookup (hta/common/trace_file.py): the first line matching "rank":\s+(\d+).
  std::istringstream lines(text);
  std::string line, rank;
  std::smatch m;
  const std::regex rank_re("\"rank\":\\s+(\\d+)");
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, rank_re)) {
      rank = m[1];
      break;
    }
  }
  EXPECT_EQ(rank, "0");
  EXPECT_EQ(line, "  \"distributedInfo\": {\"rank\": 0, \"world_size\": 2},");

  json doc = json::parse(text);
  EXPECT_EQ(doc["schemaVersion"], 1);
  EXPECT_EQ(doc["baseTimeNanoseconds"], kReal0);  // the run's start: the launcher's
  EXPECT_EQ(doc["distributedInfo"], json({{"rank", 0}, {"world_size", 2}}));
  ASSERT_EQ(doc["deviceProperties"].size(), 1u);
  EXPECT_EQ(doc["deviceProperties"][0],
            json({{"id", 0}, {"name", "NVIDIA H200"}, {"totalGlobalMem", 150ull << 30}, {"computeMajor", 9},
                  {"computeMinor", 0}, {"numSms", 132}}));

  // Rank 1's file: the same base time, its own rank.
  json doc1 = json::parse(Write(trace, plan.files[1], {}, Selection(trace.processes.size()), dir / "r1.json"));
  EXPECT_EQ(doc1["baseTimeNanoseconds"], kReal0);
  EXPECT_EQ(doc1["distributedInfo"]["rank"], 1);
  EXPECT_EQ(doc1["deviceProperties"], json::array());
}

TEST(ExportKineto, EventsInKinetosCategoriesWithExactTimesAndArgs) {
  Ranks run;
  Trace trace = run.Load();
  const size_t r0 = IndexOf(trace, 101);
  // Two operators and a Python function (as an imported trace has them).
  TraceImage& img = trace.processes[r0].images[0];
  img.host_ops.push_back({1'000 * kMs + 10 * kMs, 1'000 * kMs + 11 * kMs, trace.strings.Intern("aten::addmm"), 0,
                          HostOpKind::kOperator});
  img.host_ops.push_back({1'000 * kMs + 10 * kMs + 1, 1'000 * kMs + 10 * kMs + 2, trace.strings.Intern("train.py(3): f"),
                          0, HostOpKind::kPythonFunction});
  std::vector<std::vector<StepSpan>> steps(trace.processes.size());
  steps[r0] = {{1'000 * kMs + 5 * kMs, 1'000 * kMs + 50 * kMs, 101, 0}, {1'000 * kMs + 50 * kMs, 1'000 * kMs + 60 * kMs, 101, 1}};
  KinetoPlan plan = PlanKinetoFiles(trace, Selection(trace.processes.size()), false);
  ScratchDir dir;
  KinetoExportStats stats;
  json doc = json::parse(Write(trace, plan.files[0], steps, Selection(trace.processes.size()), dir / "r0.json", &stats));
  EXPECT_EQ(stats.steps, 2u);
  EXPECT_EQ(stats.cpu_ops, 2u);
  EXPECT_EQ(stats.gpu_ops, 4u);
  EXPECT_EQ(stats.flows, 3u);

  std::map<std::string, json> x = ByName(doc, "X");
  // ts: µs after baseTimeNanoseconds (the launcher's start), 3 decimals.
  const json& fwd = x["forward"];
  EXPECT_EQ(fwd["cat"], "user_annotation");
  EXPECT_FALSE(fwd.contains("args"));
  EXPECT_DOUBLE_EQ(fwd["ts"].get<double>(), 10000.0);
  EXPECT_DOUBLE_EQ(fwd["dur"].get<double>(), 2000.345);
  EXPECT_EQ(fwd["pid"], 101);
  EXPECT_EQ(fwd["tid"], 101);
  EXPECT_EQ(x["fetch"]["pid"], 103);  // the worker's range, in its rank's file
  EXPECT_EQ(x["ProfilerStep#0"]["cat"], "user_annotation");
  EXPECT_DOUBLE_EQ(x["ProfilerStep#0"]["ts"].get<double>(), 5000.0);
  EXPECT_DOUBLE_EQ(x["ProfilerStep#0"]["dur"].get<double>(), 45000.0);
  EXPECT_DOUBLE_EQ(x["ProfilerStep#1"]["ts"].get<double>(), 50000.0);
  EXPECT_EQ(x["aten::addmm"]["cat"], "cpu_op");
  EXPECT_EQ(x["train.py(3): f"]["cat"], "python_function");
  EXPECT_DOUBLE_EQ(x["train.py(3): f"]["dur"].get<double>(), 0.001);

  const json& launch = x["cudaLaunchKernel"];
  EXPECT_EQ(launch["cat"], "cuda_runtime");
  EXPECT_EQ(launch["tid"], 101);
  EXPECT_DOUBLE_EQ(launch["ts"].get<double>(), 20000.0);
  EXPECT_DOUBLE_EQ(launch["dur"].get<double>(), 5.0);
  EXPECT_EQ(launch["args"], json({{"External id", 11}, {"cbid", 0}, {"correlation", 11}}));
  EXPECT_EQ(x["cuMemcpyHtoDAsync_v2"]["cat"], "cuda_driver");

  const json& kernel = x["volume(float*)"];  // demangled, as Kineto's names are
  EXPECT_EQ(kernel["cat"], "kernel");
  EXPECT_EQ(kernel["pid"], 0);  // the device
  EXPECT_EQ(kernel["tid"], 7);  // the stream
  EXPECT_DOUBLE_EQ(kernel["ts"].get<double>(), 20008.0);
  EXPECT_DOUBLE_EQ(kernel["dur"].get<double>(), 12.5);
  EXPECT_EQ(kernel["args"], json({{"External id", 11}, {"device", 0}, {"context", 1}, {"stream", 7},
                                  {"correlation", 11}, {"registers per thread", 40}, {"shared memory", 1536},
                                  {"grid", {4, 2, 1}}, {"block", {256, 1, 1}}}));
  const json& copy = x["Memcpy HtoD (Pageable -> Device)"];
  EXPECT_EQ(copy["cat"], "gpu_memcpy");
  EXPECT_EQ(copy["tid"], 9);
  EXPECT_EQ(copy["args"]["bytes"], 8'000);
  EXPECT_DOUBLE_EQ(copy["args"]["memory bandwidth (GB/s)"].get<double>(), 2.0);  // 8000 B in 4 µs
  const json& memset = x["Memset (Device)"];
  EXPECT_EQ(memset["cat"], "gpu_memset");
  EXPECT_DOUBLE_EQ(memset["args"]["memory bandwidth (GB/s)"].get<double>(), 0.064);
  const json& sync = x["Stream Sync"];
  EXPECT_EQ(sync["cat"], "cuda_sync");
  EXPECT_EQ(sync["args"]["stream"], 7);
  EXPECT_EQ(sync["args"]["device"], 0);
  EXPECT_DOUBLE_EQ(sync["dur"].get<double>(), 4.0);

  std::map<std::string, json> marks = ByName(doc, "i");
  EXPECT_EQ(marks["saved"]["cat"], "user_annotation");
  EXPECT_DOUBLE_EQ(marks["saved"]["ts"].get<double>(), 13000.0);

  // ac2g: "s" at the call on its thread, "f" at the GPU work on (device, stream), id = correlation.
  std::map<int64_t, json> s, f;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "s") s[e["id"]] = e;
    if (e["ph"] == "f") f[e["id"]] = e;
  }
  ASSERT_EQ(s.size(), 3u);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(s[11]["cat"], "ac2g");
  EXPECT_EQ(s[11]["pid"], 101);
  EXPECT_DOUBLE_EQ(s[11]["ts"].get<double>(), 20000.0);
  EXPECT_EQ(f[11]["pid"], 0);
  EXPECT_EQ(f[11]["tid"], 7);
  EXPECT_EQ(f[11]["bp"], "e");
  EXPECT_DOUBLE_EQ(f[11]["ts"].get<double>(), 20008.0);
  EXPECT_EQ(f[12]["tid"], 9);

  std::map<std::string, json> meta;  // "pid name tid" → args
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "M") {
      meta[std::to_string(e["pid"].get<int64_t>()) + " " + e["name"].get<std::string>() + " " +
           std::to_string(e["tid"].get<int64_t>())] = e["args"];
    }
  }
  EXPECT_EQ(meta["101 process_name 0"]["name"], "/usr/bin/python3 train.py");  // Kineto's: the program
  EXPECT_EQ(meta["101 process_labels 0"]["labels"], "rank 0");
  EXPECT_EQ(meta["101 thread_name 101"]["name"], "MainThread");
  EXPECT_EQ(meta["0 process_labels 0"]["labels"], "GPU 0");
  EXPECT_EQ(meta["0 thread_name 7"]["name"], "stream 7");
}

TEST(ExportKineto, WindowKeepsOverlappingEventsWholeAndFlowsWithBothEnds) {
  Ranks run;
  Trace trace = run.Load();
  const TimeAxis axis = MakeTimeAxis(trace);
  SelectionSpec spec;
  ASSERT_EQ(ParseWindow("0.0200105:0.0210025", &spec.window), "");  // 20.0105 .. 21.0025 ms
  std::string error;
  std::optional<Selection> sel = ResolveSelection(trace, axis, spec, &error);
  ASSERT_TRUE(sel) << error;
  KinetoPlan plan = PlanKinetoFiles(trace, *sel, false);
  ScratchDir dir;
  json doc = json::parse(Write(trace, plan.files[0], {}, *sel, dir / "w.json"));
  std::map<std::string, json> x = ByName(doc, "X");
  // The kernel (20.008 .. 20.0205 ms) overlaps: kept whole; its launch (20.000 .. 20.005) does not,
  // so no flow for it. The copy's call (21.000 .. 21.002) overlaps; the copy (21.003 ..) does not.
  EXPECT_EQ(x.size(), 3u) << doc.dump(1);
  // Kineto's profiling window (the Trace span, read back as the image's span): the window.
  EXPECT_EQ(x["PyTorch Profiler (0)"]["cat"], "Trace");
  EXPECT_DOUBLE_EQ(x["PyTorch Profiler (0)"]["ts"].get<double>(), 20010.5);
  EXPECT_DOUBLE_EQ(x["PyTorch Profiler (0)"]["dur"].get<double>(), 992.0);
  EXPECT_TRUE(x.count("volume(float*)"));
  EXPECT_DOUBLE_EQ(x["volume(float*)"]["dur"].get<double>(), 12.5);
  EXPECT_TRUE(x.count("cuMemcpyHtoDAsync_v2"));
  for (const json& e : doc["traceEvents"]) EXPECT_NE(e["ph"], "s");
}


// `trainprof export --format kineto -o run/kineto run`, then `trainprof report run`: the copies
// name the trace images they were made from (trainprof_origin) and are left out when those are
// read too (read/exported_copies.h), said once per copy; a copy alone, or without an origin, is read.
TEST(ExportedCopies, AKinetoExportBesideItsTracesIsLeftOutAndSaid) {
  Ranks run;
  ScratchDir dir;
  const std::string traces = dir / "run", copies = dir / "run/kineto";
  std::filesystem::create_directories(copies);
  for (const TraceBuilder* b : {&run.launcher, &run.r0, &run.r1, &run.worker, &run.other}) b->WriteTo(traces);
  const std::vector<std::string> trace_files = FindTraceFiles({traces}).files;
  ASSERT_EQ(trace_files.size(), 5u);
  Trace trace = LoadTrace(trace_files);
  const Selection all(trace.processes.size());
  const KinetoPlan plan = PlanKinetoFiles(trace, all, false);
  ASSERT_EQ(plan.files.size(), 2u);  // rank 0 (pids 101, 103), rank 1 (pid 102)
  const std::string copy0 = copies + "/" + plan.files[0].name;
  const std::string copy1 = copies + "/" + plan.files[1].name + ".gz";  // a gzip copy too
  const json origin = json::parse(Write(trace, plan.files[0], {}, all, copy0))["trainprof_origin"];
  ASSERT_EQ(origin.size(), 2u);
  EXPECT_EQ(origin[0]["trace"], "pid-101.trace");
  EXPECT_EQ(origin[0]["pid"], 101);
  EXPECT_EQ(origin[0]["host"], "node-a");
  EXPECT_EQ(origin[1]["trace"], "pid-103.trace");
  {
    std::string error;
    auto sink = OpenOutput(copy1, true, &error);
    ASSERT_TRUE(sink) << error;
    ExportKineto(trace, MakeTimeAxis(trace), all, plan.files[1], {}, sink.get());
    ASSERT_EQ(sink->Close(), "");
  }

  TraceFileList list = FindTraceFiles({traces});
  ASSERT_EQ(list.files.size(), 7u);  // what the report read before: every process twice
  SkipExportedCopies(&list);
  EXPECT_EQ(list.files, trace_files);
  ASSERT_EQ(list.warnings.size(), 2u);
  EXPECT_EQ(list.warnings[0], copy0 + ": left out: trainprof exported it from " + traces + "/pid-101.trace, " + traces +
                                  "/pid-103.trace, which are read instead (each process is counted once)");
  EXPECT_EQ(list.warnings[1], copy1 + ": left out: trainprof exported it from " + traces +
                                  "/pid-102.trace, which is read instead (each process is counted once)");
  EXPECT_EQ(list.losses[Loss::exported_copies], 2u);
  EXPECT_EQ(LoadTrace(list.files).processes.size(), 5u);

  // The copies alone: read as before.
  list = FindTraceFiles({copies});
  SkipExportedCopies(&list);
  EXPECT_EQ(list.files.size(), 2u);
  EXPECT_TRUE(list.warnings.empty());
  EXPECT_EQ(list.losses[Loss::exported_copies], 0u);

  // The worker's trace gone: rank 0's copy is still left out (pid 101's trace is read), and the
  // worker it also holds is named.
  std::filesystem::remove(traces + "/pid-103.trace");
  list = FindTraceFiles({traces});
  SkipExportedCopies(&list);
  EXPECT_EQ(list.files.size(), 4u);
  ASSERT_EQ(list.warnings.size(), 2u);
  EXPECT_NE(list.warnings[0].find("; left out with it: pid 103 on node-a (pid-103.trace), not among the trace files "
                                  "given (give " + copy0 + " alone to read what it holds)"),
            std::string::npos)
      << list.warnings[0];

  // A Kineto file without an origin (torch's own), or with one trainprof did not write: read.
  std::string text = test::ReadFile(copy0);
  const size_t at = text.find("  \"trainprof_origin\"");
  const size_t end = text.find('\n', at);
  TraceBuilder::WriteBytes(copy0, std::vector<uint8_t>(text.begin(), text.begin() + static_cast<long>(at)));
  {
    std::string rest = text.substr(end + 1);
    std::ofstream(copy0, std::ios::app) << rest;
  }
  std::string forged = text;
  forged.replace(forged.find("\"pid\":101"), 9, "\"pid\":\"x\"");
  TraceBuilder::WriteBytes(copies + "/forged.pt.trace.json", std::vector<uint8_t>(forged.begin(), forged.end()));
  list = FindTraceFiles({traces});
  SkipExportedCopies(&list);
  EXPECT_EQ(list.files.size(), 6u);  // 4 traces, the copy without its origin, the forged one; copy1 left out
  ASSERT_EQ(list.warnings.size(), 1u);
  EXPECT_EQ(list.warnings[0].rfind(copy1, 0), 0u);
}

}  // namespace
}  // namespace trainprof::collector
