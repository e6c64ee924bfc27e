#include "collector/render/render_host_ops.h"

#include "collector/base/units.h"
#include "collector/render/table_render.h"
#include "collector/report/host_ops_tables.h"

namespace trainprof::collector {
namespace {

// A table, then a line for the rows --top left out.
std::string Table(const TableDef& def, const std::vector<HostOpRow>& rows, size_t omitted, size_t top,
                  const std::string& indent) {
  std::string out = TextTable(def, RowsOf(rows, HostOpCells), indent);
  if (omitted > 0) {
    out += indent + "... " + std::to_string(omitted) + " more " + (omitted == 1 ? "name" : "names") + " (--top " +
           std::to_string(top) + ")\n";
  }
  return out;
}

// What the percentages are of: "the summed wall time of the 2 processes with operators (1.20 s)".
std::string Denominator(size_t processes, uint64_t wall_ns, const char* what) {
  if (processes == 1) return std::string("the wall time of the process (") + FormatDuration(wall_ns) + ")";
  return "the summed wall time of the " + std::to_string(processes) + " processes with " + what + " (" +
         FormatDuration(static_cast<double>(wall_ns)) + ")";
}

std::string Section(const char* title, const TableDef& def, const std::vector<HostOpRow>& rows, size_t omitted,
                    size_t processes, uint64_t wall_ns, const char* what, size_t top) {
  if (processes == 0) return "";
  return std::string("\n") + title + " (all processes)\n" + Table(def, rows, omitted, top, "  ") +
         "  Self CPU = CPU total less the time in nested operators and Python functions on the same thread\n"
         "  (torch.profiler's key_averages()); % = of " +
         Denominator(processes, wall_ns, what) + ".\n";
}

}  // namespace

std::string HostOpSectionsText(const Report& r) {
  const HostOpTables& t = r.host_ops;
  if (!t.any()) return "";
  return Section("Operators", OperatorTableDef(), t.operators, t.operators_omitted, t.operators_processes,
                 t.operators_wall_ns, "operators", r.options.top) +
         Section("Python functions", PythonFunctionTableDef(), t.python_functions, t.python_functions_omitted,
                 t.python_functions_processes, t.python_functions_wall_ns, "Python functions", r.options.top);
}

std::string ProcessHostOpsText(const ProcessRow& p, const ReportOptions& o) {
  const HostOpTables& t = p.host_ops;
  std::string out;
  if (t.operators_processes > 0) {
    out += "\n  Operators\n" + Table(OperatorTableDef(), t.operators, t.operators_omitted, o.top, "  ");
  }
  if (t.python_functions_processes > 0) {
    out += "\n  Python functions\n" +
           Table(PythonFunctionTableDef(), t.python_functions, t.python_functions_omitted, o.top, "  ");
  }
  return out;
}

void AddHostOpsJson(const HostOpTables& t, bool present, nlohmann::ordered_json* o) {
  if (!present) return;
  (*o)["operators"] = TableJson(OperatorTableDef(), RowsOf(t.operators, HostOpCells));
  (*o)["operators_omitted"] = t.operators_omitted;
  (*o)["python_functions"] = TableJson(PythonFunctionTableDef(), RowsOf(t.python_functions, HostOpCells));
  (*o)["python_functions_omitted"] = t.python_functions_omitted;
}

}  // namespace trainprof::collector
