// CSV cells from recorded data: formulas neutralised, control characters escaped (render.h).
#include <gtest/gtest.h>

#include "collector/render/render.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

TEST(CsvField, FormulaStartsGetAQuote) {
  EXPECT_EQ(CsvField("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  EXPECT_EQ(CsvField("+cmd"), "'+cmd");
  EXPECT_EQ(CsvField("-2+3"), "'-2+3");
  EXPECT_EQ(CsvField("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(CsvField("\tstep"), "'\\tstep");
  EXPECT_EQ(CsvField("\rstep"), "'\\rstep");
}

TEST(CsvField, NumbersAndPlainTextUnchanged) {
  EXPECT_EQ(CsvField("-5"), "-5");
  EXPECT_EQ(CsvField("-0.25"), "-0.25");
  EXPECT_EQ(CsvField("12"), "12");
  EXPECT_EQ(CsvField("step"), "step");
  EXPECT_EQ(CsvField("a=b"), "a=b");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
}

TEST(CsvField, ControlCharactersEscapedAsInTheText) {
  EXPECT_EQ(CsvField("tab\there\nnl\x01"), "tab\\there\\nnl\\x01");
  EXPECT_EQ(CsvField("bad \xff"), "bad \xEF\xBF\xBD");
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
