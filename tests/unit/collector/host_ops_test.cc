// The operator and Python function tables (collector/stats/host_ops.h): calls, self and total time
// per name exactly as torch.profiler's key_averages() computes them, on synthetic host ops.
#include "collector/stats/host_ops.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "collector/render/render.h"
#include "collector/report/report.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

struct Op {
  const char* name;
  uint64_t begin, end;
  uint32_t thread = 0;
  HostOpKind kind = HostOpKind::kOperator;
};

class HostOpsTest : public ::testing::Test {
 protected:
  std::vector<HostOp> Ops(const std::vector<Op>& ops) {
    std::vector<HostOp> v;
    for (const Op& o : ops) v.push_back({o.begin, o.end, strings_.Intern(o.name), o.thread, o.kind});
    return v;
  }
  // name -> {calls, self, total}
  using Table = std::map<std::string, std::vector<uint64_t>>;
  Table Of(const std::vector<HostOpStat>& stats) {
    Table t;
    for (const HostOpStat& s : stats) t[std::string(strings_.Get(s.name))] = {s.calls, s.self_ns, s.total_ns};
    return t;
  }
  Table Operators(const std::vector<Op>& ops) { return Of(HostOpTotalsOf(Ops(ops)).operators); }

  StringPool strings_;
};

// A [0,100] holds B [10,40] (holding D [20,30]) and C [50,70]: self = total - children's totals.
const std::vector<Op> kNested = {{"A", 0, 100}, {"B", 10, 40}, {"D", 20, 30}, {"C", 50, 70}};

TEST_F(HostOpsTest, SelfIsTotalLessTheChildrensTotals) {
  EXPECT_EQ(Operators(kNested), (Table{{"A", {1, 50, 100}}, {"B", {1, 20, 30}}, {"C", {1, 20, 20}}, {"D", {1, 10, 10}}}));
}

TEST_F(HostOpsTest, InputOrderDoesNotMatter) {
  std::vector<Op> ops = kNested;
  for (const Op& o : kNested) ops.push_back({o.name, o.begin + 1000, o.end + 1000});
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::shuffle(ops.begin(), ops.end(), rng);
    EXPECT_EQ(Operators(ops),
              (Table{{"A", {2, 100, 200}}, {"B", {2, 40, 60}}, {"C", {2, 40, 40}}, {"D", {2, 20, 20}}}));
  }
}

TEST_F(HostOpsTest, AWrapperCallingItselfOnceIsOneCall) {
  // torch's _remove_dup_nodes: aten::to [0,100] whose only child is aten::to [10,90] is one call;
  // the inner one's child becomes the outer one's, also through a chain of three.
  EXPECT_EQ(Operators({{"F", 0, 100}, {"F", 10, 90}, {"G", 20, 30}}), (Table{{"F", {1, 90, 100}}, {"G", {1, 10, 10}}}));
  EXPECT_EQ(Operators({{"F", 0, 100}, {"F", 10, 90}, {"F", 20, 80}, {"G", 30, 40}}),
            (Table{{"F", {1, 90, 100}}, {"G", {1, 10, 10}}}));
}

TEST_F(HostOpsTest, RecursiveCallsCountTheirTimeAgainAsKeyAveragesDoes) {
  // F [0,100] holds F [10,50] and G [60,70]: two calls of F (the parent has two children), total
  // 100 + 40 (the nested time counted twice, as key_averages sums cpu_time_total), self 50 + 40.
  EXPECT_EQ(Operators({{"F", 0, 100}, {"F", 10, 50}, {"G", 60, 70}}), (Table{{"F", {2, 90, 140}}, {"G", {1, 10, 10}}}));
}

TEST_F(HostOpsTest, OpsNestOnlyOnTheirOwnThread) {
  EXPECT_EQ(Operators({{"A", 0, 100, 0}, {"B", 10, 20, 1}, {"C", 30, 40, 0}, {"D", 35, 38, 1}}),
            (Table{{"A", {1, 90, 100}}, {"B", {1, 10, 10}}, {"C", {1, 10, 10}}, {"D", {1, 3, 3}}}));
}

TEST_F(HostOpsTest, PartialOverlapIsNoNestingAndClosesTheParent) {
  // _populate_cpu_children: B [50,150] overlaps A [0,100] partly, so it is not A's child and A
  // leaves the stack: C [60,70], inside both, is B's child only.
  EXPECT_EQ(Operators({{"A", 0, 100}, {"B", 50, 150}, {"C", 60, 70}}),
            (Table{{"A", {1, 100, 100}}, {"B", {1, 90, 100}}, {"C", {1, 10, 10}}}));
}

TEST_F(HostOpsTest, EqualBeginsNestTheLongerOutside) {
  // Sorted by (begin, -end): B [0,50] is A [0,100]'s child, whatever the input order; an op starting
  // where another ends is not its child.
  EXPECT_EQ(Operators({{"B", 0, 50}, {"A", 0, 100}, {"C", 100, 120}}),
            (Table{{"A", {1, 50, 100}}, {"B", {1, 50, 50}}, {"C", {1, 20, 20}}}));
}

TEST_F(HostOpsTest, PythonFunctionsAndOperatorsShareOneTree) {
  // torch builds one tree over every CPU event: a Python function's self time excludes the
  // operators it calls, and an operator's excludes a Python function inside it (a hook).
  const HostOpKind py = HostOpKind::kPythonFunction;
  HostOpTotals t = HostOpTotalsOf(Ops({{"train.py(10): step", 0, 100, 0, py},
                                       {"aten::mm", 10, 40, 0},
                                       {"hook.py(3): hook", 20, 25, 0, py},
                                       {"train.py(10): step", 200, 260, 0, py}}));
  EXPECT_EQ(Of(t.operators), (Table{{"aten::mm", {1, 25, 30}}}));
  EXPECT_EQ(Of(t.python_functions), (Table{{"train.py(10): step", {2, 130, 160}}, {"hook.py(3): hook", {1, 5, 5}}}));
}

TEST_F(HostOpsTest, TablesPerProcessAndMerged) {
  Process a, b;
  a.images.emplace_back();
  a.images[0].host_ops = Ops({{"aten::mm", 0, 300}, {"aten::add", 10, 110}, {"aten::relu", 400, 420}});
  b.images.emplace_back();
  b.images[0].host_ops = Ops({{"aten::mm", 0, 100}, {"f.py(1): f", 0, 1000, 0, HostOpKind::kPythonFunction}});
  const HostOpTotals ta = ProcessHostOpTotals(a), tb = ProcessHostOpTotals(b);
  HostOpTables t = BuildHostOpTables({&ta, &tb}, {1000, 3000}, strings_, 0);
  ASSERT_EQ(t.operators.size(), 3u);
  // aten::mm: self 200 + 100 of 4000 ns (both processes' walls), total 400; in two processes.
  EXPECT_EQ(t.operators[0].name, "aten::mm");
  EXPECT_EQ(t.operators[0].calls, 2u);
  EXPECT_EQ(t.operators[0].self_ns, 300u);
  EXPECT_EQ(t.operators[0].total_ns, 400u);
  EXPECT_DOUBLE_EQ(t.operators[0].self_percent, 7.5);
  EXPECT_DOUBLE_EQ(t.operators[0].total_percent, 10.0);
  EXPECT_EQ(t.operators[0].processes, 2u);
  EXPECT_EQ(t.operators[1].name, "aten::add");
  EXPECT_EQ(t.operators[1].processes, 1u);
  EXPECT_EQ(t.operators[2].name, "aten::relu");
  EXPECT_EQ(t.operators_wall_ns, 4000u);
  EXPECT_EQ(t.operators_processes, 2u);
  // Only process b has Python functions: its wall alone is the denominator; the function's self
  // time excludes the operator inside it.
  ASSERT_EQ(t.python_functions.size(), 1u);
  EXPECT_EQ(t.python_functions[0].self_ns, 900u);
  EXPECT_DOUBLE_EQ(t.python_functions[0].self_percent, 30.0);
  EXPECT_EQ(t.python_functions_wall_ns, 3000u);
  EXPECT_EQ(t.python_functions_processes, 1u);
  EXPECT_TRUE(t.any());

  HostOpTables top = BuildHostOpTables({&ta, &tb}, {1000, 3000}, strings_, 2);
  EXPECT_EQ(top.operators.size(), 2u);
  EXPECT_EQ(top.operators_omitted, 1u);
  EXPECT_EQ(top.python_functions_omitted, 0u);

  HostOpTables only_a = BuildHostOpTables({&ta}, {1000}, strings_, 0);
  EXPECT_DOUBLE_EQ(only_a.operators[0].self_percent, 20.0);  // 200 of its own 1000 ns
  EXPECT_TRUE(only_a.python_functions.empty());
  EXPECT_EQ(only_a.python_functions_processes, 0u);

  Process none;
  none.images.emplace_back();
  const HostOpTotals tn = ProcessHostOpTotals(none);
  EXPECT_TRUE(tn.empty());
  EXPECT_FALSE(BuildHostOpTables({&tn}, {1000}, strings_, 0).any());
}

TEST_F(HostOpsTest, EqualSelfTimesSortByName) {
  Process a;
  a.images.emplace_back();
  a.images[0].host_ops = Ops({{"b", 0, 10}, {"a", 20, 30}, {"c", 40, 60}});
  const HostOpTotals ta = ProcessHostOpTotals(a);
  HostOpTables t = BuildHostOpTables({&ta}, {100}, strings_, 0);
  ASSERT_EQ(t.operators.size(), 3u);
  EXPECT_EQ(t.operators[0].name, "c");
  EXPECT_EQ(t.operators[1].name, "a");
  EXPECT_EQ(t.operators[2].name, "b");
}

// Two processes of 1 s wall each (as two imported rank files); one also has Python functions.
struct HostOpRun {
  test::TraceBuilder a{201, 1, 1'000'000'000}, b{202, 1, 1'000'000'000}, plain{203, 1, 1'000'000'000};
  HostOpRun() {
    for (test::TraceBuilder* t : {&a, &b, &plain}) {
      t->Thread(static_cast<uint32_t>(t->pid()));
      t->HeaderEnd(format::EndKind::kExit, 0, 2'000'000'000);
    }
  }
  Trace Load(bool with_ops) const {
    Trace t = test::TraceOf({&a, &b, &plain});
    if (!with_ops) return t;
    auto op = [&](const char* name, uint64_t begin, uint64_t end, HostOpKind kind = HostOpKind::kOperator) {
      return HostOp{1'000'000'000 + begin, 1'000'000'000 + end, t.strings.Intern(name), 0, kind};
    };
    for (Process& p : t.processes) {
      std::vector<HostOp>& ops = p.images[0].host_ops;
      if (p.pid == 201) {
        ops = {op("aten::linear", 0, 300'000'000), op("aten::addmm", 10'000'000, 210'000'000),
               op("train.py(9): step", 0, 400'000'000, HostOpKind::kPythonFunction)};
      } else if (p.pid == 202) {
        ops = {op("aten::addmm", 0, 100'000'000), op("aten::relu", 200'000'000, 250'000'000)};
      }
    }
    return t;
  }
};

TEST(HostOpsReport, NothingWithoutHostOps) {
  HostOpRun run;
  Report r = Analyze(run.Load(false), {true, 0});
  nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  // The top level always has the arrays (a stable schema), empty; process rows do not.
  EXPECT_EQ(j["operators"], nlohmann::json::array());
  EXPECT_EQ(j["python_functions"], nlohmann::json::array());
  EXPECT_EQ(j["python_functions_omitted"], 0);
  EXPECT_FALSE(j["processes"][0].contains("operators"));
  EXPECT_EQ(RenderText(r).find("Operators"), std::string::npos);
  for (const CsvTable& t : RenderCsv(r)) EXPECT_EQ(t.name.find("operators"), std::string::npos) << t.name;
}

TEST(HostOpsReport, EveryFormatPerProcessAndMerged) {
  HostOpRun run;
  Report r = Analyze(run.Load(true), {true, 2});
  nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  // Merged: aten::addmm 200 + 100 ms self of the 2 s wall of the two processes with operators.
  ASSERT_EQ(j["operators"].size(), 2u);
  EXPECT_EQ(j["operators"][0], (nlohmann::json{{"name", "aten::addmm"}, {"calls", 2}, {"self_ns", 300'000'000},
                                               {"total_ns", 300'000'000}, {"self_percent", 15.0},
                                               {"total_percent", 15.0}, {"processes", 2}}));
  EXPECT_EQ(j["operators"][1]["name"], "aten::linear");  // self 100 ms; aten::relu (50 ms) cut by --top 2
  EXPECT_EQ(j["operators_omitted"], 1);
  ASSERT_EQ(j["python_functions"].size(), 1u);
  EXPECT_EQ(j["python_functions"][0]["self_ns"], 100'000'000);  // 400 less aten::linear's 300
  EXPECT_EQ(j["python_functions"][0]["self_percent"], 10.0);   // of pid 201's 1 s alone
  EXPECT_EQ(j["python_functions_omitted"], 0);
  // Per process: pid 201's own table, percent of its own wall; pid 203 has none.
  const nlohmann::json& p201 = j["processes"][0];
  ASSERT_EQ(p201["pid"], 201);
  EXPECT_EQ(p201["operators"][0]["name"], "aten::addmm");
  EXPECT_EQ(p201["operators"][0]["self_percent"], 20.0);
  EXPECT_EQ(p201["operators"][1]["self_percent"], 10.0);
  EXPECT_EQ(j["processes"][2]["operators"], nlohmann::json::array());

  const std::string text = RenderText(r);
  EXPECT_NE(text.find("\nOperators (all processes)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  Name          Self CPU %  Self CPU  CPU total %  CPU total  # of Calls\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  aten::addmm         15.0    300 ms         15.0     300 ms           2\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  ... 1 more name (--top 2)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("the summed wall time of the 2 processes with operators (2.00 s)"), std::string::npos) << text;
  EXPECT_NE(text.find("\nPython functions (all processes)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("% = of the wall time of the process (1.00 s)"), std::string::npos) << text;

  std::map<std::string, std::string> csv = test::CsvByName(r);
  EXPECT_EQ(csv["operators.csv"],
            "name,calls,self_ns,total_ns,self_percent,total_percent,processes\r\n"
            "aten::addmm,2,300000000,300000000,15,15,2\r\n"
            "aten::linear,1,100000000,300000000,5,15,1\r\n");
  EXPECT_EQ(csv["python_functions.csv"],
            "name,calls,self_ns,total_ns,self_percent,total_percent,processes\r\n"
            "train.py(9): step,1,100000000,400000000,10,40,1\r\n");
  EXPECT_NE(csv["operators_by_process.csv"].find("\r\n201,node0,aten::addmm,1,200000000,200000000,20,20,1\r\n"),
            std::string::npos)
      << csv["operators_by_process.csv"];
}

}  // namespace
}  // namespace trainprof::collector
