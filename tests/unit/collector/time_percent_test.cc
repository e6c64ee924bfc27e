// Time (%) falls with the total down every statistics table sorted by total (one denominator
// per table, docs/report.md "Time (%)"): checked on every table of every golden JSON report
// (tests/golden/<case>/report*.json), merged and per process, NVTX and CUDA alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#ifndef TRAINPROF_SOURCE_DIR
#error "TRAINPROF_SOURCE_DIR: the source tree, for tests/golden"
#endif

namespace trainprof::collector {
namespace {

using nlohmann::json;

// Every array of rows with "percent" and "total_ns" under `j` (path for messages): the number of
// such tables sorted by total, and one failure message per row whose percent rises.
void CheckTables(const json& j, const std::string& path, size_t* tables, std::string* failures) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) CheckTables(v, path + "." + k, tables, failures);
    return;
  }
  if (!j.is_array()) return;
  const bool rows = !j.empty() && std::all_of(j.begin(), j.end(), [](const json& r) {
    return r.is_object() && r.contains("percent") && r["percent"].is_number() && r.contains("total_ns");
  });
  if (!rows) {
    for (size_t i = 0; i < j.size(); ++i) CheckTables(j[i], path + "[" + std::to_string(i) + "]", tables, failures);
    return;
  }
  for (size_t i = 1; i < j.size(); ++i) {
    if (j[i]["total_ns"].get<double>() > j[i - 1]["total_ns"].get<double>()) return;  // not sorted by total
  }
  ++*tables;
  for (size_t i = 1; i < j.size(); ++i) {
    if (j[i]["percent"].get<double>() > j[i - 1]["percent"].get<double>() + 1e-9) {
      *failures += path + "[" + std::to_string(i) + "]: " + j[i]["percent"].dump() + "% after " +
                   j[i - 1]["percent"].dump() + "%\n";
    }
  }
}

TEST(TimePercent, FallsWithTheTotalInEveryGoldenTable) {
  size_t tables = 0, files = 0;
  std::string failures;
  const std::filesystem::path golden = std::filesystem::path(TRAINPROF_SOURCE_DIR) / "tests" / "golden";
  for (const auto& dir : std::filesystem::directory_iterator(golden)) {
    if (!dir.is_directory()) continue;
    for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
      const std::string name = f.path().filename().string();
      if (name.rfind("report", 0) != 0 || f.path().extension() != ".json") continue;
      std::ifstream in(f.path());
      const json j = json::parse(in);
      ++files;
      CheckTables(j, dir.path().filename().string() + "/" + name, &tables, &failures);
    }
  }
  EXPECT_GE(files, 5u);
  EXPECT_GE(tables, 20u);  // the NVTX tables (merged, per process) and the CUDA tables of the cases
  EXPECT_EQ(failures, "");
}

}  // namespace
}  // namespace trainprof::collector
