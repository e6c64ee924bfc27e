// Export selection (collector/export/selection.h): --window, --pid, --rank parsed with errors that
// say what is wrong, resolved against a trace, and applied by the Chrome export.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "collector/base/output_sink.h"
#include "collector/export/export_chrome.h"
#include "collector/export/selection.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
using nlohmann::json;
namespace fmt = trainprof::format;
constexpr uint64_t kMs = 1'000'000;

TEST(ExportSelection, WindowInSecondsParsed) {
  WindowSpec w;
  EXPECT_EQ(ParseWindow("2:5.5", &w), "");
  EXPECT_EQ(w.kind, WindowSpec::Kind::kSeconds);
  EXPECT_EQ(w.begin_ns, 2'000'000'000u);
  EXPECT_EQ(w.end_ns, 5'500'000'000u);
  EXPECT_EQ(ParseWindow("10:", &w), "");
  EXPECT_EQ(w.begin_ns, 10'000'000'000u);
  EXPECT_EQ(w.end_ns, UINT64_MAX);
  EXPECT_EQ(ParseWindow(":0.000001", &w), "");
  EXPECT_EQ(w.begin_ns, 0u);
  EXPECT_EQ(w.end_ns, 1'000u);
  EXPECT_EQ(ParseWindow(" 1 : 2 ", &w), "");
  EXPECT_EQ(w.end_ns, 2'000'000'000u);
}

TEST(ExportSelection, BadWindowsSayWhatIsWrong) {
  WindowSpec w;
  EXPECT_EQ(ParseWindow("5", &w),
            "expected START:END in seconds from the run's start (\"2:5.5\", \"10:\") or nvtx:NAME#N");
  EXPECT_EQ(ParseWindow("a:3", &w), "START 'a' is not a number of seconds");
  EXPECT_EQ(ParseWindow("1:2s", &w), "END '2s' is not a number of seconds");
  EXPECT_EQ(ParseWindow("-1:3", &w), "START '-1' is negative (seconds from the run's start)");
  EXPECT_EQ(ParseWindow("3:2", &w), "END (2) is not after START (3)");
  EXPECT_EQ(ParseWindow("2:2", &w), "END (2) is not after START (2)");
  EXPECT_EQ(ParseWindow("nan:2", &w), "START 'nan' is not a number of seconds");
  EXPECT_EQ(ParseWindow("nvtx:step", &w),
            "an NVTX window names the instance: nvtx:NAME#N (N = 1 for the first range named NAME)");
  EXPECT_EQ(ParseWindow("nvtx:step#0", &w),
            "the instance is counted from 1 (nvtx:NAME#1 is the first range named NAME)");
  EXPECT_EQ(ParseWindow("nvtx:step#x", &w), "the instance 'x' after '#' is not a whole number (nvtx:NAME#N, N from 1)");
  EXPECT_EQ(ParseWindow("nvtx:#2", &w), "no range name before '#' (nvtx:NAME#N)");
}

TEST(ExportSelection, NvtxWindowNameIsBeforeTheLastHash) {
  WindowSpec w;
  EXPECT_EQ(ParseWindow("nvtx:ProfilerStep#3#2", &w), "");
  EXPECT_EQ(w.kind, WindowSpec::Kind::kNvtx);
  EXPECT_EQ(w.nvtx_name, "ProfilerStep#3");
  EXPECT_EQ(w.instance, 2u);
  EXPECT_EQ(ParseWindow("nvtx:a:b#1", &w), "");
  EXPECT_EQ(w.nvtx_name, "a:b");
}

TEST(ExportSelection, IdLists) {
  std::vector<int64_t> ids;
  EXPECT_EQ(ParseIdList("3", 1, &ids), "");
  EXPECT_EQ(ParseIdList("0, 1,2", 0, &ids), "");
  EXPECT_EQ(ids, (std::vector<int64_t>{3, 0, 1, 2}));
  EXPECT_EQ(ParseIdList("1,,2", 0, &ids), "an empty item in '1,,2' (a comma list: 0,1,2)");
  EXPECT_EQ(ParseIdList("x", 0, &ids), "'x' is not an integer");
  EXPECT_EQ(ParseIdList("1.5", 0, &ids), "'1.5' is not an integer");
  EXPECT_EQ(ParseIdList("-1", 0, &ids), "'-1' is less than 0");
  EXPECT_EQ(ParseIdList("0", 1, &ids), "'0' is less than 1");
  EXPECT_EQ(ids.size(), 4u);  // nothing appended by a bad list
}

// Two ranks, each with "step" ranges every 10 ms (5 ms long), starting 1 ms apart.
struct TwoRanks {
  TraceBuilder r0{10, 1, 1'000 * kMs};
  TraceBuilder r1{11, 1, 1'001 * kMs};
  TwoRanks() {
    r0.Env("RANK", "0").StartRealtime(1'700'000'000'000'000'000ull).HeaderEnd(fmt::EndKind::kExit, 0, 1'100 * kMs);
    r1.Env("RANK", "1").StartRealtime(1'700'000'000'001'000'000ull).HeaderEnd(fmt::EndKind::kExit, 0, 1'100 * kMs);
    for (TraceBuilder* b : {&r0, &r1}) {
      const uint64_t start = b == &r0 ? 1'000 * kMs : 1'001 * kMs;
      int t = b->Thread(b == &r0 ? 10 : 11);
      for (int i = 0; i < 5; ++i) {
        b->Push(t, start + i * 10 * kMs, "step");
        b->Pop(t, start + i * 10 * kMs + 5 * kMs);
      }
    }
  }
};

std::optional<Selection> Resolve(const Trace& trace, const SelectionSpec& spec, std::string* error) {
  return ResolveSelection(trace, MakeTimeAxis(trace), spec, error);
}

TEST(ExportSelection, PidsAndRanksNarrowEachOther) {
  TwoRanks run;
  Trace trace = test::TraceOf({&run.r0, &run.r1});
  std::string error;
  SelectionSpec spec;
  spec.ranks = {1};
  std::optional<Selection> sel = Resolve(trace, spec, &error);
  ASSERT_TRUE(sel) << error;
  EXPECT_EQ(sel->selected(), 1u);
  EXPECT_EQ(trace.processes[0].pid == 11, sel->Process(0));
  spec.pids = {10};
  EXPECT_FALSE(Resolve(trace, spec, &error));
  EXPECT_EQ(error, "--pid and --rank select no process together (each option narrows the other)");
  spec.pids = {12};
  EXPECT_FALSE(Resolve(trace, spec, &error));
  EXPECT_EQ(error, "--pid 12: no process of the trace has that pid (pids: 10, 11)");
  spec.pids = {};
  spec.ranks = {0, 3};
  EXPECT_FALSE(Resolve(trace, spec, &error));
  EXPECT_EQ(error, "--rank 3: no process has rank 3 (ranks: 0, 1)");
}

TEST(ExportSelection, WindowsResolvedOnTheRunsAxis) {
  TwoRanks run;
  Trace trace = test::TraceOf({&run.r0, &run.r1});
  std::string error;
  SelectionSpec spec;
  // The third "step" of all processes by start: rank 0's at 10 ms (rank 1's first two start at
  // 1 and 11 ms on the axis): [10, 15) ms.
  ASSERT_EQ(ParseWindow("nvtx:step#3", &spec.window), "");
  std::optional<Selection> sel = Resolve(trace, spec, &error);
  ASSERT_TRUE(sel) << error;
  EXPECT_EQ(sel->begin_ns(), 10 * kMs);
  EXPECT_EQ(sel->end_ns(), 15 * kMs);
  // Of rank 1 alone: its third starts at 21 ms.
  spec.ranks = {1};
  sel = Resolve(trace, spec, &error);
  ASSERT_TRUE(sel) << error;
  EXPECT_EQ(sel->begin_ns(), 21 * kMs);
  ASSERT_EQ(ParseWindow("nvtx:step#6", &spec.window), "");
  EXPECT_FALSE(Resolve(trace, spec, &error));
  EXPECT_EQ(error, "--window nvtx:step#6: the selected processes have 5 ranges named 'step', not 6");
  ASSERT_EQ(ParseWindow("nvtx:stop#1", &spec.window), "");
  EXPECT_FALSE(Resolve(trace, spec, &error));
  EXPECT_EQ(error, "--window nvtx:stop#1: no NVTX range named 'stop' in the selected processes");
  ASSERT_EQ(ParseWindow("200:300", &spec.window), "");
  EXPECT_FALSE(Resolve(trace, spec, &error));
  EXPECT_EQ(error, "--window 200:300: starts after the end of the selected processes (0.100 s after the run's start)");

  // Keeps: overlap, half-open at the end; an instant at the start is kept.
  ASSERT_EQ(ParseWindow("0.010:0.015", &spec.window), "");
  spec.ranks = {};
  sel = Resolve(trace, spec, &error);
  ASSERT_TRUE(sel) << error;
  EXPECT_TRUE(sel->Keeps(5 * kMs, 10 * kMs + 1));
  EXPECT_FALSE(sel->Keeps(5 * kMs, 10 * kMs));
  EXPECT_TRUE(sel->Keeps(10 * kMs));
  EXPECT_TRUE(sel->Keeps(14 * kMs, 99 * kMs));
  EXPECT_FALSE(sel->Keeps(15 * kMs, 16 * kMs));
}

TEST(ExportSelection, NvtxWindowByTheReportsDomainQualifiedName) {
  // "io" in the default domain at 2 ms, then in the domain "data:v2" (a ':' of its own) at 5 and
  // 20 ms: nvtx:io#N counts every "io"; nvtx:data:v2:io#N, the report's display name, those of
  // the domain only.
  TraceBuilder b{10, 1, 1'000 * kMs};
  b.HeaderEnd(fmt::EndKind::kExit, 0, 1'100 * kMs);
  const int t = b.Thread(10);
  const uint64_t data = b.Domain(t, "data:v2");
  b.Push(t, 1'002 * kMs, "io");
  b.Pop(t, 1'003 * kMs);
  b.Push(t, 1'005 * kMs, "io", data);
  b.Pop(t, 1'007 * kMs, data);
  b.Push(t, 1'020 * kMs, "io", data);
  b.Pop(t, 1'021 * kMs, data);
  Trace trace = test::TraceOf({&b});
  std::string error;
  SelectionSpec spec;
  ASSERT_EQ(ParseWindow("nvtx:io#1", &spec.window), "");
  std::optional<Selection> sel = Resolve(trace, spec, &error);
  ASSERT_TRUE(sel) << error;
  EXPECT_EQ(sel->begin_ns(), 2 * kMs);
  ASSERT_EQ(ParseWindow("nvtx:data:v2:io#1", &spec.window), "");
  sel = Resolve(trace, spec, &error);
  ASSERT_TRUE(sel) << error;
  EXPECT_EQ(sel->begin_ns(), 5 * kMs);
  EXPECT_EQ(sel->end_ns(), 7 * kMs);
  ASSERT_EQ(ParseWindow("nvtx:data:v2:io#2", &spec.window), "");
  sel = Resolve(trace, spec, &error);
  ASSERT_TRUE(sel) << error;
  EXPECT_EQ(sel->begin_ns(), 20 * kMs);
  ASSERT_EQ(ParseWindow("nvtx:data:v2:io#3", &spec.window), "");
  EXPECT_FALSE(Resolve(trace, spec, &error));
  EXPECT_EQ(error, "--window nvtx:data:v2:io#3: the selected processes have 2 ranges named 'data:v2:io', not 3");
  ASSERT_EQ(ParseWindow("nvtx:other:io#1", &spec.window), "");
  EXPECT_FALSE(Resolve(trace, spec, &error));
  EXPECT_EQ(error, "--window nvtx:other:io#1: no NVTX range named 'other:io' in the selected processes");
}

TEST(ExportSelection, ChromeExportWritesOnlyTheSelection) {
  TwoRanks run;
  Trace trace = test::TraceOf({&run.r0, &run.r1});
  SelectionSpec spec;
  spec.ranks = {1};
  ASSERT_EQ(ParseWindow("0.012:0.030", &spec.window), "");
  std::string error;
  std::optional<Selection> sel = Resolve(trace, spec, &error);
  ASSERT_TRUE(sel) << error;
  test::ScratchDir dir;
  auto sink = OpenOutput(dir / "t.json", false, &error);
  ASSERT_TRUE(sink) << error;
  ExportChrome(trace, sink.get(), *sel, nullptr);
  ASSERT_EQ(sink->Close(), "");
  json doc = json::parse(test::ReadFile(dir / "t.json"));
  std::vector<double> starts;
  for (const json& e : doc["traceEvents"]) {
    EXPECT_EQ(e["pid"], 11) << e.dump();
    if (e["ph"] == "X") starts.push_back(e["ts"].get<double>());
  }
  // Rank 1's steps at 11-16 (overlaps 12), 21-26 and 31-36 ms (starts at 30: after the end).
  EXPECT_EQ(starts, (std::vector<double>{11000.0, 21000.0}));
}

}  // namespace
}  // namespace trainprof::collector
