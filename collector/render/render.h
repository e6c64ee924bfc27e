// Renderers of a Report: text for people, JSON for programs (docs/report-schema.md), CSV for
// spreadsheets. Each is a pure function of the Report; writing files is the caller's job.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/base/output_sink.h"
#include "collector/report/report.h"

namespace trainprof::collector {

// Each renderer streams into an OutputSink (a range table row at a time: memory does not grow
// with the rows) or returns the whole text.

/// Aligned tables with human units (docs/report.md shows the layout).
void RenderText(const Report& report, OutputSink* out);
std::string RenderText(const Report& report);

/// The JSON document of docs/report-schema.md (fields in the documented order), indented by 2,
/// with a final newline.
void RenderJson(const Report& report, OutputSink* out);
std::string RenderJson(const Report& report);

struct CsvTable {
  std::string name;  ///< file name: "processes.csv", "nvtx_ranges.csv", ...
  std::string text;  ///< header row + rows, RFC 4180 (CRLF line ends, quoted where needed)
};
/// files.csv, processes.csv, threads.csv, nvtx_ranges.csv, nvtx_marks.csv, bottleneck.csv,
/// steps.csv, dataloader_workers.csv, ranks.csv, cuda_api.csv, gpu_kernels.csv, memory_ops.csv,
/// gpu_devices.csv, temporal_breakdown.csv, kernel_categories.csv, kernel_category_steps.csv, and
/// with by_process nvtx_ranges_by_process.csv,
/// cuda_api_by_process.csv, gpu_kernels_by_process.csv, memory_ops_by_process.csv.
std::vector<CsvTable> RenderCsv(const Report& report);
/// The same tables streamed: open(name) gives the sink of each table in turn (valid until the
/// next call); false from it stops the rendering.
void RenderCsv(const Report& report, const std::function<OutputSink*(const std::string& name)>& open);
/// One CSV text field (names, commands, paths: anything a program recorded): invalid UTF-8
/// replaced by U+FFFD (as in the JSON report); control characters escaped as in the text report
/// (\t, \n, \r, \xHH, \u00HH: collector/base/text_safety.h); a leading =, +, -, @ (which a
/// spreadsheet would run as a formula, OWASP "CSV injection") neutralised by a leading '; then
/// quoted (with "" for ") if it holds a comma or quote. Numbers are written as they are.
std::string CsvField(std::string_view s);

}  // namespace trainprof::collector
