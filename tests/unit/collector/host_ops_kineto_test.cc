// HostOpTotalsOf on the committed torch.profiler traces (tests/data/kineto/), against the
// key_averages() recorded beside them, without trainprof's Kineto reader: this test's own minimal
// SAX pass takes the cpu_op and python_function events (ts/dur as exact ns from the number's text).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "collector/stats/host_ops.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using Json = nlohmann::json;

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  if (f == nullptr) return out;
  char buf[65536];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// "12.345" us -> 12345 ns, exactly.
uint64_t Ns(const std::string& us) {
  const size_t dot = us.find('.');
  std::string frac = dot == std::string::npos ? "" : us.substr(dot + 1);
  frac = (frac + "000").substr(0, 3);
  return std::stoull(us.substr(0, dot)) * 1000 + std::stoull(frac);
}

// The X events of categories cpu_op and python_function of traceEvents, depth 2 objects.
struct Events : nlohmann::json_sax<Json> {
  StringPool* strings;
  std::vector<HostOp> ops;
  int depth = 0;
  std::string at_key, cat, ph, name, ts, dur;
  std::map<std::string, uint32_t> threads;
  std::string tid;
  explicit Events(StringPool* s) : strings(s) {}
  bool at() const { return depth == 3; }
  void Value(const std::string& v) {
    if (!at()) return;
    if (at_key == "cat") cat = v;
    if (at_key == "ph") ph = v;
    if (at_key == "name") name = v;
    if (at_key == "ts") ts = v;
    if (at_key == "dur") dur = v;
    if (at_key == "tid") tid = v;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t v) override { return Value(std::to_string(v)), true; }
  bool number_unsigned(number_unsigned_t v) override { return Value(std::to_string(v)), true; }
  bool number_float(number_float_t, const string_t& s) override { return Value(s), true; }
  bool string(string_t& s) override { return Value(s), true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    if (++depth == 3) cat = ph = name = ts = dur = tid = "";
    return true;
  }
  bool key(string_t& k) override { return at_key = k, true; }
  bool end_object() override {
    if (depth-- == 3 && ph == "X" && (cat == "cpu_op" || cat == "python_function")) {
      const uint32_t thread = threads.emplace(tid, static_cast<uint32_t>(threads.size())).first->second;
      const uint64_t b = Ns(ts);
      ops.push_back({b, b + Ns(dur), strings->Intern(name), thread,
                     cat == "cpu_op" ? HostOpKind::kOperator : HostOpKind::kPythonFunction});
    }
    return true;
  }
  bool start_array(std::size_t) override { return ++depth, true; }
  bool end_array() override { return --depth, true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

class HostOpsKinetoTest : public ::testing::TestWithParam<const char*> {};

// Every operator: calls, self and total equal torch's (10 ns for its float sums). Python
// functions: calls and totals equal; self for all but the few that open or close a
// record_function scope (the annotation is in torch's tree, not here; torch's self of those is
// negative: docs/analysis.md "Operators and Python functions").
TEST_P(HostOpsKinetoTest, MatchesKeyAverages) {
  const std::string dir = TRAINPROF_SOURCE_DIR "/tests/data/kineto/";
  const std::string text = Gunzip(dir + GetParam() + ".pt.trace.json.gz");
  ASSERT_FALSE(text.empty());
  StringPool strings;
  Events ev(&strings);
  ASSERT_TRUE(Json::sax_parse(text, &ev));
  ASSERT_GT(ev.ops.size(), 500u);
  HostOpTotals t = HostOpTotalsOf(ev.ops);
  const Json ref = Json::parse(test::ReadFile(dir + GetParam() + ".key_averages.json"));
  size_t self_differs = 0;
  for (const auto& [kind, ours] : {std::pair{"operators", &t.operators}, std::pair{"python_functions", &t.python_functions}}) {
    std::map<std::string, HostOpStat> by;
    for (const HostOpStat& s : *ours) by[std::string(strings.Get(s.name))] = s;
    EXPECT_EQ(by.size(), ref[kind].size()) << kind;
    for (const Json& r : ref[kind]) {
      const std::string name = r["name"];
      SCOPED_TRACE(name);
      ASSERT_EQ(by.count(name), 1u);
      const HostOpStat& s = by[name];
      EXPECT_EQ(s.calls, r["calls"].get<uint64_t>());
      EXPECT_NEAR(s.total_ns / 1000.0, r["cpu_time_total_us"].get<double>(), 0.01);
      const bool self_equal = std::fabs(s.self_ns / 1000.0 - r["self_cpu_time_total_us"].get<double>()) <= 0.01;
      if (std::string(kind) == "operators") {
        EXPECT_TRUE(self_equal) << s.self_ns << " vs " << r["self_cpu_time_total_us"];
      } else if (!self_equal) {
        ++self_differs;
      }
    }
  }
  EXPECT_LE(self_differs, 6u);  // measured: 5 (one process), 6 (each DDP rank)
}

INSTANTIATE_TEST_SUITE_P(Traces, HostOpsKinetoTest,
                         ::testing::Values("cpu_steps", "ddp_gloo_rank0", "ddp_gloo_rank1"));

}  // namespace
}  // namespace trainprof::collector
