// The operator and Python function tables in the text and JSON reports (docs/report.md,
// docs/report-schema.md); nothing at all for a report without them (no Kineto cpu_op or
// python_function events).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "collector/report/report.h"

namespace trainprof::collector {

/// The text sections over all processes ("" when no process has host ops).
std::string HostOpSectionsText(const Report& report);

/// One process's tables (--by-process), indented as its other tables; "" when it has none.
std::string ProcessHostOpsText(const ProcessRow& process, const ReportOptions& options);

/// `operators`, `operators_omitted`, `python_functions`, `python_functions_omitted` of `tables`
/// into `object` when `present` (the report has host ops at all; else nothing).
void AddHostOpsJson(const HostOpTables& tables, bool present, nlohmann::ordered_json* object);

}  // namespace trainprof::collector
