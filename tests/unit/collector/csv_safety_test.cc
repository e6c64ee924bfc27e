// CSV cells from recorded data: formulas neutralised, control characters escaped (render.h).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "collector/render/render.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

// Each case: a recorded string, and the CSV cell it becomes.
using Cases = std::vector<std::pair<std::string, std::string>>;

void ExpectCells(const Cases& cases) {
  for (const auto& [recorded, cell] : cases) EXPECT_EQ(CsvField(recorded), cell) << recorded;
}

TEST(CsvField, FormulaStartsGetAQuote) {
  ExpectCells({
      {"=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""},
      {"+cmd", "'+cmd"},
      {"-2+3", "'-2+3"},
      {"@SUM(A1)", "'@SUM(A1)"},
      {"\tstep", "'\\tstep"},
      {"\rstep", "'\\rstep"},
  });
}

TEST(CsvField, NumbersAndPlainTextUnchanged) {
  ExpectCells({{"-5", "-5"}, {"-0.25", "-0.25"}, {"12", "12"}, {"step", "step"}, {"a=b", "a=b"}, {"a,b", "\"a,b\""}});
}

TEST(CsvField, ControlCharactersEscapedAsInTheText) {
  ExpectCells({{"tab\there\nnl\x01", "tab\\there\\nnl\\x01"}, {"bad \xff", "bad \xEF\xBF\xBD"}});
}

TEST(CsvReport, RecordedNamesAndCommandsNeutralised) {
  test::TraceBuilder b(100, 1, 0);
  b.Command({"=cmd", "-x"});
  b.HeaderEnd(format::EndKind::kExit, 0, 1'000);
  int t = b.Thread(100);
  b.Push(t, 10, "=1+1");
  b.Pop(t, 20);
  Report r = Analyze(test::TraceOf({&b}), {});
  const std::vector<CsvTable> tables = RenderCsv(r);
  EXPECT_NE(tables[3].text.find("\r\n'=1+1,,push/pop,1,10,"), std::string::npos) << tables[3].text;
  EXPECT_NE(tables[1].text.find(",'=cmd -x,"), std::string::npos) << tables[1].text;
}

}  // namespace
}  // namespace trainprof::collector
