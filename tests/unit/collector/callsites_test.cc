// Stacks (format v3) in the collector: STACK/EVENT_STACK/MODULE/SAMPLE read into the model
// (damage-tolerant), native addresses of this test binary symbolized with libdw (function,
// file:line, demangled; build id checked; missing files as module+0xOFF), trainprof's frames
// dropped, call sites grouped, and `report --by-callsite` in text, JSON and CSV.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <string>

#include "collector/base/output_sink.h"
#include "collector/export/export_chrome.h"
#include "collector/export/export_folded.h"
#include "collector/render/render.h"
#include "collector/report/report.h"
#include "collector/report/callsite_tables.h"
#include "collector/stats/callsites.h"
#include "collector/symbols/symbolizer.h"
#include "module_span.h"
#include "phase_builder.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::ModuleOf;
using test::ModuleSpan;
using test::ReturnAddress;
using test::TraceBuilder;
constexpr uint64_t T0 = 1'000'000'000;

// Planted call sites: each returns the return address of its call to ReturnAddress(), i.e. an
// address inside itself, on the line kLoadLine / kSaveLine of this file.
volatile int g_planted = 0;
constexpr uint32_t kLoadLine = __LINE__ + 2;
__attribute__((noinline, noipa)) uint64_t LoadBatch() {
  uint64_t a = ReturnAddress();
  g_planted = 1;
  return a;
}
constexpr uint32_t kSaveLine = __LINE__ + 2;
__attribute__((noinline, noipa)) uint64_t SaveCheckpoint() {
  uint64_t a = ReturnAddress();
  g_planted = 2;
  return a;
}

std::string Base(const std::string& p) { return p.substr(p.rfind('/') + 1); }

// 30 "io" ranges from LoadBatch, 10 from SaveCheckpoint (the planted program of the issue), an
// innermost frame in trainprof's library (left out), a cudaStreamSynchronize with a stack.
TraceBuilder PlantedTrace(const ModuleSpan& m, uint64_t load, uint64_t save) {
  TraceBuilder b(700, 1, T0);
  const int t = b.Thread(700);
  b.Module(t, m.bias, m.start, m.end, m.path, m.build_id);
  b.Module(t, 0x7000'0000'0000, 0x7000'0000'0000, 0x7000'0010'0000, "/opt/trainprof/lib/libtrainprof_inject.so");
  const uint64_t hook = 0x7000'0000'1234;
  const uint64_t a = b.Stack(t, {hook, load}), s = b.Stack(t, {hook, save});
  uint64_t now = T0 + 1'000;
  for (int i = 0; i < 40; ++i) {
    b.Push(t, now, "io");
    b.EventStack(t, i < 30 ? a : s);
    b.Pop(t, now + (i < 30 ? 100 : 1'000));
    now += 2'000;
  }
  b.ApiEnter(t, now, "cudaStreamSynchronize_v3020", 5);
  b.ApiExit(t, now + 50'000, 5);
  b.EventStack(t, s);
  b.Mark(t, now + 60'000, "checkpoint");
  b.EventStack(t, s);
  b.Sample(t, now + 70'000, a, 2);
  return b;
}

struct Planted {
  ModuleSpan module;
  uint64_t load = LoadBatch(), save = SaveCheckpoint();
  Planted() : module(ModuleOf(reinterpret_cast<uint64_t>(&LoadBatch))) {}
};

ReadResult ReadPlanted(const Planted& p, StringPool* pool) {
  TraceBuilder b = PlantedTrace(p.module, p.load, p.save);
  return ReadTraceBytes(b.Build(), b.FileName(), pool);
}

TEST(Stacks, ReaderDecodesStacksModulesUsesAndSamples) {
  Planted p;
  StringPool pool;
  ReadResult r = ReadPlanted(p, &pool);
  EXPECT_EQ(r.status.errors, std::vector<std::string>{});
  ASSERT_TRUE(r.image);
  const ImageStacks& st = r.image->stacks;
  ASSERT_EQ(st.stacks.size(), 2u);
  EXPECT_EQ(st.stacks[0].id, 1u);
  ASSERT_EQ(st.stacks[0].frames.size(), 2u);
  EXPECT_EQ(st.stacks[0].frames[1].address, p.load);
  ASSERT_EQ(st.modules.size(), 2u);
  EXPECT_EQ(pool.Get(st.modules[0].path), p.module.path);
  EXPECT_EQ(pool.Get(st.modules[0].build_id), p.module.build_id);
  EXPECT_EQ(st.ModuleOf(p.load), &st.modules[0]);
  // Ranges summed per (name, stack): 30 × 100 ns at stack 1, 10 × 1 µs at stack 2; one mark.
  ASSERT_EQ(st.uses.size(), 3u);
  uint64_t range_a = 0, range_s = 0, marks = 0;
  for (const StackUse& u : st.uses) {
    if (u.kind == StackUseKind::kMark) {
      marks += u.count;
      EXPECT_EQ(pool.Get(u.name), "checkpoint");
      continue;
    }
    EXPECT_EQ(pool.Get(u.name), "io");
    (u.stack == 1 ? range_a : range_s) += u.count;
    EXPECT_EQ(u.total_ns, u.stack == 1 ? 30u * 100 : 10u * 1'000);
  }
  EXPECT_EQ(range_a, 30u);
  EXPECT_EQ(range_s, 10u);
  EXPECT_EQ(marks, 1u);
  ASSERT_EQ(r.image->cuda.calls.size(), 1u);
  EXPECT_EQ(r.image->cuda.calls[0].stack, 2u);
  ASSERT_EQ(st.samples.size(), 1u);
  EXPECT_EQ(st.samples[0].stack, 1u);
  EXPECT_EQ(st.samples[0].python_missed, 2u);
}

extern "C" void _start();  // crt1.o, in every executable

TEST(Stacks, SymbolizesAddressesOfThisBinaryWithLibdw) {
  Planted p;
  StringPool pool;
  ReadResult r = ReadPlanted(p, &pool);
  ASSERT_TRUE(r.image);
  Symbolizer sym(pool);
  const SymbolFrame f = sym.Native(r.image->stacks, p.load);
  // Demangled: the namespace and the parameter list, as abi::__cxa_demangle writes them.
  EXPECT_EQ(f.function, "trainprof::collector::(anonymous namespace)::LoadBatch()");
  ASSERT_TRUE(f.file.has_value());
  EXPECT_EQ(Base(*f.file), "callsites_test.cc");
  EXPECT_EQ(f.line, kLoadLine);
  EXPECT_EQ(f.module, Base(p.module.path));
  EXPECT_EQ(sym.Native(r.image->stacks, p.save).line, kSaveLine);
  // The stack shown: trainprof's hook frame dropped, the call site its first frame.
  const ShownStack shown = sym.Show(r.image->stacks, 2);
  ASSERT_TRUE(shown.known);
  ASSERT_EQ(shown.frames.size(), 1u);
  EXPECT_EQ(shown.call_site, 0u);
  EXPECT_EQ(shown.frames[0].function, "trainprof::collector::(anonymous namespace)::SaveCheckpoint()");
  EXPECT_FALSE(sym.Show(r.image->stacks, 99).known);
  // crt1's _start has no line table: its frame has no file, not a neighbouring unit's line.
  const SymbolFrame start = sym.Native(r.image->stacks, reinterpret_cast<uint64_t>(&_start) + 8);
  EXPECT_EQ(start.function, "_start");
  EXPECT_FALSE(start.file.has_value()) << *start.file << ":" << start.line.value_or(0);
}

TEST(Stacks, AnotherBuildOrAMissingFileGivesModulePlusOffset) {
  Planted p;
  for (const auto& [path, build_id] : {std::pair{p.module.path, std::string(40, 'a')},
                                       std::pair{std::string("/nonexistent/libgone.so"), std::string()}}) {
    TraceBuilder b(701, 1, T0);
    const int t = b.Thread(701);
    b.Module(t, p.module.bias, p.module.start, p.module.end, path, build_id);
    StringPool pool;
    ReadResult r = ReadTraceBytes(b.Build(), b.FileName(), &pool);
    ASSERT_TRUE(r.image);
    Symbolizer sym(pool);
    const SymbolFrame f = sym.Native(r.image->stacks, p.load);
    char off[32];
    std::snprintf(off, sizeof off, "+0x%llx", static_cast<unsigned long long>(p.load - p.module.bias));
    EXPECT_EQ(f.function, Base(path) + off) << path;
    EXPECT_FALSE(f.file.has_value());
    // ... and the report says which file and why, once however many frames are in it.
    sym.Native(r.image->stacks, p.save);
    const std::vector<std::string> problems = sym.Problems();
    ASSERT_EQ(problems.size(), 1u) << path;
    const std::string why = build_id.empty()
        ? " is not on this machine, not readable or not an ELF file"
        : " was rebuilt since the run (build id " + build_id + " in the trace, " + p.module.build_id + " in the file)";
    EXPECT_EQ(problems[0], "stacks: " + path + why + ": its frames show as " + Base(path) + "+0xOFFSET");
  }
  // No module at all: the address in hex. A pseudo-object with no file (the vDSO) is no problem.
  StringPool pool;
  Symbolizer sym(pool);
  EXPECT_EQ(sym.Native(ImageStacks{}, 0x1234).function, "0x1234");
  TraceBuilder b(702, 1, T0);
  const int t = b.Thread(702);
  b.Module(t, 0x7fff'0000'0000, 0x7fff'0000'0000, 0x7fff'0000'2000, "linux-vdso.so.1", "");
  ReadResult r = ReadTraceBytes(b.Build(), b.FileName(), &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(sym.Native(r.image->stacks, 0x7fff'0000'0100).function, "linux-vdso.so.1+0x100");
  EXPECT_EQ(sym.Problems(), std::vector<std::string>{});
}

// A module recorded without a build id: only a file whose PT_LOAD span is the recorded one and
// that was not modified after the process started is read. Before, any file at the path was, and
// a library replaced on disk named a wrong function for every frame (the tester's libplug.so).
TEST(Stacks, AModuleWithoutBuildIdIsCheckedBySpanAndTime) {
  Planted p;
  struct stat st {};
  ASSERT_EQ(::stat(p.module.path.c_str(), &st), 0);
  const uint64_t mtime = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(st.st_mtim.tv_nsec);
  struct Case {
    uint64_t end, start_realtime_ns;
    std::string why;  // "" : trusted
  };
  char span[96];
  std::snprintf(span, sizeof span, "its load span 0x%llx-0x%llx is not the recorded 0x%llx-0x%llx",
                static_cast<unsigned long long>(p.module.start - p.module.bias),
                static_cast<unsigned long long>(p.module.end - p.module.bias),
                static_cast<unsigned long long>(p.module.start - p.module.bias),
                static_cast<unsigned long long>(p.module.end + 0x1000 - p.module.bias));
  for (const Case& c : {Case{p.module.end, mtime + 1'000'000'000, ""},  // started after the build
                        Case{p.module.end, 0, ""},                       // start unknown: the span decides
                        Case{p.module.end + 0x1000, mtime + 1'000'000'000, span},
                        Case{p.module.end, mtime - 1'000'000'000, "modified "}}) {
    SCOPED_TRACE(c.why);
    TraceBuilder b(703, 1, T0);
    b.StartRealtime(c.start_realtime_ns);
    const int t = b.Thread(703);
    b.Module(t, p.module.bias, p.module.start, c.end, p.module.path, "");
    StringPool pool;
    ReadResult r = ReadTraceBytes(b.Build(), b.FileName(), &pool);
    ASSERT_TRUE(r.image);
    Symbolizer sym(pool);
    const SymbolFrame f = sym.Native(r.image->stacks, p.load);
    sym.Native(r.image->stacks, p.save);
    const std::vector<std::string> problems = sym.Problems();
    if (c.why.empty()) {
      EXPECT_EQ(f.function, "trainprof::collector::(anonymous namespace)::LoadBatch()");
      EXPECT_EQ(problems, std::vector<std::string>{});
      continue;
    }
    char off[32];
    std::snprintf(off, sizeof off, "+0x%llx", static_cast<unsigned long long>(p.load - p.module.bias));
    EXPECT_EQ(f.function, Base(p.module.path) + off);
    EXPECT_FALSE(f.file.has_value());
    ASSERT_EQ(problems.size(), 1u);
    const std::string head = "stacks: " + p.module.path + " is not the file of the run (no build id in the trace; " + c.why;
    EXPECT_EQ(problems[0].substr(0, head.size()), head) << problems[0];
    EXPECT_NE(problems[0].find(": its frames show as " + Base(p.module.path) + "+0xOFFSET"), std::string::npos) << problems[0];
  }
}

TEST(Stacks, DamagedStackIsSaidAndTheRestKept) {
  Planted p;
  TraceBuilder b(702, 1, T0);
  const int t = b.Thread(702);
  b.Module(t, p.module.bias, p.module.start, p.module.end, p.module.path, p.module.build_id);
  const uint64_t bad = b.StackBytes(t, std::string("\x80", 1));  // a varint cut short
  const uint64_t good = b.Stack(t, {p.load});
  b.Push(t, T0 + 100, "io");
  b.EventStack(t, bad);
  b.Pop(t, T0 + 200);
  b.Push(t, T0 + 300, "io");
  b.EventStack(t, good);
  b.Pop(t, T0 + 400);
  b.NewChunk(t);
  b.EventStack(t, good);  // at a chunk's start: belongs to nothing, ignored
  b.Push(t, T0 + 500, "io");
  b.EventStack(t, 77);    // no STACK defines it
  b.Pop(t, T0 + 900);
  StringPool pool;
  ReadResult r = ReadTraceBytes(b.Build(), b.FileName(), &pool);
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.status.errors.size(), 2u);
  EXPECT_EQ(r.status.errors[0].rfind("STACK 1 at byte ", 0), 0u) << r.status.errors[0];
  EXPECT_NE(r.status.errors[0].find("frame 1 does not decode (the stack is left out)"), std::string::npos);
  EXPECT_EQ(r.status.errors[1], "undefined stack id 1 (2 uses in all)");
  EXPECT_EQ(r.status.losses[Loss::malformed_records], 1u);
  EXPECT_EQ(r.status.losses[Loss::undefined_ids], 2u);
  ASSERT_EQ(r.image->stacks.stacks.size(), 1u);
  EXPECT_EQ(r.image->stacks.stacks[0].id, good);
  // Every range still counted in the NVTX table; the one with a good stack has its call site.
  ASSERT_EQ(r.image->nvtx_summary.ranges.size(), 1u);
  EXPECT_EQ(r.image->nvtx_summary.ranges[0].durations.count(), 3u);
  ASSERT_EQ(r.image->stacks.uses.size(), 3u);
}

// The call sites of a trace with one "forward" range (1 µs) whose stack is `native` then
// `python`, in module `m` (none: nullptr).
std::vector<CallSiteRow> CallSitesOfOneRange(const ModuleSpan* m, const std::vector<uint64_t>& native,
                                             const std::vector<TraceBuilder::PyFrame>& python) {
  TraceBuilder b(703, 1, T0);
  const int t = b.Thread(703);
  if (m != nullptr) b.Module(t, m->bias, m->start, m->end, m->path, m->build_id);
  const uint64_t s = b.Stack(t, native, python);
  b.Push(t, T0 + 100, "forward");
  b.EventStack(t, s);
  b.Pop(t, T0 + 1'100);
  Trace trace = test::TraceOf({&b});
  Symbolizer sym(trace.strings);
  return CallSites(trace, &sym);
}

TEST(Stacks, PythonFramesComeFirstOutsideTorchsPackage) {
  Planted p;
  const std::vector<CallSiteRow> rows =
      CallSitesOfOneRange(&p.module, {p.load},
                          {{"range_push", "/usr/lib/python3/dist-packages/torch/cuda/nvtx.py", 26},
                           {"step", "/home/u/train.py", 42},
                           {"<module>", "/home/u/train.py", 60}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].Site(), "step at train.py:42");
  ASSERT_EQ(rows[0].frames.size(), 2u);
  EXPECT_FALSE(rows[0].frames[0].module.has_value());
  EXPECT_EQ(rows[0].frames[1].function, "<module>");
  EXPECT_EQ(rows[0].total_ns, 1'000u);
}

// The libraries a range passes through are not its call site: the nvtx package's decorator,
// multiprocessing's process.py running a DataLoader worker, frozen runpy; a stack of library
// frames only (a worker's fetch) takes the innermost library frame, never the shim's.
TEST(Stacks, CallSiteSkipsTheNvtxPackageAndTheStandardLibrary) {
  struct Case {
    std::vector<TraceBuilder::PyFrame> frames;
    std::string site;
  };
  const std::vector<Case> cases = {
      {{{"annotate.__call__.<locals>.inner", "/venv/lib/python3.11/site-packages/nvtx/nvtx.py", 89},
        {"load", "/home/u/lib/python3-tools/train.py", 12},
        {"<module>", "<frozen runpy>", 88}},
       "load at train.py:12"},
      {{{"_fetch", "/work/python/_trainprof/hooks.py", 40},
        {"_worker_loop", "/usr/lib/python3/dist-packages/torch/utils/data/_utils/worker.py", 308},
        {"run", "/usr/lib/python3.11/multiprocessing/process.py", 108},
        {"_bootstrap", "/usr/lib/python3.11/multiprocessing/process.py", 314}},
       "_worker_loop at torch/utils/data/_utils/worker.py:308"},
      {{{"run", "/opt/py/lib/python3.12/threading.py", 982},
        {"step", "/srv/lib/python3.12x/step.py", 7}},
       "step at step.py:7"},
  };
  for (const Case& c : cases) {
    const std::vector<CallSiteRow> rows = CallSitesOfOneRange(nullptr, {}, c.frames);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].Site(), c.site);
  }
}

TEST(Stacks, ByCallsiteInTextJsonAndCsv) {
  Planted p;
  TraceBuilder b = PlantedTrace(p.module, p.load, p.save);
  Trace trace = test::TraceOf({&b});
  ReportOptions options;
  options.by_callsite = true;
  Report report = Analyze(trace, options);
  // Per (name, call site): the range from each function with its count, the sync, the mark.
  ASSERT_EQ(report.callsites.size(), 4u);
  const std::string load = "trainprof::collector::(anonymous namespace)::LoadBatch() at callsites_test.cc:" +
                           std::to_string(kLoadLine);
  const std::string save = "trainprof::collector::(anonymous namespace)::SaveCheckpoint() at callsites_test.cc:" +
                           std::to_string(kSaveLine);
  EXPECT_EQ(report.callsites[0].name, "cudaStreamSynchronize");
  EXPECT_EQ(report.callsites[0].calls, 1u);
  EXPECT_EQ(report.callsites[0].total_ns, 50'000u);
  EXPECT_EQ(report.callsites[0].Site(), save);
  EXPECT_EQ(report.callsites[1].name, "io");
  EXPECT_EQ(report.callsites[1].calls, 10u);
  EXPECT_EQ(report.callsites[1].Site(), save);
  EXPECT_EQ(report.callsites[2].calls, 30u);
  EXPECT_EQ(report.callsites[2].total_ns, 3'000u);
  EXPECT_EQ(report.callsites[2].Site(), load);
  EXPECT_EQ(report.callsites[3].name, "checkpoint");
  EXPECT_EQ(report.callsites[3].kind, StackedKind::kMark);

  const std::string text = RenderText(report);
  EXPECT_NE(text.find("Call sites"), std::string::npos) << text;
  EXPECT_NE(text.find("LoadBatch() at callsites_test.cc:" + std::to_string(kLoadLine)), std::string::npos) << text;

  const auto json = nlohmann::json::parse(RenderJson(report));
  ASSERT_TRUE(json.contains("callsites"));
  const auto& row = json["callsites"][2];
  EXPECT_EQ(row["calls"], 30);
  EXPECT_EQ(row["total_ns"], 3000);
  EXPECT_EQ(row["kind"], "range");
  EXPECT_EQ(row["name"], "io");
  EXPECT_EQ(row["line"], kLoadLine);
  ASSERT_TRUE(row["frames"].is_array());
  EXPECT_EQ(row["frames"][0]["function"], "trainprof::collector::(anonymous namespace)::LoadBatch()");
  EXPECT_EQ(row["frames"][0]["line"], kLoadLine);
  EXPECT_EQ(row["frames"][0]["module"], Base(p.module.path));

  const std::string callsites = test::CsvByName(report)["callsites.csv"];
  EXPECT_EQ(test::FirstLine(callsites), "kind,name,calls,total_ns,call_site,function,file,line,module,caller,frames");
  EXPECT_TRUE(test::Contains(callsites, "range,io,30,3000,"));

  // Without --by-callsite: JSON and CSV still have the rows, the text report not.
  Report plain = Analyze(trace, ReportOptions{});
  EXPECT_EQ(RenderText(plain).find("Call sites"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(RenderJson(plain)).contains("callsites"));
}

// The Bottleneck names the call site behind the sync stall and behind the largest phase: 10 steps
// of 10 ms, forward 3 ms opened from LoadBatch (standing in for the user's loop), then a
// cudaStreamSynchronize from SaveCheckpoint that keeps the GPU idle (as GpuBottleneck's
// HostInStreamSynchronizeAfterItem).
TEST(Stacks, BottleneckNamesTheCallSiteOfTheSyncStall) {
  namespace fmt = trainprof::format;
  using test::kMs;
  constexpr uint64_t kUs = 1'000;
  Planted p;
  TraceBuilder main(200, 1, T0);
  test::PhaseThread m(main, 200);
  const int g = main.Thread(299);
  main.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 2'000 * kMs);
  main.GpuStatus(m.thread(), T0 + 1, fmt::GpuState::kOn);
  main.Device(g, 0, "NVIDIA A100-SXM4-80GB");
  main.Module(m.thread(), p.module.bias, p.module.start, p.module.end, p.module.path, p.module.build_id);
  const uint64_t loop = main.Stack(m.thread(), {p.load}), sync = main.Stack(m.thread(), {p.save});
  uint64_t corr = 1, s = T0 + 10 * kMs;
  for (int i = 0; i < 10; ++i, s += 10 * kMs) {
    auto at = [&](uint64_t us) { return s + us * kUs; };
    m.Range(s, at(100), fmt::Phase::kDataWait);
    m.Push(at(100), fmt::Phase::kForward);
    main.EventStack(m.thread(), loop);
    main.ApiCall(m.thread(), at(100), at(110), "cudaLaunchKernel_v7000", corr);
    main.Kernel(g, {.start = at(120), .end = at(3'000), .name = "_Z6kernelPf", .correlation = corr++});
    m.Pop(at(3'100));
    m.Push(at(3'100), fmt::Phase::kBackward);
    main.ApiCall(m.thread(), at(3'100), at(3'110), "cudaLaunchKernel_v7000", corr);
    main.Kernel(g, {.start = at(3'120), .end = at(3'400), .name = "_Z6kernelPf", .correlation = corr++});
    m.Pop(at(3'500));
    main.ApiEnter(m.thread(), at(3'510), "cudaStreamSynchronize_v3020", corr);
    main.ApiExit(m.thread(), at(9'900), corr++);
    main.EventStack(m.thread(), sync);
  }
  m.EpochEnd(s, 1 * kMs);
  Report report = Analyze(test::TraceOf({&main}), ReportOptions{});
  ASSERT_EQ(report.bottleneck.processes.size(), 1u);
  const TrainingProcess& t = report.bottleneck.processes[0];
  ASSERT_TRUE(t.gpu);
  ASSERT_EQ(t.gpu->cause, IdleCause::kSync);
  const std::string fn = "trainprof::collector::(anonymous namespace)::";
  EXPECT_TRUE(test::Says(t.text, "Its top call site: cudaStreamSynchronize from `" + fn +
                                     "SaveCheckpoint() at callsites_test.cc:" + std::to_string(kSaveLine) +
                                     "` (10 calls, 63.9 ms)."));
  // The largest phase here is "other" (not a phase range): no phase clause.
  ASSERT_EQ(t.largest, Part::kOther);
  EXPECT_FALSE(test::Says(t.text, "phase's top call site"));
  // Each clause right after the sentence it explains.
  for (size_t i = 0; i < t.text.size(); ++i) {
    if (t.text[i].rfind("Its top call site", 0) == 0) {
      ASSERT_GT(i, 0u);
      EXPECT_NE(t.text[i - 1].find("the host blocks until the GPU is done"), std::string::npos);
    }
  }
  EXPECT_EQ(PhaseOfRange("trainprof:Net.forward"), Part::kForward);
  EXPECT_EQ(PhaseOfRange("trainprof:Tensor.backward"), Part::kBackward);
  EXPECT_EQ(PhaseOfRange("Net.forward"), std::nullopt);  // not the phase domain
}

// Input-bound: the Bottleneck names where the loop waits for its batches. 10 steps of 10 ms, of
// which the DataLoader wait (opened from LoadBatch, standing in for the user's `for` loop) is 6 ms.
TEST(Stacks, BottleneckNamesTheCallSiteOfTheDataWait) {
  namespace fmt = trainprof::format;
  using test::kMs;
  Planted p;
  TraceBuilder main(201, 1, T0);
  test::PhaseThread m(main, 201);
  main.HeaderEnd(fmt::EndKind::kExit, 0, T0 + 2'000 * kMs);
  main.Module(m.thread(), p.module.bias, p.module.start, p.module.end, p.module.path, p.module.build_id);
  const uint64_t loop = main.Stack(m.thread(), {p.load});
  uint64_t s = T0 + 10 * kMs;
  for (int i = 0; i < 10; ++i, s += 10 * kMs) {
    m.Push(s, fmt::Phase::kDataWait);
    main.EventStack(m.thread(), loop);
    m.Pop(s + 6 * kMs);
    m.Range(s + 6 * kMs, s + 8 * kMs, fmt::Phase::kForward);
    m.Range(s + 8 * kMs, s + 10 * kMs, fmt::Phase::kBackward);
  }
  m.EpochEnd(s, 1 * kMs);
  Report report = Analyze(test::TraceOf({&main}), ReportOptions{});
  ASSERT_EQ(report.bottleneck.processes.size(), 1u);
  const TrainingProcess& t = report.bottleneck.processes[0];
  ASSERT_EQ(t.verdict, Verdict::kInputBound);
  const std::string clause = "The data wait's top call site: `trainprof::collector::(anonymous namespace)::LoadBatch() at "
                             "callsites_test.cc:" + std::to_string(kLoadLine) + "` (";
  size_t at = t.text.size();
  for (size_t i = 0; i < t.text.size(); ++i) {
    if (t.text[i].rfind(clause, 0) == 0) at = i;
  }
  ASSERT_LT(at, t.text.size()) << test::Join(t.text);
  ASSERT_GT(at, 0u);
  EXPECT_EQ(t.text[at - 1].rfind("Input-bound: waiting for data is", 0), 0u) << t.text[at - 1];
}

TEST(Stacks, FoldedExportRootFirstWithTheNameAsLeaf) {
  Planted p;
  TraceBuilder b = PlantedTrace(p.module, p.load, p.save);
  Trace trace = test::TraceOf({&b});
  // The labels "function (file:line)", as symbolized (checked in SymbolizesAddressesOfThisBinaryWithLibdw).
  Symbolizer sym(trace.strings);
  const std::string load = sym.Native(trace.processes[0].first().stacks, p.load).Label();
  const std::string save = sym.Native(trace.processes[0].first().stacks, p.save).Label();
  ASSERT_NE(load.find("LoadBatch() ("), std::string::npos) << load;
  ASSERT_NE(load.find("callsites_test.cc:" + std::to_string(kLoadLine) + ")"), std::string::npos) << load;
  std::string out;
  StringSink sink(&out);
  // The planted trace has one CPU sample too: by default (auto) the samples' stacks are written;
  // --from callsites asks for the call sites'.
  FoldedStats stats =
      ExportFolded(trace, Selection(trace.processes.size()), FoldedWeight::kCalls, &sink, FoldedSource::kCallSites);
  sink.Close();
  // Sorted by text; the hook's frame in libtrainprof_inject.so left out.
  EXPECT_EQ(out, load + ";io 30\n" + save + ";checkpoint 1\n" + save + ";cudaStreamSynchronize 1\n" + save + ";io 10\n");
  EXPECT_EQ(stats.lines, 4u);
  EXPECT_EQ(stats.events, 42u);
  std::string timed;
  StringSink tsink(&timed);
  ExportFolded(trace, Selection(trace.processes.size()), FoldedWeight::kTime, &tsink, FoldedSource::kCallSites);
  tsink.Close();
  EXPECT_EQ(timed, load + ";io 3000\n" + save + ";cudaStreamSynchronize 50000\n" + save + ";io 10000\n");
  std::string sampled;
  StringSink ssink(&sampled);
  const FoldedStats from_samples = ExportFolded(trace, Selection(trace.processes.size()), FoldedWeight::kCalls, &ssink);
  ssink.Close();
  EXPECT_TRUE(from_samples.samples);
  EXPECT_EQ(sampled, load + " 1\n");  // the sample's stack: the hook frame left out, no leaf name
}

// What `export --format folded` reads (launcher/export_command.cc): the phases' NVTX events only and
// the CUDA calls with a stack, no GPU record; its lines are those of the whole trace.
TEST(Stacks, FoldedExportFromTheReducedReadIsTheSame) {
  Planted p;
  TraceBuilder b = PlantedTrace(p.module, p.load, p.save);
  const int g = b.Thread(701);
  b.ApiCall(b.Thread(702), T0 + 900'000, T0 + 905'000, "cudaLaunchKernel_v7000", 6);  // no stack
  b.Kernel(g, {.start = T0 + 906'000, .end = T0 + 907'000, .name = "_Z3fooPf", .correlation = 6});
  const std::vector<uint8_t> bytes = b.Build();
  const std::vector<TraceBytes> files = {{b.FileName(), bytes}};
  const Trace full = LoadTraceBytes(files);
  const Trace reduced = LoadTraceBytes(files, {.keep = KeepNvtx::kPhases, .keep_cuda = KeepCuda::kStackedCalls});
  ASSERT_EQ(full.processes.size(), 1u);
  ASSERT_EQ(reduced.processes.size(), 1u);
  EXPECT_EQ(full.processes[0].first().cuda.calls.size(), 2u);
  EXPECT_EQ(full.processes[0].first().cuda.kernels.size(), 1u);
  EXPECT_FALSE(full.processes[0].first().nvtx.empty());
  const TraceImage& r = reduced.processes[0].first();
  ASSERT_EQ(r.cuda.calls.size(), 1u);
  EXPECT_EQ(reduced.strings.Get(r.cuda.calls[0].name), "cudaStreamSynchronize_v3020");
  EXPECT_EQ(r.cuda.calls[0].duration(), 50'000u);
  EXPECT_TRUE(r.cuda.kernels.empty());
  EXPECT_TRUE(r.nvtx.empty());
  for (FoldedWeight w : {FoldedWeight::kCalls, FoldedWeight::kTime}) {
    std::string a, c;
    StringSink sa(&a), sc(&c);
    const FoldedStats fa = ExportFolded(full, Selection(1), w, &sa, FoldedSource::kCallSites);
    const FoldedStats fc = ExportFolded(reduced, Selection(1), w, &sc, FoldedSource::kCallSites);
    sa.Close();
    sc.Close();
    EXPECT_EQ(a, c);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(fa.lines, fc.lines);
    EXPECT_EQ(fa.events, fc.events);
  }
}

TEST(Stacks, TimelineEventsCarryTheirStack) {
  Planted p;
  TraceBuilder b = PlantedTrace(p.module, p.load, p.save);
  Trace trace = test::TraceOf({&b});
  std::string out;
  StringSink sink(&out);
  ExportChrome(trace, &sink);
  sink.Close();
  const auto j = nlohmann::json::parse(out);
  // The labels "function (file:line)", as symbolized (checked in SymbolizesAddressesOfThisBinaryWithLibdw).
  Symbolizer sym(trace.strings);
  const std::string load = sym.Native(trace.processes[0].first().stacks, p.load).Label();
  const std::string save = sym.Native(trace.processes[0].first().stacks, p.save).Label();
  ASSERT_NE(load.find("LoadBatch() ("), std::string::npos) << load;
  ASSERT_NE(load.find("callsites_test.cc:" + std::to_string(kLoadLine) + ")"), std::string::npos) << load;
  size_t io_load = 0, io_save = 0, sync = 0, mark = 0;
  for (const auto& e : j["traceEvents"]) {
    if (!e.contains("args") || !e["args"].contains("stack")) continue;
    const auto& st = e["args"]["stack"];
    ASSERT_EQ(st.size(), 1u) << e.dump();
    if (e["name"] == "io") (st[0] == load ? io_load : io_save) += 1;
    if (e["name"] == "cudaStreamSynchronize" && st[0] == save) ++sync;
    if (e["name"] == "checkpoint" && st[0] == save) ++mark;
  }
  EXPECT_EQ(io_load, 30u);
  EXPECT_EQ(io_save, 10u);
  EXPECT_EQ(sync, 1u);
  EXPECT_EQ(mark, 1u);
}

// A call site whose callers differ is split per caller, decided over every process's stacks: two
// processes each calling a helper from one function, a third from both (issue 37, class 7).
// Library frames between are skipped; callers that agree on the first user frame and differ on
// the second split there; identical callers and a cut caller list keep one row.
TEST(CallSites, RowsOfAHelperAreSplitWhereItsCallersDiffer) {
  auto py = [](std::string fn, uint32_t line, std::string file = "/w/train.py") {
    SymbolFrame f;
    f.function = std::move(fn);
    f.file = std::move(file);
    f.line = line;
    f.python = true;
    return f;
  };
  const SymbolFrame site = py("annotate", 12, "/w/helpers.py");
  const SymbolFrame enter = py("__enter__", 137, "/usr/lib/python3.11/contextlib.py");  // library
  auto group = [&](std::vector<std::pair<std::vector<SymbolFrame>, uint64_t>> callers) {
    CallSiteGroup g{.kind = StackedKind::kRange, .name = "io", .known = true, .site = site};
    for (auto& [frames, calls] : callers) {
      g.calls += calls;
      g.total_ns += calls * 1000;
      if (calls > g.best) {
        g.best = calls;
        g.frames.assign(1, site);
        g.frames.insert(g.frames.end(), frames.begin(), frames.end());
      }
      g.callers.push_back({frames, calls, calls * 1000});
    }
    return std::vector<CallSiteGroup>{g};
  };
  const SymbolFrame main_frame = py("main", 90);
  const auto a = group({{{enter, py("train", 40), main_frame}, 30}});
  const auto b = group({{{enter, py("evaluate", 60), main_frame}, 10}});
  const auto c = group({{{enter, py("train", 40), main_frame}, 5}, {{enter, py("evaluate", 60), main_frame}, 2}});
  std::vector<CallSiteRow> rows = MergeCallSites({&a, &b, &c});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].Site(), "annotate at helpers.py:12, from train at train.py:40");
  EXPECT_EQ(rows[0].calls, 35u);
  EXPECT_EQ(rows[0].total_ns, 35000u);
  EXPECT_EQ(rows[1].Site(), "annotate at helpers.py:12, from evaluate at train.py:60");
  EXPECT_EQ(rows[1].calls, 12u);
  ASSERT_EQ(rows[1].frames.size(), 4u);
  EXPECT_EQ(rows[1].frames[2].function, "evaluate");

  // Both through load() at one line, from two lines of main: split at main's line.
  const auto d = group({{{py("load", 20), py("main", 91)}, 3}, {{py("load", 20), py("main", 95)}, 4}});
  rows = MergeCallSites({&d});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].Site(), "annotate at helpers.py:12, via load at train.py:20, from main at train.py:95");
  EXPECT_EQ(rows[1].Site(), "annotate at helpers.py:12, via load at train.py:20, from main at train.py:91");

  // One caller only, or callers that differ only in library frames: one row, no caller.
  // (a shorter stack, its outer frames not recorded, differs from none)
  const auto e = group({{{enter, py("train", 40)}, 3}, {{py("__exit__", 9, "/usr/lib/python3.11/x.py"), py("train", 40)}, 4}});
  rows = MergeCallSites({&a, &e});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].caller.has_value());
  EXPECT_EQ(rows[0].calls, 37u);

  // A group whose callers were cut is never split, and says so.
  auto f = c;
  f[0].callers_cut = true;
  rows = MergeCallSites({&f});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].calls, 7u);
  EXPECT_EQ(rows[0].Site(), "annotate at helpers.py:12, from more than 64 call paths (not split)");

  // Callers are told apart by their user frames (8 deep): 100 recursion depths under load and
  // store are 2 x 8 callers, well under the 64 kept, and split at the first frame.
  std::vector<CallSiteGroup> deep(1);
  deep[0] = CallSiteGroup{.kind = StackedKind::kRange, .name = "io", .known = true, .site = site};
  for (int depth = 0; depth < 100; ++depth) {
    for (const char* top : {"load", "store"}) {
      std::vector<SymbolFrame> frames;
      for (int k = 0; k < depth; ++k) frames.push_back(py("recurse", 30));
      frames.push_back(py(top, std::string(top) == "load" ? 26 : 31));
      frames.push_back(main_frame);
      CallSiteGroup one{.kind = StackedKind::kRange, .name = "io", .known = true, .site = site};
      one.calls = 1;
      one.best = 1;
      one.frames.assign(1, site);
      one.frames.insert(one.frames.end(), frames.begin(), frames.end());
      one.callers.push_back({frames, 1, 1000});
      std::vector<CallSiteGroup> v{one};
      // Each as its own process: the merge adds them up.
      rows = MergeCallSites({&v});
      ASSERT_EQ(rows.size(), 1u);
      deep.push_back(std::move(v[0]));
    }
  }
  std::vector<const std::vector<CallSiteGroup>*> all;
  std::vector<std::vector<CallSiteGroup>> each;
  for (size_t i = 1; i < deep.size(); ++i) each.push_back({deep[i]});
  for (const auto& e : each) all.push_back(&e);
  rows = MergeCallSites(all);
  uint64_t total = 0;
  for (const CallSiteRow& r : rows) {
    EXPECT_FALSE(r.callers_cut);
    total += r.calls;
  }
  EXPECT_EQ(total, 200u);
  ASSERT_EQ(rows.size(), 3u);  // from load (depth 0), from store (depth 0), from recurse (deeper)
}

TEST(Stacks, NoStacksNoCallsiteMember) {
  TraceBuilder b(704, 1, T0);
  const int t = b.Thread(704);
  b.Push(t, T0 + 100, "io");
  b.Pop(t, T0 + 200);
  Trace trace = test::TraceOf({&b});
  EXPECT_FALSE(nlohmann::json::parse(RenderJson(Analyze(trace, ReportOptions{}))).contains("callsites"));
}

}  // namespace
}  // namespace trainprof::collector
