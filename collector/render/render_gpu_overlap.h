// The GPU overlap tables in each format (docs/report.md, docs/report-schema.md): the temporal
// breakdown and the kernel categories with their per-step communication (report_gpu_overlap.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/report/report.h"

namespace trainprof::collector {

/// The text sections "GPU temporal breakdown" and "GPU kernel categories" ("" when no process
/// has GPU activity).
std::string GpuOverlapText(const Report& report);

/// The members temporal_breakdown and kernel_categories (each row with its steps), always
/// present (empty arrays without GPU activity).
void AddGpuOverlapJson(const Report& report, nlohmann::ordered_json* doc);

/// One CSV file's rows, header first, fields not yet quoted.
struct CsvRows {
  const char* file;
  std::vector<std::vector<std::string>> rows;
};

/// temporal_breakdown.csv, kernel_categories.csv and kernel_category_steps.csv (host, pid, rank,
/// then the step columns); each has its header also without rows.
std::vector<CsvRows> GpuOverlapCsv(const Report& report);

}  // namespace trainprof::collector
