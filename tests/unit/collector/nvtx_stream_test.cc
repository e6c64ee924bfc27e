// The exporters' NVTX events read again from the file (read/nvtx_stream.h): the same events, names,
// stacks and order as the events a KeepNvtx::kAll load holds, and the same export bytes, with none
// of them held; a file changed between the load and the export is said.
#include <gtest/gtest.h>

#include <fstream>
#include <tuple>

#include "collector/base/output_sink.h"
#include "collector/export/export_chrome.h"
#include "collector/export/export_kineto.h"
#include "collector/read/nvtx_stream.h"
#include "collector/read/trace_set.h"
#include "test_util.h"
#include "trainprof/phases.h"
#include "trainprof/torch_ops.h"

namespace trainprof::collector {
namespace {

using test::ScratchDir;
using test::TraceBuilder;
namespace fmt = trainprof::format;

constexpr uint64_t kMs = 1'000'000;

// A training-like process: two threads, a name first used on the thread decoded second (its string
// defined there, used earlier in file order on the other), nested ranges with stacks, a mark with
// a stack, the phase domain, an operator (not NVTX), a start/end range across threads, an id used
// twice, unbalanced pops and pushes.
TraceBuilder Workload() {
  TraceBuilder b(42, 1, 1'000 * kMs);
  b.HeaderEnd(fmt::EndKind::kExit, 0, 1'100 * kMs);
  const int main = b.Thread(42), loader = b.Thread(43);
  b.ThreadName(main, 42, "MainThread");
  const uint64_t base = 1'000 * kMs;
  b.Push(loader, base + 1 * kMs, "shared name");
  b.Pop(loader, base + 2 * kMs);
  const uint64_t phases = b.Domain(main, fmt::kPhaseDomain);
  const uint64_t ops = b.Domain(main, fmt::kTorchOpsDomain);
  const uint64_t torch = b.Domain(main, "torch");
  const uint64_t stack = b.Stack(main, {0x401000, 0x402000}, {{"train", "train.py", 12}});
  for (int step = 0; step < 3; ++step) {
    const uint64_t t = base + (10 + 10 * step) * kMs;
    b.Push(main, t, "step", phases, static_cast<uint64_t>(fmt::Phase::kForward));
    b.EventStack(main, stack);
    b.Push(main, t + 100, "shared name");
    b.Push(main, t + 200, "aten::addmm", ops);
    b.Pop(main, t + 300, ops);
    b.Mark(main, t + 400, "checkpoint", torch, 7);
    b.EventStack(main, stack);
    b.Pop(main, t + 500);
    b.Start(main, t + 600, "prefetch", 100 + step);
    b.EndRange(loader, t + 3 * kMs, 100 + step);
    b.Pop(main, t + 5 * kMs, phases);
  }
  b.Start(main, base + 60 * kMs, "twice", 7);
  b.Start(main, base + 61 * kMs, "twice", 7);
  b.EndRange(main, base + 62 * kMs, 7);
  b.Pop(main, base + 70 * kMs, torch);  // a pop without its push
  b.Start(main, base + 75 * kMs, "domain range", 555, torch);
  b.EventStack(main, stack);
  b.EndRange(main, base + 76 * kMs, 555);
  b.Push(main, base + 80 * kMs, "never popped");
  return b;
}

using Seen = std::tuple<uint64_t, uint64_t, std::string, std::string, uint32_t, uint32_t, int, uint64_t>;

std::vector<Seen> Events(const Trace& trace) {
  std::vector<Seen> out;
  for (const Process& p : trace.processes) {
    for (const TraceImage& img : p.images) {
      const std::string problem = ForEachNvtxEvent(trace, img, [&](const NvtxEvent& e, uint64_t stack) {
        out.emplace_back(e.time_ns, e.range_id, std::string(trace.strings.Get(e.name)),
                         std::string(trace.strings.Get(e.domain)), e.category, e.thread, static_cast<int>(e.kind()), stack);
      });
      EXPECT_EQ(problem, "");
    }
  }
  return out;
}

std::string Chrome(const Trace& trace, ChromeExportStats* stats) {
  std::string out;
  StringSink sink(&out);
  *stats = ExportChrome(trace, &sink);
  sink.Close();
  return out;
}

TEST(NvtxStream, TheFileReadAgainGivesTheKeptEventsInTheirOrder) {
  ScratchDir dir;
  const std::string path = Workload().WriteTo(dir.path());
  const Trace all = LoadTrace({path}, {.keep = KeepNvtx::kAll});
  const Trace streamed = LoadTrace({path}, {.keep = KeepNvtx::kStreamed});
  ASSERT_EQ(streamed.processes.size(), 1u);
  const TraceImage& img = streamed.processes[0].images[0];
  EXPECT_FALSE(img.nvtx_complete);
  EXPECT_EQ(img.nvtx.size(), 6u);  // the phases' pushes and pops only
  EXPECT_EQ(img.nvtx_events, all.processes[0].images[0].nvtx.size());
  EXPECT_TRUE(all.processes[0].images[0].nvtx_complete);

  const std::vector<Seen> kept = Events(all), read = Events(streamed);
  EXPECT_EQ(read, kept);
  // 2 + 3 steps × (push, push, mark, pop, start, end, pop) + 5 starts/ends + 1 pop + 1 push; the operator's are not NVTX.
  ASSERT_EQ(read.size(), 2u + 3 * 7 + 5 + 2);
  // Threads in order: the main thread's first step, then its push of a name whose string the
  // loader thread defined (decoded after it), named, not "<string #N>".
  EXPECT_EQ(std::get<2>(read[0]), "step");
  EXPECT_EQ(std::get<2>(read[1]), "shared name");
  EXPECT_EQ(std::get<5>(read[1]), 0u);
  EXPECT_EQ(std::get<2>(read.back()), "");  // the loader's last event: the end of id 102
  EXPECT_EQ(std::get<5>(read.back()), 1u);
  int with_stack = 0;
  for (const Seen& s : read) with_stack += std::get<7>(s) != 0 ? 1 : 0;
  EXPECT_EQ(with_stack, 7);  // each step's push and mark, the domain's start
}

TEST(NvtxStream, ChromeAndKinetoExportsAreTheSameBytes) {
  ScratchDir dir;
  const std::string path = Workload().WriteTo(dir.path());
  const Trace all = LoadTrace({path}, {.keep = KeepNvtx::kAll});
  const Trace streamed = LoadTrace({path}, {.keep = KeepNvtx::kStreamed});
  ChromeExportStats a, s;
  const std::string chrome_all = Chrome(all, &a), chrome_streamed = Chrome(streamed, &s);
  EXPECT_EQ(chrome_streamed, chrome_all);
  EXPECT_EQ(s.unmatched, a.unmatched);
  EXPECT_EQ(s.unmatched, 3u);  // the second start of id 7, the pop without push, the push never popped
  EXPECT_TRUE(s.problems.empty());
  EXPECT_NE(chrome_streamed.find("\"ph\":\"b\""), std::string::npos);
  EXPECT_NE(chrome_streamed.find("\"stack\":["), std::string::npos);
  // A start/end range of a domain: its category on both ends, the start's stack on the "b".
  const size_t b = chrome_streamed.find("\"ph\":\"b\",\"pid\":42,\"tid\":42,\"ts\":75000.000,\"cat\":\"torch\"");
  ASSERT_NE(b, std::string::npos) << chrome_streamed;
  const std::string b_line = chrome_streamed.substr(b, chrome_streamed.find('\n', b) - b);
  EXPECT_NE(b_line.find("\"name\":\"domain range\",\"args\":{\"stack\":["), std::string::npos) << b_line;
  EXPECT_NE(chrome_streamed.find("\"ph\":\"e\",\"pid\":42,\"tid\":42,\"ts\":76000.000,\"cat\":\"torch\""),
            std::string::npos);

  auto kineto = [&](const Trace& t) {
    const TimeAxis axis = MakeTimeAxis(t);
    const Selection sel(t.processes.size());
    const KinetoPlan plan = PlanKinetoFiles(t, sel, false);
    EXPECT_EQ(plan.files.size(), 1u);
    std::string out;
    StringSink sink(&out);
    ExportKineto(t, axis, sel, plan.files.at(0), {}, &sink, nullptr, 0);
    sink.Close();
    return out;
  };
  const std::string kineto_all = kineto(all);
  EXPECT_EQ(kineto(streamed), kineto_all);
  EXPECT_NE(kineto_all.find("\"prefetch\""), std::string::npos);
}

TEST(NvtxStream, AFileChangedAfterTheLoadIsSaid) {
  ScratchDir dir;
  const std::string path = Workload().WriteTo(dir.path());
  const Trace streamed = LoadTrace({path}, {.keep = KeepNvtx::kStreamed});
  TraceBuilder other(42, 1, 1'000 * kMs);
  const int t = other.Thread(42);
  other.Push(t, 1'001 * kMs, "other");
  other.Pop(t, 1'002 * kMs);
  other.WriteTo(dir.path());
  ChromeExportStats stats;
  Chrome(streamed, &stats);
  ASSERT_EQ(stats.problems.size(), 1u);
  EXPECT_NE(stats.problems[0].find(path), std::string::npos) << stats.problems[0];
  EXPECT_NE(stats.problems[0].find("changed since it was loaded (30 NVTX events, now 2)"), std::string::npos)
      << stats.problems[0];

  // Another run's trace of the same shape (the same events, so the same count) put in its place,
  // as a rename or a copy would: said, and none of its events written.
  TraceBuilder same_shape = Workload();
  same_shape.StartRealtime(1'800'000'000'000'000'000ull);
  same_shape.WriteTo(dir.path());
  const std::string json = Chrome(streamed, &stats);
  ASSERT_EQ(stats.problems.size(), 1u);
  EXPECT_NE(stats.problems[0].find(path + ": reading its NVTX events again failed: another trace has replaced the file"),
            std::string::npos)
      << stats.problems[0];
  EXPECT_EQ(json.find("\"ph\":\"X\""), std::string::npos);

  std::remove(path.c_str());
  Chrome(streamed, &stats);
  ASSERT_EQ(stats.problems.size(), 1u);
  EXPECT_NE(stats.problems[0].find("reading its NVTX events again failed"), std::string::npos) << stats.problems[0];
}

}  // namespace
}  // namespace trainprof::collector
