// Renderers of a Report: text for people, JSON for programs (docs/report-schema.md), CSV for
// spreadsheets. Each is a pure function of the Report; writing files is the caller's job.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/report.h"

namespace trainprof::collector {

/// Aligned tables with human units (docs/report.md shows the layout).
std::string RenderText(const Report& report);

/// The JSON document of docs/report-schema.md (fields in the documented order).
nlohmann::ordered_json ReportToJson(const Report& report);
/// ReportToJson, indented by 2, with a final newline.
std::string RenderJson(const Report& report);

struct CsvTable {
  std::string name;  ///< file name: "processes.csv", "nvtx_ranges.csv", ...
  std::string text;  ///< header row + rows, RFC 4180 (CRLF line ends, quoted where needed)
};
/// files.csv, processes.csv, threads.csv, nvtx_ranges.csv, nvtx_marks.csv, bottleneck.csv,
/// steps.csv, dataloader_workers.csv, ranks.csv, cuda_api.csv, gpu_kernels.csv, memory_ops.csv,
/// gpu_devices.csv, and with by_process nvtx_ranges_by_process.csv,
/// cuda_api_by_process.csv, gpu_kernels_by_process.csv, memory_ops_by_process.csv.
std::vector<CsvTable> RenderCsv(const Report& report);
/// One CSV field: invalid UTF-8 replaced by U+FFFD (as in the JSON report), then quoted (with ""
/// for ") if it holds a comma, quote, CR or LF.
std::string CsvField(std::string_view s);

}  // namespace trainprof::collector
