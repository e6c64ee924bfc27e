// The table model (collector/base/table.h, collector/report/report_tables.h): every declaration
// is consistent, the generic renderers write each format as documented, and docs/report-schema.md
// lists every declared table's fields in the declared order.
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collector/render/render.h"
#include "collector/render/table_render.h"
#include "collector/report/report_tables.h"

namespace trainprof::collector {
namespace {

// The keys of the data columns as the JSON document shows them: "a.b" columns as one "a".
std::vector<std::string> JsonKeys(const TableDef& def) {
  std::vector<std::string> keys;
  for (const ColumnDef& c : def.columns) {
    if (c.show == Show::kText) continue;
    std::string k = c.key;
    k = k.substr(0, k.find('.'));
    if (keys.empty() || keys.back() != k) keys.push_back(k);
  }
  return keys;
}

// The fields of the schema doc's table under the heading that names `table` ("(`nvtx_ranges`)"),
// in order: the backticked names of each row's first cell.
std::vector<std::string> DocumentedFields(const std::string& doc, const std::string& table) {
  std::istringstream in(doc);
  std::string line;
  bool in_section = false;
  std::vector<std::string> fields;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) {
      if (in_section) break;
      in_section = line.find("(`" + table + "`)") != std::string::npos;
      continue;
    }
    if (!in_section || line.rfind("| `", 0) != 0) continue;
    const std::string first = line.substr(2, line.find(" |", 2) - 2);
    for (size_t at = first.find('`'); at != std::string::npos; at = first.find('`', at)) {
      const size_t end = first.find('`', at + 1);
      fields.push_back(first.substr(at + 1, end - at - 1));
      at = end + 1;
    }
  }
  return fields;
}

// A file of the source tree, whole ("" when it cannot be read).
std::string SourceFile(const std::string& path) {
  std::ifstream in(TRAINPROF_SOURCE_DIR "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ReportTables, EveryDeclarationIsConsistent) {
  for (const TableDef* def : DeclaredTables()) {
    SCOPED_TRACE(def->name);
    std::set<std::string> keys;
    for (const ColumnDef& c : def->columns) {
      EXPECT_TRUE(keys.insert(c.key).second) << "key twice: " << c.key;
      EXPECT_NE(std::string(c.meaning), "") << c.key;
      if (c.show == Show::kText) {
        EXPECT_NE(c.header, nullptr) << c.key;
      }
    }
    for (const char* key : def->text) {
      const size_t i = def->Index(key);
      ASSERT_LT(i, def->columns.size()) << "text column without declaration: " << key;
      EXPECT_NE(def->columns[i].header, nullptr) << key;
      EXPECT_NE(def->columns[i].show, Show::kData) << key;
    }
  }
}


// The columns docs/report.md's "CSV files" table lists for `file` ("a, b, c").
std::vector<std::string> DocumentedCsvColumns(const std::string& doc, const std::string& file) {
  std::istringstream in(doc);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| `" + file + "` |", 0) != 0) continue;
    const size_t last = line.rfind(" |", line.size() - 3);
    const std::string cell = line.substr(last + 3, line.size() - last - 5);
    std::vector<std::string> columns;
    std::istringstream cols(cell);
    for (std::string c; std::getline(cols, c, ',');) columns.push_back(c.substr(c.find_first_not_of(' ')));
    return columns;
  }
  return {};
}

// docs/report-schema.md lists each table's JSON fields, docs/report.md its CSV columns, as declared.
TEST(ReportTables, DocsListTheDeclaredFieldsInOrder) {
  const std::string schema = SourceFile("docs/report-schema.md"), report = SourceFile("docs/report.md");
  ASSERT_NE(schema, "") << "docs/report-schema.md not found";
  ASSERT_NE(report, "") << "docs/report.md not found";
  for (const TableDef* def : DeclaredTables()) {
    SCOPED_TRACE(def->name);
    EXPECT_EQ(DocumentedFields(schema, def->name), JsonKeys(*def)) << "docs/report-schema.md";
    EXPECT_EQ(DocumentedCsvColumns(report, def->csv), CsvHeader(*def)) << "docs/report.md";
  }
}

TEST(ReportTables, RangeRowCellsInEveryFormat) {
  RangeRow r;
  r.name = "step <N>";
  r.style = "push/pop";
  r.time.count = 2000;
  r.time.total = 3'000'000;
  r.time.mean = 1500;
  r.time.min = 1000;
  r.time.max = 2000;
  r.time.median = 1500;
  r.time.exact = false;
  r.percent = 12.5;
  r.names = 3;
  r.grouped = true;
  const Cells cells = RangeCells(r);
  ASSERT_EQ(cells.size(), RangeTable().columns.size());
  const std::vector<std::string> text = TextCells(RangeTable(), cells);
  EXPECT_EQ(text.front(), "12.5");  // FormatPercent
  EXPECT_EQ(text[RangeTable().text.size() - 1], "step <N> (3 names)");
  EXPECT_EQ(text[4], "~1.50 µs");  // Median, estimated
  // JSON and CSV have the same fields in the same order: median_exact after median_ns in both.
  const std::vector<std::string> header = CsvHeader(RangeTable());
  std::vector<std::string> json_keys;
  const nlohmann::ordered_json row = RowJson(RangeTable(), cells);
  for (const auto& [k, v] : row.items()) json_keys.push_back(k);
  EXPECT_EQ(header, json_keys);
  const std::vector<std::string> fields = CsvFields(RangeTable(), cells);
  EXPECT_EQ(fields[RangeTable().Index("median_exact")], "false");
  EXPECT_EQ(fields[RangeTable().Index("percent")], "12.5");
}

TEST(ReportTables, CallsWithoutDurationsShowDashesInText) {
  RangeRow r;
  r.name = "<pop without push>";
  r.unbalanced = 4;
  const std::vector<std::string> text = TextCells(RangeTable(), RangeCells(r));
  EXPECT_EQ(text[0], "-");   // Time (%)
  EXPECT_EQ(text[2], "0");   // Calls
  EXPECT_EQ(text[8], "4");   // Unbalanced
  EXPECT_EQ(RowJson(RangeTable(), RangeCells(r))["total_ns"], 0);
}

TEST(ReportTables, NestedKeysNestInJsonAndJoinInCsv) {
  DeviceRow d;
  d.device = 1;
  d.latency_count = 2;
  d.latency_p95_ns = 7.5;
  const Cells cells = DeviceCells(d, "all");
  const auto j = RowJson(DeviceTable(), cells);
  EXPECT_EQ(j["launch_latency"]["p95_ns"], 7.5);
  EXPECT_EQ(j["launch_latency"]["exact"], true);
  EXPECT_TRUE(j["pid"].is_null());
  const std::vector<std::string> header = CsvHeader(DeviceTable());
  EXPECT_EQ(header[header.size() - 2], "launch_latency_p95_ns");
  EXPECT_EQ(header.back(), "launch_latency_exact");
  EXPECT_EQ(CsvFields(DeviceTable(), cells)[0], "");  // pid: null is empty
  EXPECT_EQ(TextCells(DeviceTable(), cells)[0], "all");
  EXPECT_EQ(TextCells(DeviceTable(), cells)[3], "-");  // Busy: none
}

}  // namespace
}  // namespace trainprof::collector

namespace trainprof::collector {
namespace {

// The recipe of collector/README.md ("Adding a table"): a declaration and rows in Report::tables
// are all the renderers need.
TEST(ReportTables, ATableInReportTablesIsInEveryFormat) {
  static const TableDef kQueues{"queues",
                                "queues.csv",
                                {{"name", "Queue", Unit::kText, Align::kLeft, "queue name"},
                                 {"wait_ns", "Wait", Unit::kNs, Align::kRight, "summed wait"},
                                 {"share", nullptr, Unit::kPercent, Align::kRight, "share of the run", Show::kData}},
                                {"wait_ns", "name"}};
  Report r;
  r.tables.push_back({&kQueues, "Queues", {{"h2d", uint64_t{1'500'000}, 12.5}, {"d2h", uint64_t{20}, 0.5}}});
  const std::string text = RenderText(r);
  EXPECT_NE(text.find("\nQueues\n"
                      "     Wait  Queue\n"
                      "  -------  -----\n"
                      "  1.50 ms  h2d\n"
                      "    20 ns  d2h\n"),
            std::string::npos)
      << text;
  const nlohmann::json json = nlohmann::json::parse(RenderJson(r));
  EXPECT_EQ(json["queues"][0]["wait_ns"], 1'500'000);
  EXPECT_EQ(json["queues"][1]["share"], 0.5);
  bool found = false;
  for (const CsvTable& t : RenderCsv(r)) {
    if (t.name != "queues.csv") continue;
    found = true;
    EXPECT_EQ(t.text, "name,wait_ns,share\r\nh2d,1500000,12.5\r\nd2h,20,0.5\r\n");
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace trainprof::collector
