// The function table of CPU samples (stats/functions.h, report/function_tables.h): self and total
// samples per function from Python frames (else native frames symbolized with libdw: this test
// binary's own functions), merged and per process, split by the phase each sample fell in
// (analysis/thread_phases.h), the Python frames missed reported, the table in text, JSON and CSV,
// and the folded export of samples (export/export_folded.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "collector/analysis/thread_phases.h"
#include "collector/base/output_sink.h"
#include "collector/export/export_folded.h"
#include "collector/render/render.h"
#include "collector/report/function_tables.h"
#include "collector/report/report.h"
#include "collector/stats/functions.h"
#include "collector/symbols/sample_frames.h"
#include "module_span.h"
#include "phase_builder.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
using PyFrame = TraceBuilder::PyFrame;
constexpr uint64_t T0 = 1'000'000'000;

// Planted native functions: two instances of one template, each returning a return address
// inside itself (its call to ReturnAddress), on the line kSpinLine of this file.
volatile int g_spun = 0;
constexpr uint32_t kSpinLine = __LINE__ + 3;
template <int N>
__attribute__((noinline, noipa)) uint64_t Spin() {
  const uint64_t here = test::ReturnAddress();
  g_spun = g_spun + N;
  return here;
}

const FunctionRow* Row(const std::vector<FunctionRow>& rows, std::string_view function, int process = -1,
                       std::string_view phase = "") {
  for (const FunctionRow& r : rows) {
    if (r.function == function && r.process == process && r.phase == phase) return &r;
  }
  return nullptr;
}

// The pure-Python program of the issue: 30 samples in spin_a, 10 in spin_b, both called from
// main at <module>; spin_a at two lines (28 at line 5, 2 at line 6); 2 samples in a recursion.
TraceBuilder PythonTrace(int32_t pid = 900) {
  TraceBuilder b(pid, 1, T0);
  const int t = b.Thread(static_cast<uint32_t>(pid));
  const PyFrame main{"main", "/home/u/spin.py", 20}, top{"<module>", "/home/u/spin.py", 30};
  // Native frames (the interpreter's) come first in a STACK; the table counts the Python ones.
  const uint64_t a5 = b.Stack(t, {0x1000, 0x2000}, {{"spin_a", "/home/u/spin.py", 5}, main, top});
  const uint64_t a6 = b.Stack(t, {0x1000}, {{"spin_a", "/home/u/spin.py", 6}, main, top});
  const uint64_t sb = b.Stack(t, {0x1000}, {{"spin_b", "/home/u/spin.py", 12}, main, top});
  const uint64_t rec = b.Stack(t, {}, {{"fib", "/home/u/spin.py", 40}, {"fib", "/home/u/spin.py", 41}, main, top});
  uint64_t now = T0 + 1'000;
  for (int i = 0; i < 28; ++i) b.Sample(t, now += 1'000, a5);
  for (int i = 0; i < 2; ++i) b.Sample(t, now += 1'000, a6);
  for (int i = 0; i < 10; ++i) b.Sample(t, now += 1'000, sb);
  for (int i = 0; i < 2; ++i) b.Sample(t, now += 1'000, rec);
  return b;
}

TEST(FunctionTable, PythonFramesSelfAndTotalWithTheirShare) {
  TraceBuilder b = PythonTrace();
  Trace trace = test::TraceOf({&b});
  Symbolizer sym(trace.strings);
  const FunctionTables ft = BuildFunctionTables(trace, &sym);
  EXPECT_EQ(ft.samples, 42u);
  EXPECT_EQ(ft.python_missed_samples, 0u);
  // By self samples: spin_a 30, spin_b 10, fib 2, then main and <module> (self 0, total 42).
  ASSERT_EQ(ft.merged.size(), 5u);
  EXPECT_EQ(ft.merged[0].function, "spin_a");
  EXPECT_EQ(ft.merged[0].self_samples, 30u);
  EXPECT_EQ(ft.merged[0].total_samples, 30u);
  EXPECT_DOUBLE_EQ(ft.merged[0].self_share, 100.0 * 30 / 42);
  EXPECT_EQ(ft.merged[0].file, "/home/u/spin.py");
  EXPECT_EQ(ft.merged[0].line, 5u);  // the line most of its samples were at
  EXPECT_FALSE(ft.merged[0].module.has_value());
  EXPECT_TRUE(ft.merged[0].python);
  EXPECT_EQ(ft.merged[0].Location(), "spin.py:5");
  EXPECT_EQ(ft.merged[1].function, "spin_b");
  EXPECT_EQ(ft.merged[1].self_samples, 10u);
  // The 3:1 split of the test, by name.
  EXPECT_DOUBLE_EQ(static_cast<double>(ft.merged[0].self_samples) / static_cast<double>(ft.merged[1].self_samples), 3.0);
  // A recursive function counts once per sample in total.
  EXPECT_EQ(ft.merged[2].function, "fib");
  EXPECT_EQ(ft.merged[2].self_samples, 2u);
  EXPECT_EQ(ft.merged[2].total_samples, 2u);
  EXPECT_EQ(ft.merged[2].line, 40u);  // its innermost frame's line
  const FunctionRow* m = Row(ft.merged, "main");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->self_samples, 0u);
  EXPECT_EQ(m->total_samples, 42u);
  EXPECT_DOUBLE_EQ(m->total_share, 100.0);
  // One process: its table is the merged one.
  ASSERT_EQ(ft.by_process.size(), 5u);
  EXPECT_EQ(ft.by_process[0].process, 0);
  EXPECT_EQ(ft.by_process[0].self_samples, 30u);
  EXPECT_TRUE(ft.by_phase.empty());  // no phase lookup given
}

TEST(FunctionTable, NativeFramesOfThisBinarySymbolizedWithoutTrainprofsOwn) {
  const uint64_t a = Spin<1>(), b_addr = Spin<2>();
  const test::ModuleSpan m = test::ModuleOf(a);
  TraceBuilder b(901, 1, T0);
  const int t = b.Thread(901);
  b.Module(t, m.bias, m.start, m.end, m.path, m.build_id);
  b.Module(t, 0x7000'0000'0000, 0x7000'0000'0000, 0x7000'0010'0000, "/opt/trainprof/lib/libtrainprof_inject.so");
  b.Module(t, 0x7100'0000'0000, 0x7100'0000'0000, 0x7100'0010'0000, "/nonexistent/libgone.so");
  const uint64_t handler = 0x7000'0000'1234;  // the sampler's handler: trainprof's frame, left out
  const uint64_t gone = 0x7100'0000'0042;     // a caller in a file that is gone: module+offset
  const uint64_t sa = b.Stack(t, {handler, a, gone}), sb = b.Stack(t, {handler, b_addr, gone});
  uint64_t now = T0;
  for (int i = 0; i < 30; ++i) b.Sample(t, now += 1'000, i % 3 == 0 ? sb : sa);  // 20 : 10
  Trace trace = test::TraceOf({&b});
  Symbolizer sym(trace.strings);
  const FunctionTables ft = BuildFunctionTables(trace, &sym);
  ASSERT_EQ(ft.merged.size(), 3u);
  // Demangled, with the template argument and the namespace (abi::__cxa_demangle's spelling).
  EXPECT_NE(ft.merged[0].function.find("trainprof::collector::(anonymous namespace)::Spin<1>()"), std::string::npos)
      << ft.merged[0].function;
  EXPECT_EQ(ft.merged[0].self_samples, 20u);
  ASSERT_TRUE(ft.merged[0].file.has_value());
  EXPECT_EQ(ft.merged[0].file->substr(ft.merged[0].file->rfind('/') + 1), "functions_test.cc");
  EXPECT_EQ(ft.merged[0].line, kSpinLine);
  EXPECT_EQ(ft.merged[0].module, m.path.substr(m.path.rfind('/') + 1));
  EXPECT_FALSE(ft.merged[0].python);
  EXPECT_NE(ft.merged[1].function.find("Spin<2>()"), std::string::npos) << ft.merged[1].function;
  EXPECT_EQ(ft.merged[1].self_samples, 10u);
  EXPECT_EQ(ft.merged[1].line, kSpinLine);
  EXPECT_EQ(ft.merged[2].function, "libgone.so+0x42");
  EXPECT_EQ(ft.merged[2].self_samples, 0u);
  EXPECT_EQ(ft.merged[2].total_samples, 30u);
  EXPECT_EQ(ft.merged[2].Location(), "libgone.so");
  for (const FunctionRow& r : ft.merged) EXPECT_EQ(r.function.find("0x7000"), std::string::npos) << r.function;
}

TEST(FunctionTable, SamplesWithoutFramesAndMissedPythonFramesAreCounted) {
  TraceBuilder b(902, 1, T0);
  const int t = b.Thread(902);
  const uint64_t only_trainprof = b.Stack(t, {0x7000'0000'1234});
  b.Module(t, 0x7000'0000'0000, 0x7000'0000'0000, 0x7000'0010'0000, "/opt/trainprof/lib/libtrainprof_inject.so");
  const uint64_t py = b.Stack(t, {}, {{"step", "/home/u/train.py", 42}});
  b.Sample(t, T0 + 1, 0);    // the sampler could not take the stack
  b.Sample(t, T0 + 2, 77);   // no STACK defines it (damage)
  b.Sample(t, T0 + 3, only_trainprof);
  b.Sample(t, T0 + 4, py, 3);  // 3 Python frames below `step` could not be read
  b.Sample(t, T0 + 5, py, 1);
  Trace trace = test::TraceOf({&b});
  Symbolizer sym(trace.strings);
  const FunctionTables ft = BuildFunctionTables(trace, &sym);
  EXPECT_EQ(ft.samples, 5u);
  EXPECT_EQ(ft.python_missed_samples, 2u);
  for (const char* name : {"<no stack>", "<unknown stack>", "<no frames>"}) {
    const FunctionRow* r = Row(ft.merged, name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_EQ(r->self_samples, 1u);
    EXPECT_DOUBLE_EQ(r->self_share, 20.0);
    EXPECT_FALSE(r->file.has_value());
  }
  ASSERT_NE(Row(ft.merged, "step"), nullptr);
  EXPECT_EQ(Row(ft.merged, "step")->self_samples, 2u);
  // The report says how many samples missed Python frames (catalogue: samples_python_missed).
  Report report = Analyze(trace, ReportOptions{});
  EXPECT_EQ(report.stats[Loss::samples_python_missed], 2u);
  bool said = false;
  for (const std::string& w : report.warnings) {
    said = said || w == "pid 902: 2 CPU samples had Python frames the sampler could not read (the function table "
                        "counts the frames it could read)";
  }
  EXPECT_TRUE(said) << testing::PrintToString(report.warnings);
}

TEST(FunctionTable, MergedOverProcessesAndPerProcessShares) {
  TraceBuilder a = PythonTrace(910);  // 42 samples
  TraceBuilder w(911, 910, T0);       // a DataLoader worker: 8 samples in __getitem__
  const int t = w.Thread(911);
  const uint64_t s = w.Stack(t, {}, {{"Data.__getitem__", "/home/u/spin.py", 50}, {"spin_a", "/home/u/spin.py", 5}});
  for (int i = 0; i < 8; ++i) w.Sample(t, T0 + 10 + i, s);
  Trace trace = test::TraceOf({&a, &w});
  Symbolizer sym(trace.strings);
  const FunctionTables ft = BuildFunctionTables(trace, &sym);
  EXPECT_EQ(ft.samples, 50u);
  // spin_a: 30 self in the main process; total 30 + 8 (the worker's __getitem__ calls it, as
  // this test's made-up stack says): one function over both, by name and file.
  const FunctionRow* merged = Row(ft.merged, "spin_a");
  ASSERT_NE(merged, nullptr);
  EXPECT_EQ(merged->self_samples, 30u);
  EXPECT_EQ(merged->total_samples, 38u);
  EXPECT_DOUBLE_EQ(merged->total_share, 76.0);
  ASSERT_NE(Row(ft.merged, "Data.__getitem__"), nullptr);
  EXPECT_EQ(Row(ft.merged, "Data.__getitem__")->self_samples, 8u);
  // Per process: each process's own share.
  int main_pi = trace.processes[0].pid == 910 ? 0 : 1;
  const FunctionRow* in_worker = Row(ft.by_process, "Data.__getitem__", 1 - main_pi);
  ASSERT_NE(in_worker, nullptr);
  EXPECT_DOUBLE_EQ(in_worker->self_share, 100.0);
  const FunctionRow* in_main = Row(ft.by_process, "spin_a", main_pi);
  ASSERT_NE(in_main, nullptr);
  EXPECT_EQ(in_main->total_samples, 30u);
  EXPECT_DOUBLE_EQ(in_main->self_share, 100.0 * 30 / 42);
  EXPECT_EQ(Row(ft.by_process, "Data.__getitem__", main_pi), nullptr);
}

// Phases: a step of data wait, forward (with a nested Lightning-like training_step around it),
// backward, optimizer; a worker's fetch with __getitem__ inside; samples placed in each.
TEST(FunctionTable, ByPhaseSplitsByTheInnermostPhaseOfTheSamplesThread) {
  using test::Phase;
  TraceBuilder main(920, 1, T0);
  test::PhaseThread m(main, 920);
  const int th = m.thread();
  const uint64_t fwd = main.Stack(th, {}, {{"Net.forward", "/home/u/train.py", 10}});
  const uint64_t bwd = main.Stack(th, {}, {{"backward", "/usr/lib/torch/_tensor.py", 480}});
  const uint64_t opt = main.Stack(th, {}, {{"SGD.step", "/usr/lib/torch/optim/sgd.py", 60}});
  const uint64_t loop = main.Stack(th, {}, {{"train", "/home/u/train.py", 30}});
  uint64_t t = T0 + test::kMs;
  m.Range(t, t + test::kMs, Phase::kDataWait);
  main.Sample(th, t + 2 * test::kMs, loop);  // between phases: other
  m.Push(t + 3 * test::kMs, Phase::kTrainingStep);
  m.Push(t + 4 * test::kMs, Phase::kForward);
  for (int i = 0; i < 6; ++i) main.Sample(th, t + 4 * test::kMs + 10 + i, fwd);
  m.Pop(t + 5 * test::kMs);
  main.Sample(th, t + 5 * test::kMs + 10, loop);  // inside training_step, after its forward
  m.Pop(t + 6 * test::kMs);
  m.Push(t + 7 * test::kMs, Phase::kBackward);
  for (int i = 0; i < 4; ++i) main.Sample(th, t + 7 * test::kMs + 10 + i, bwd);
  m.Pop(t + 8 * test::kMs);
  m.Push(t + 9 * test::kMs, Phase::kOptimizerStep);
  main.Sample(th, t + 9 * test::kMs + 10, opt);
  main.Sample(th, t + 10 * test::kMs, opt);  // at the end: outside (ranges are [begin, end))
  m.Pop(t + 10 * test::kMs);
  TraceBuilder worker(921, 920, T0);
  test::PhaseThread w(worker, 921);
  const uint64_t item = worker.Stack(w.thread(), {}, {{"Data.__getitem__", "/home/u/train.py", 50}});
  w.Push(t, Phase::kFetch);
  worker.Sample(w.thread(), t + 10, item);  // in the fetch, before its item
  w.Push(t + 20, Phase::kGetItem);
  for (int i = 0; i < 3; ++i) worker.Sample(w.thread(), t + 30 + i, item);
  w.Pop(t + 40);
  w.Pop(t + 50);
  Trace trace = test::TraceOf({&main, &worker});
  const ThreadPhases phases(trace);
  Symbolizer sym(trace.strings);
  const FunctionTables ft = BuildFunctionTables(
      trace, &sym, [&](size_t p, size_t i, uint32_t th2, uint64_t ns) { return phases.At(p, i, th2, ns); });
  auto self = [&](std::string_view fn, std::string_view phase) -> uint64_t {
    const FunctionRow* r = Row(ft.by_phase, fn, -1, phase);
    return r == nullptr ? 0 : r->self_samples;
  };
  EXPECT_EQ(self("Net.forward", "forward"), 6u);
  EXPECT_EQ(self("train", "training_step"), 1u);
  EXPECT_EQ(self("train", "other"), 1u);
  EXPECT_EQ(self("backward", "backward"), 4u);
  EXPECT_EQ(self("SGD.step", "optimizer"), 1u);
  EXPECT_EQ(self("SGD.step", "other"), 1u);
  EXPECT_EQ(self("Data.__getitem__", "getitem"), 3u);
  EXPECT_EQ(self("Data.__getitem__", "fetch"), 1u);
  // Phases by their samples; shares within the phase.
  ASSERT_FALSE(ft.by_phase.empty());
  EXPECT_EQ(ft.by_phase[0].phase, "forward");
  EXPECT_DOUBLE_EQ(ft.by_phase[0].self_share, 100.0);
  const FunctionRow* other = Row(ft.by_phase, "train", -1, "other");
  ASSERT_NE(other, nullptr);
  EXPECT_DOUBLE_EQ(other->self_share, 50.0);  // "other": 1 train + 1 SGD.step
}

TEST(FunctionTable, InTextJsonAndCsvWithByPhaseAndTop) {
  TraceBuilder b = PythonTrace();
  Trace trace = test::TraceOf({&b});
  Report report = Analyze(trace, ReportOptions{});
  const std::string text = RenderText(report);
  EXPECT_NE(text.find("Functions (CPU samples, --sample): 42 samples"), std::string::npos) << text;
  EXPECT_NE(text.find("spin.py:5"), std::string::npos) << text;
  EXPECT_EQ(text.find("Functions by phase"), std::string::npos);    // only with --by-phase
  EXPECT_EQ(text.find("Functions by process"), std::string::npos);  // only with --by-process
  const auto json = nlohmann::json::parse(RenderJson(report));
  ASSERT_TRUE(json.contains("functions"));
  const auto& row = json["functions"][0];
  EXPECT_EQ(row["function"], "spin_a");
  EXPECT_EQ(row["file"], "/home/u/spin.py");
  EXPECT_EQ(row["line"], 5);
  EXPECT_TRUE(row["module"].is_null());
  EXPECT_EQ(row["self_samples"], 30);
  EXPECT_EQ(row["total_samples"], 30);
  EXPECT_NEAR(row["self_share"].get<double>(), 71.43, 0.01);
  EXPECT_FALSE(row.contains("location"));  // text only
  ASSERT_TRUE(json.contains("functions_by_phase"));
  EXPECT_EQ(json["functions_by_phase"][0]["phase"], "other");  // no phase ranges at all
  EXPECT_EQ(json["functions_by_process"][0]["pid"], 900);
  const std::string functions = test::CsvByName(report)["functions.csv"];
  EXPECT_EQ(test::FirstLine(functions), "function,file,line,module,self_samples,total_samples,self_share,total_share");
  EXPECT_TRUE(test::Contains(functions, "spin_a,/home/u/spin.py,5,,30,30,"));

  ReportOptions options;
  options.by_phase = true;
  options.top = 2;
  Report cut = Analyze(trace, options);
  const std::string cut_text = RenderText(cut);
  EXPECT_NE(cut_text.find("Functions by phase"), std::string::npos) << cut_text;
  const auto cut_json = nlohmann::json::parse(RenderJson(cut));
  EXPECT_EQ(cut_json["functions"].size(), 2u);
  EXPECT_EQ(cut_json["functions_omitted"], 3);

  // No samples: no function table at all.
  TraceBuilder none(930, 1, T0);
  none.Push(none.Thread(930), T0 + 1, "io");
  none.Pop(0, T0 + 2);
  EXPECT_FALSE(nlohmann::json::parse(RenderJson(Analyze(test::TraceOf({&none}), ReportOptions{}))).contains("functions"));
  ReportOptions asked;
  asked.by_phase = true;
  const std::string said = RenderText(Analyze(test::TraceOf({&none}), asked));
  EXPECT_NE(said.find("the trace has no samples (trainprof run --sample=HZ)\n  none recorded"), std::string::npos) << said;
}

TEST(FunctionTable, TextShowsTheTopRowsWithoutTop) {
  TraceBuilder b(940, 1, T0);
  const int t = b.Thread(940);
  uint64_t now = T0;
  for (int f = 0; f < 30; ++f) {
    const uint64_t s = b.Stack(t, {}, {{"f" + std::to_string(f), "/home/u/many.py", static_cast<uint64_t>(f + 1)}});
    for (int i = 0; i <= f; ++i) b.Sample(t, now += 1'000, s);
  }
  Report report = Analyze(test::TraceOf({&b}), ReportOptions{});
  const std::string text = RenderText(report);
  EXPECT_NE(text.find("... 5 more rows (--top N shows N; JSON and CSV have them all)"), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(RenderJson(report))["functions"].size(), 30u);
}

TEST(FunctionTable, FoldedExportOfSamplesRootFirst) {
  TraceBuilder b = PythonTrace();
  const int t = 0;
  b.Push(t, T0 + 100'000, "io");  // a range with a stack too: the call-site source
  b.EventStack(t, 1);
  b.Pop(t, T0 + 200'000);
  Trace trace = test::TraceOf({&b});
  const Selection all(trace.processes.size());
  EXPECT_TRUE(HasSamples(trace, all));
  std::string out;
  StringSink sink(&out);
  const FoldedStats stats = ExportFolded(trace, all, FoldedWeight::kCalls, &sink);
  sink.Close();
  EXPECT_TRUE(stats.samples);
  EXPECT_EQ(stats.events, 42u);
  EXPECT_EQ(stats.lines, 4u);
  const std::string root = "<module> (/home/u/spin.py:30);main (/home/u/spin.py:20);";
  EXPECT_EQ(out, root + "fib (/home/u/spin.py:41);fib (/home/u/spin.py:40) 2\n" +  //
                     root + "spin_a (/home/u/spin.py:5) 28\n" + root + "spin_a (/home/u/spin.py:6) 2\n" +
                     root + "spin_b (/home/u/spin.py:12) 10\n");
  // --from callsites: the range's stack, its name as the leaf (the old output).
  std::string sites;
  StringSink ssink(&sites);
  const FoldedStats s2 = ExportFolded(trace, all, FoldedWeight::kCalls, &ssink, FoldedSource::kCallSites);
  ssink.Close();
  EXPECT_FALSE(s2.samples);
  EXPECT_EQ(sites, root + "spin_a (/home/u/spin.py:5);io 1\n");
}

// A stack deeper than the library keeps ends in the cut mark (the value 0 after a part: STACK in
// docs/trace-format.md): its outer frames count as one frame "<outer frames not recorded>", the
// report counts the samples whose counted part was cut, and the folded export roots them there.
TEST(FunctionTable, CutStacksShowTheirOuterFramesAsNotRecorded) {
  TraceBuilder b(903, 1, T0);
  const int t = b.Thread(903);
  auto bytes_of = [&](std::vector<uint64_t> native, bool native_cut, std::vector<PyFrame> python, bool python_cut) {
    std::string bytes;
    auto put = [&](uint64_t v) {
      do {
        bytes.push_back(static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
        v >>= 7;
      } while (v != 0);
    };
    for (uint64_t a : native) put(a << 1);
    if (native_cut) put(0);
    for (const PyFrame& f : python) {
      put(b.String(t, f.function) << 1 | 1);
      put(b.String(t, f.file));
      put(f.line);
    }
    if (python_cut) put(0);
    return bytes;
  };
  const PyFrame deep{"recurse", "/home/u/deep.py", 7};
  // Python frames cut: the native cut mark before them does not count (the Python part does).
  const uint64_t py_cut = b.StackBytes(t, bytes_of({0x1000}, true, {{"leaf", "/home/u/deep.py", 3}, deep}, true));
  const uint64_t py_whole = b.StackBytes(t, bytes_of({0x1000}, true, {{"leaf", "/home/u/deep.py", 3}, deep}, false));
  for (int i = 0; i < 3; ++i) b.Sample(t, T0 + 10 + i, py_cut);
  b.Sample(t, T0 + 20, py_whole);
  Trace trace = test::TraceOf({&b});
  const Stack* cut = trace.processes[0].images[0].stacks.Find(py_cut);
  ASSERT_NE(cut, nullptr);
  ASSERT_EQ(cut->frames.size(), 5u);  // native, its cut mark, 2 Python frames, their cut mark
  EXPECT_TRUE(cut->frames[1].cut && !cut->frames[1].python);
  EXPECT_TRUE(cut->frames[4].cut && cut->frames[4].python);
  EXPECT_TRUE(cut->SampleCut());
  EXPECT_FALSE(trace.processes[0].images[0].stacks.Find(py_whole)->SampleCut());

  Symbolizer sym(trace.strings);
  const std::vector<SymbolFrame> frames = SampleFrames(trace.processes[0].images[0].stacks, py_cut, &sym);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[2].function, kOuterFramesCut);
  const FunctionTables ft = BuildFunctionTables(trace, &sym);
  ASSERT_NE(Row(ft.merged, kOuterFramesCut), nullptr);
  EXPECT_EQ(Row(ft.merged, kOuterFramesCut)->total_samples, 3u);
  EXPECT_EQ(Row(ft.merged, kOuterFramesCut)->self_samples, 0u);
  EXPECT_EQ(Row(ft.merged, "leaf")->self_samples, 4u);

  Report report = Analyze(trace, ReportOptions{});
  EXPECT_EQ(report.stats[Loss::samples_stacks_cut], 3u);
  bool said = false;
  for (const std::string& w : report.warnings) {
    said = said || w == "pid 903: 3 CPU samples had stacks deeper than the 64 frames kept: their outer frames count "
                        "as <outer frames not recorded>";
  }
  EXPECT_TRUE(said) << testing::PrintToString(report.warnings);

  const Selection all(trace.processes.size());
  std::string out;
  StringSink sink(&out);
  ExportFolded(trace, all, FoldedWeight::kCalls, &sink);
  sink.Close();
  EXPECT_EQ(out, "<outer frames not recorded>;recurse (/home/u/deep.py:7);leaf (/home/u/deep.py:3) 3\n"
                 "recurse (/home/u/deep.py:7);leaf (/home/u/deep.py:3) 1\n");
}

}  // namespace
}  // namespace trainprof::collector
