// Name groups (collector/base/name_groups.h): the rule, and how a report groups range names.
#include "collector/base/name_groups.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "collector/render/render.h"
#include "collector/report/report.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

std::string Pattern(std::string_view name) {
  std::string p;
  return NamePattern(name, &p) ? p : "(none)";
}

// Each case: a range name, and the pattern of its group.
void ExpectPatterns(std::initializer_list<std::pair<std::string_view, std::string>> cases) {
  for (const auto& [name, pattern] : cases) EXPECT_EQ(Pattern(name), pattern) << name;
}

TEST(NamePattern, NumbersNotGluedToWordsBecomeN) {
  ExpectPatterns({
      {"step 17", "step <N>"},
      {"batch_3/epoch_2", "batch_<N>/epoch_<N>"},
      {"seq = 123, op 0x7f3a", "seq = <N>, op <N>"},
      {"layer1.0.conv1", "layer1.<N>.conv1"},
      {"17", "<N>"},
      {"lr 0.001", "lr <N>.<N>"},
      {"-5", "-<N>"},
  });
}

TEST(NamePattern, DigitsOfAWordStay) {
  for (const char* name : {"conv2d_3x3", "fp16", "layer3", "step17", "17th", "forward", "", "0xZZ"}) {
    EXPECT_EQ(Pattern(name), "(none)") << name;
  }
}

using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

TraceBuilder Steps(int32_t pid, int first, int n) {
  TraceBuilder b(pid, 1, 0);
  b.HeaderEnd(fmt::EndKind::kExit, 0, 1'000'000);
  int t = b.Thread(static_cast<uint32_t>(pid));
  uint64_t now = 10;
  for (int i = first; i < first + n; ++i) {
    b.Push(t, now, "step " + std::to_string(i));
    b.Pop(t, now + 10 * (i + 1));
    now += 1'000;
  }
  b.Push(t, now, "alone 7");  // one name of its pattern: not grouped
  b.Pop(t, now + 5);
  b.Push(t, now + 10, "conv2d_3x3");
  b.Pop(t, now + 20);
  return b;
}

TEST(NameGroups, ReportGroupsNamesThatDifferInNumbers) {
  TraceBuilder b = Steps(100, 0, 4);
  Report r = Analyze(TraceOf({&b}), {});
  ASSERT_EQ(r.nvtx_ranges.size(), 3u);
  const RangeRow g = r.nvtx_ranges[0];
  EXPECT_EQ(g.name, "step <N>");
  EXPECT_TRUE(g.grouped);
  EXPECT_EQ(g.names, 4u);
  EXPECT_EQ(g.time.count, 4u);
  EXPECT_EQ(g.time.total, 10u + 20 + 30 + 40);  // over all calls of its names
  EXPECT_EQ(g.time.min, 10u);
  EXPECT_EQ(g.time.max, 40u);
  EXPECT_DOUBLE_EQ(g.time.median, 25.0);
  EXPECT_EQ(r.nvtx_ranges[1].name, "conv2d_3x3");
  EXPECT_EQ(r.nvtx_ranges[2].name, "alone 7");
  EXPECT_FALSE(r.nvtx_ranges[2].grouped);
  EXPECT_EQ(r.processes[0].nvtx_ranges[0].name, "step <N>");
  EXPECT_NE(RenderText(r).find("step <N> (4 names)"), std::string::npos);
  EXPECT_NE(RenderCsv(r)[3].text.find("step <N>,,push/pop,4,100,"), std::string::npos);
}

TEST(NameGroups, FewNamesCalledOftenStayApart) {
  TraceBuilder b(100, 1, 0);
  b.HeaderEnd(fmt::EndKind::kExit, 0, 1'000'000);
  int t = b.Thread(100);
  uint64_t now = 10;
  for (int w = 0; w < 4; ++w) {  // one name per worker, 10 calls each: workers, not a counter
    for (int i = 0; i < 10; ++i, now += 100) {
      b.Push(t, now, "worker_" + std::to_string(w));
      b.Pop(t, now + 10);
    }
  }
  Report r = Analyze(TraceOf({&b}), {});
  ASSERT_EQ(r.nvtx_ranges.size(), 4u);
  for (const RangeRow& row : r.nvtx_ranges) EXPECT_FALSE(row.grouped) << row.name;
  EXPECT_FALSE(GroupsNames(4, 40));
  EXPECT_TRUE(GroupsNames(4, 8));
  EXPECT_TRUE(GroupsNames(64, 64'000));
  EXPECT_FALSE(GroupsNames(1, 1));
}

TEST(NameGroups, TurnedOffEveryNameHasItsRow) {
  TraceBuilder b = Steps(100, 0, 4);
  ReportOptions o;
  o.group_names = false;
  Report r = Analyze(TraceOf({&b}), o);
  EXPECT_EQ(r.nvtx_ranges.size(), 6u);
  for (const RangeRow& row : r.nvtx_ranges) {
    EXPECT_FALSE(row.grouped);
    EXPECT_EQ(row.names, 1u);
  }
}

TEST(NameGroups, MergedTableCountsANameOfSeveralProcessesOnce) {
  TraceBuilder a = Steps(100, 0, 3), b = Steps(200, 2, 3);  // names step 0..2 and step 2..4
  Report r = Analyze(TraceOf({&a, &b}), {});
  const RangeRow g = r.nvtx_ranges[0];
  EXPECT_EQ(g.name, "step <N>");
  EXPECT_EQ(g.names, 5u);
  EXPECT_EQ(g.time.count, 6u);
  EXPECT_EQ(g.time.total, (10u + 20 + 30) + (30 + 40 + 50));
  EXPECT_DOUBLE_EQ(g.percent, g.time.total * 100.0 / 2'000'000);  // both processes' wall time
  EXPECT_EQ(r.processes[0].nvtx_ranges[0].names, 3u);
  // "alone 7" occurs in both processes: still one name, not grouped.
  bool alone = false;
  for (const RangeRow& row : r.nvtx_ranges) alone = alone || (row.name == "alone 7" && row.time.count == 2);
  EXPECT_TRUE(alone);
}

}  // namespace
}  // namespace trainprof::collector
