// NVTX range matching and statistics with known durations.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <memory>
#include <fstream>
#include <initializer_list>
#include <string>

#include "collector/read/nvtx_matcher.h"
#include "collector/stats/nvtx_stats.h"
#include "collector/render/render.h"
#include "collector/report/report.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

// The row named `name` (rows are made on demand: a copy), or null.
std::shared_ptr<const RangeRow> Find(const RangeRows& rows, const std::string& name,
                                     const std::string& style = "push/pop") {
  for (const RangeRow& r : rows)
    if (r.name == name && r.style == style) return std::make_shared<const RangeRow>(r);
  return nullptr;
}

// {calls that ended, their total ns, unbalanced} of the row `name` (`style`); all UINT64_MAX when
// there is no such row.
using Counts = std::array<uint64_t, 3>;
Counts CountsOf(const RangeRows& rows, const std::string& name, const std::string& style = "push/pop") {
  auto row = Find(rows, name, style);
  if (row == nullptr) return {UINT64_MAX, UINT64_MAX, UINT64_MAX};
  return {row->time.count, row->time.total, row->unbalanced};
}

// Push/pop ranges of thread t, one after the other: {push time, pop time, name}.
struct Span {
  uint64_t push, pop;
  std::string name;
};
void Ranges(TraceBuilder& b, int t, std::initializer_list<Span> spans) {
  for (const Span& s : spans) {
    b.Push(t, s.push, s.name);
    b.Pop(t, s.pop);
  }
}

// A process living from 0 to `wall` ns.
TraceBuilder Proc(int32_t pid, uint64_t wall, int32_t ppid = 1) {
  TraceBuilder b(pid, ppid, 0);
  b.HeaderEnd(fmt::EndKind::kExit, 0, wall);
  return b;
}

TEST(NvtxStats, ExactStatisticsEvenCount) {
  TraceBuilder b = Proc(1, 1'000);
  int t = b.Thread(1);
  uint64_t now = 0;
  for (uint64_t d : {30, 10, 40, 20}) {
    b.Push(t, now, "step");
    b.Pop(t, now + d);
    now += 100;
  }
  Trace trace = TraceOf({&b});
  Report r = Analyze(trace, {});
  ASSERT_EQ(r.nvtx_ranges.size(), 1u);
  const RangeRow& s = r.nvtx_ranges[0];
  EXPECT_EQ(s.name, "step");
  EXPECT_EQ(s.domain, "");
  EXPECT_EQ(s.style, "push/pop");
  EXPECT_EQ(s.time.count, 4u);
  EXPECT_EQ(s.time.total, 100u);
  EXPECT_DOUBLE_EQ(s.time.mean, 25.0);
  EXPECT_DOUBLE_EQ(s.time.std, std::sqrt(500.0 / 3.0));  // sample std dev (n-1)
  EXPECT_EQ(s.time.min, 10u);
  EXPECT_DOUBLE_EQ(s.time.median, 25.0);  // mean of 20 and 30
  EXPECT_EQ(s.time.max, 40u);
  EXPECT_DOUBLE_EQ(s.percent, 10.0);    // 100 ns of a 1000 ns process
  EXPECT_EQ(s.unbalanced, 0u);
}

TEST(NvtxStats, OddCountMedianAndSingleCall) {
  TraceBuilder b = Proc(1, 10'000);
  int t = b.Thread(1);
  Ranges(b, t, {{0, 5, "a"}, {10, 11, "a"}, {20, 29, "a"}, {100, 1'100, "once"}});
  Report r = Analyze(TraceOf({&b}), {});
  auto a = Find(r.nvtx_ranges, "a");
  ASSERT_NE(a, nullptr);
  EXPECT_DOUBLE_EQ(a->time.median, 5.0);
  EXPECT_DOUBLE_EQ(a->time.std, 4.0);  // 1, 5, 9: mean 5, sum of squares 32, /2 = 16
  auto once = Find(r.nvtx_ranges, "once");
  ASSERT_NE(once, nullptr);
  EXPECT_EQ(once->time.count, 1u);
  EXPECT_DOUBLE_EQ(once->time.std, 0.0);
  EXPECT_DOUBLE_EQ(once->time.median, 1'000.0);
  // Sorted by total time: "once" (1000 ns) before "a" (15 ns).
  EXPECT_EQ(r.nvtx_ranges[0].name, "once");
}

TEST(NvtxStats, NestingPerThreadAndDomain) {
  TraceBuilder b = Proc(1, 1'000);
  int t0 = b.Thread(1), t1 = b.Thread(2);
  uint64_t torch = b.Domain(t0, "torch");
  b.Push(t0, 0, "outer");
  b.Push(t1, 5, "other thread");
  b.Push(t0, 10, "fwd", torch);  // a domain has its own stack
  b.Push(t0, 20, "inner");
  b.Pop(t0, 40);                 // pops "inner" (default domain)
  b.Pop(t0, 50, torch);          // pops torch:fwd
  b.Pop(t1, 60);
  b.Pop(t0, 100);                // pops "outer"
  b.Push(t0, 200, "fwd");        // same name, default domain: a separate row
  b.Pop(t0, 207);
  Report r = Analyze(TraceOf({&b}), {});
  ASSERT_EQ(r.nvtx_ranges.size(), 5u);
  EXPECT_EQ(Find(r.nvtx_ranges, "outer")->time.total, 100u);
  EXPECT_EQ(Find(r.nvtx_ranges, "inner")->time.total, 20u);
  EXPECT_EQ(Find(r.nvtx_ranges, "other thread")->time.total, 55u);
  auto torch_fwd = Find(r.nvtx_ranges, "torch:fwd");
  ASSERT_NE(torch_fwd, nullptr);
  EXPECT_EQ(torch_fwd->time.total, 40u);
  EXPECT_EQ(torch_fwd->domain, "torch");
  auto fwd = Find(r.nvtx_ranges, "fwd");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->time.total, 7u);
  EXPECT_EQ(fwd->domain, "");
  EXPECT_EQ(r.processes[0].unbalanced, 0u);
}

TEST(NvtxStats, StartEndAcrossThreads) {
  TraceBuilder b = Proc(1, 1'000);
  int t0 = b.Thread(1), t1 = b.Thread(2);
  b.Start(t0, 100, "prefetch", 7);
  b.Start(t0, 110, "prefetch", 8);
  b.EndRange(t1, 150, 8);
  b.EndRange(t1, 400, 7);
  b.Push(t0, 120, "prefetch");  // same name, other style: its own row
  b.Pop(t0, 121);
  Report r = Analyze(TraceOf({&b}), {});
  auto se = Find(r.nvtx_ranges, "prefetch", "start/end");
  ASSERT_NE(se, nullptr);
  EXPECT_EQ(se->time.count, 2u);
  EXPECT_EQ(se->time.total, 340u);
  EXPECT_EQ(se->time.min, 40u);
  EXPECT_EQ(se->time.max, 300u);
  auto pp = Find(r.nvtx_ranges, "prefetch", "push/pop");
  ASSERT_NE(pp, nullptr);
  EXPECT_EQ(pp->time.count, 1u);
}

TEST(NvtxStats, UnbalancedRangesAreCountedNotTimed) {
  TraceBuilder b = Proc(1, 1'000);
  int t0 = b.Thread(1), t1 = b.Thread(2);
  b.Pop(t0, 5);               // pop on an empty stack
  b.Push(t0, 10, "step");
  b.Pop(t0, 20);
  b.Push(t0, 30, "step");     // still open at the end
  b.EndRange(t1, 40, 99);     // end of an unknown id
  b.Start(t1, 50, "load", 1); // never ended
  b.Push(t1, 60, "never");    // never popped, no complete call
  Report r = Analyze(TraceOf({&b}), {});
  EXPECT_EQ(r.processes[0].unbalanced, 5u);
  EXPECT_EQ(CountsOf(r.nvtx_ranges, "step"), (Counts{1, 10, 1}));
  EXPECT_EQ(CountsOf(r.nvtx_ranges, "<pop without push>"), (Counts{0, 0, 1}));
  EXPECT_EQ(CountsOf(r.nvtx_ranges, "<end without start>", "start/end"), (Counts{0, 0, 1}));
  EXPECT_EQ(CountsOf(r.nvtx_ranges, "load", "start/end"), (Counts{0, 0, 1}));
  EXPECT_EQ(CountsOf(r.nvtx_ranges, "never"), (Counts{0, 0, 1}));
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings[0].rfind("5 unbalanced NVTX ranges in 1 process ", 0), 0u) << r.warnings[0];
}

TEST(NvtxStats, UnnamedRanges) {
  TraceBuilder b = Proc(1, 1'000);
  int t = b.Thread(1);
  b.Push(t, 0, "");  // name id 0
  b.Pop(t, 10);
  b.RawFields(t, static_cast<uint8_t>(format::RecordTag::kString), {50, 0});  // an empty string
  b.RawFields(t, static_cast<uint8_t>(format::RecordTag::kRangePush), {10, 0, 50, 0});
  b.Pop(t, 30);
  Report r = Analyze(TraceOf({&b}), {});
  ASSERT_EQ(r.nvtx_ranges.size(), 1u);
  EXPECT_EQ(r.nvtx_ranges[0].name, "<unnamed>");
  EXPECT_EQ(r.nvtx_ranges[0].time.count, 2u);
}

TEST(NvtxStats, MergedOverProcessesOneDenominator) {
  // "step" in a and b (4000 ns of wall time), "only in c" in c (6000 ns), d records no range: one
  // denominator for every row (the 10000 ns of a, b and c), so Time (%) falls with the total.
  TraceBuilder a = Proc(1, 1'000), b = Proc(2, 3'000), c = Proc(3, 6'000), d = Proc(4, 50'000);
  int ta = a.Thread(1), tb = b.Thread(2), tc = c.Thread(3);
  d.Thread(4);
  Ranges(a, ta, {{0, 100, "step"}});
  Ranges(b, tb, {{0, 300, "step"}, {400, 600, "step"}});
  Ranges(c, tc, {{0, 700, "only in c"}});
  Report r = Analyze(TraceOf({&a, &b, &c, &d}), {});
  ASSERT_EQ(r.nvtx_ranges.size(), 2u);
  EXPECT_EQ(r.nvtx_ranges[0].name, "only in c");  // sorted by total: 700 before 600
  EXPECT_EQ(r.nvtx_ranges[1].name, "step");
  EXPECT_EQ(r.nvtx_ranges_wall_ns, 10'000u);
  EXPECT_EQ(r.nvtx_ranges_processes, 3u);
  auto step = Find(r.nvtx_ranges, "step");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->time.count, 3u);
  EXPECT_EQ(step->time.total, 600u);
  EXPECT_DOUBLE_EQ(step->time.median, 200.0);
  EXPECT_DOUBLE_EQ(step->percent, 6.0);  // was 15% (600 / the 4000 ns of a and b) under 11.7% for 700
  EXPECT_DOUBLE_EQ(Find(r.nvtx_ranges, "only in c")->percent, 7.0);
  for (size_t i = 1; i < r.nvtx_ranges.size(); ++i) {
    EXPECT_GE(r.nvtx_ranges[i - 1].percent, r.nvtx_ranges[i].percent) << "row " << i;
  }
  EXPECT_NE(RenderText(r).find("  Time (%) = total time / summed wall time of the 3 processes with ranges (10.0 µs), "
                               "one\n  denominator for every row;"),
            std::string::npos)
      << RenderText(r);
  // Per process: the process's wall time.
  ASSERT_EQ(r.processes.size(), 4u);
  const ProcessRow& pb = r.processes[1];
  EXPECT_EQ(pb.pid, 2);
  ASSERT_EQ(pb.nvtx_ranges.size(), 1u);
  EXPECT_EQ(pb.nvtx_ranges[0].time.count, 2u);
  EXPECT_DOUBLE_EQ(pb.nvtx_ranges[0].percent, 500.0 * 100 / 3'000);
}

TEST(NvtxStats, MarksAndTop) {
  TraceBuilder a = Proc(1, 1'000);
  int t = a.Thread(1);
  uint64_t torch = a.Domain(t, "torch");
  for (int i = 0; i < 3; ++i) a.Mark(t, 10 + i, "ckpt");
  a.Mark(t, 20, "ckpt", torch);
  for (int i = 0; i < 5; ++i) {
    a.Push(t, 100 * (i + 1), "r" + std::to_string(i));
    a.Pop(t, 100 * (i + 1) + 10 * (i + 1));
  }
  Report r = Analyze(TraceOf({&a}), {false, 2});
  ASSERT_EQ(r.nvtx_marks.size(), 2u);
  EXPECT_EQ(r.nvtx_marks[0].name, "ckpt");
  EXPECT_EQ(r.nvtx_marks[0].count, 3u);
  EXPECT_EQ(r.nvtx_marks[1].name, "torch:ckpt");
  EXPECT_EQ(r.nvtx_marks[1].domain, "torch");
  ASSERT_EQ(r.nvtx_ranges.size(), 2u);
  EXPECT_EQ(r.nvtx_ranges_omitted, 3u);
  EXPECT_EQ(r.nvtx_ranges[0].name, "r4");
  EXPECT_EQ(r.nvtx_ranges[1].name, "r3");
  EXPECT_EQ(r.processes[0].nvtx_ranges.size(), 2u);
}

TEST(NvtxStats, RangesDoNotCrossExec) {
  TraceBuilder img0 = Proc(5, 0);
  img0.HeaderEnd(fmt::EndKind::kExec, 0, 500);
  int t0 = img0.Thread(5);
  img0.Push(t0, 100, "setup");   // open when the process exec'd: unbalanced
  img0.Push(t0, 110, "parse");
  img0.Pop(t0, 120);
  TraceBuilder img1(5, 1, 600);
  img1.ImageIndex(1).HeaderEnd(fmt::EndKind::kExit, 0, 1'000);
  int t1 = img1.Thread(5);
  img1.Pop(t1, 700);             // must not close "setup" of the previous image
  Report r = Analyze(TraceOf({&img0, &img1}), {});
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_EQ(r.processes[0].unbalanced, 2u);
  EXPECT_EQ(Find(r.nvtx_ranges, "setup")->unbalanced, 1u);
  EXPECT_EQ(Find(r.nvtx_ranges, "parse")->time.total, 10u);
}

}  // namespace
}  // namespace trainprof::collector

namespace trainprof::collector {
namespace {

// The end's thread is decoded before the start's (threads are read one after another): the
// matcher holds the end until the start appears.
TEST(NvtxStats, StartEndWhoseEndIsReadFirst) {
  TraceBuilder b = Proc(1, 1'000);
  int t0 = b.Thread(1), t1 = b.Thread(2);
  b.EndRange(t0, 400, 7);       // thread 0 is decoded first
  b.EndRange(t0, 450, 9);       // no start anywhere
  b.Start(t1, 100, "load", 7);
  b.Start(t1, 500, "late", 8);  // never ended
  Report r = Analyze(TraceOf({&b}), {});
  EXPECT_EQ(CountsOf(r.nvtx_ranges, "load", "start/end"), (Counts{1, 300, 0}));
  EXPECT_EQ(CountsOf(r.nvtx_ranges, "late", "start/end"), (Counts{0, 0, 1}));
  EXPECT_EQ(CountsOf(r.nvtx_ranges, "<end without start>", "start/end"), (Counts{0, 0, 1}));
  EXPECT_EQ(r.processes[0].unbalanced, 2u);
}

// Past DurationSummary::kExactSamples calls the median is estimated: flagged in the row, stated
// in the text report, within the stated error. Merged over processes the same way.
TEST(NvtxStats, ManyCallsGiveAnEstimatedMedianThatSaysSo) {
  TraceBuilder a = Proc(1, 100'000'000), b = Proc(2, 100'000'000);
  std::vector<uint64_t> all;
  for (TraceBuilder* p : {&a, &b}) {
    int t = p->Thread(p == &a ? 1 : 2);
    for (uint64_t i = 0; i < 3'001; ++i) {
      uint64_t d = 1'000 + (i * 7919) % 5'000 + (p == &b ? 3'000 : 0);
      p->Push(t, i * 20'000, "step");
      p->Pop(t, i * 20'000 + d);
      all.push_back(d);
    }
  }
  Report r = Analyze(TraceOf({&a, &b}), {.by_process = true});
  auto merged = Find(r.nvtx_ranges, "step");
  ASSERT_NE(merged, nullptr);
  EXPECT_EQ(merged->time.count, 6'002u);
  EXPECT_FALSE(merged->time.exact);
  std::vector<uint64_t> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  const double exact = (static_cast<double>(sorted[3'000]) + static_cast<double>(sorted[3'001])) / 2;
  EXPECT_NEAR(merged->time.median, exact, exact * DurationSummary::kRelativeError);
  uint64_t total = 0;
  for (uint64_t d : all) total += d;
  EXPECT_EQ(merged->time.total, total);
  EXPECT_EQ(merged->time.min, sorted.front());
  EXPECT_EQ(merged->time.max, sorted.back());
  ASSERT_EQ(r.processes.size(), 2u);
  EXPECT_FALSE(r.processes[0].nvtx_ranges[0].time.exact);
  const std::string text = RenderText(r);
  EXPECT_NE(text.find("~"), std::string::npos) << text;
  EXPECT_NE(text.find("estimated"), std::string::npos) << text;
  // A small table stays exact and says nothing.
  TraceBuilder c = Proc(3, 1'000);
  int t = c.Thread(3);
  c.Push(t, 0, "x");
  c.Pop(t, 10);
  Report small = Analyze(TraceOf({&c}), {});
  EXPECT_TRUE(small.nvtx_ranges[0].time.exact);
  EXPECT_EQ(RenderText(small).find("estimated"), std::string::npos);
}

}  // namespace
}  // namespace trainprof::collector

namespace trainprof::collector {
namespace {

// Ends of ids never started, in bulk: counted, with the matcher's memory bounded (the ends past
// kMaxHeldEnds are counted at once).
TEST(NvtxMatcher, EndsWithoutStartsAreCountedAndBounded) {
  NvtxMatcher m;
  const uint64_t n = NvtxMatcher::kMaxHeldEnds + 1000;
  for (uint64_t i = 0; i < n; ++i) m.End(1'000'000 + i, i);
  m.Start(1, 2, 5, 10);
  m.End(5, 30);
  NvtxSummary s = m.Finish();
  EXPECT_EQ(s.unbalanced, n);
  uint64_t orphans = 0, matched = 0;
  for (const RangeSamples& r : s.ranges) {
    if (r.key.orphan) orphans += r.unbalanced;
    if (!r.key.orphan) matched += r.durations.count();
  }
  EXPECT_EQ(orphans, n);
  EXPECT_EQ(matched, 1u);
}

}  // namespace
}  // namespace trainprof::collector

namespace trainprof::collector {
namespace {

long RssKib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Memory follows the (domain, name) pairs used, not domains x the largest name id (was: 2000
// domains each using name 100000 took 1.6 GB).
TEST(NvtxMatcher, MemoryFollowsThePairsUsed) {
  NvtxMatcher m;
  const long before = RssKib();
  for (uint32_t d = 1; d <= 2000; ++d) {
    m.Mark(d, 100'000);
    m.Push(0, d, 100'000, 10);
    m.Pop(0, d, 15);
  }
  const long grown = RssKib() - before;
  NvtxSummary s = m.Finish();
  EXPECT_LT(grown, 64 * 1024) << grown << " KiB";
  EXPECT_EQ(s.marks.size(), 2000u);
  EXPECT_EQ(s.ranges.size(), 2000u);
  for (const RangeSamples& r : s.ranges) EXPECT_EQ(r.durations.total(), 5u);
}

}  // namespace
}  // namespace trainprof::collector
