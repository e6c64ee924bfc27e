#include "collector/report/host_ops_tables.h"

#include "collector/base/units.h"

namespace trainprof::collector {
namespace {

// torch's table() cuts names at max_name_column_width=55 (profiler_util.py); JSON and CSV keep them whole.
constexpr size_t kNameWidth = 55;

TableDef MakeHostOpTable(const char* name, const char* csv, const char* what) {
  return {name,
          csv,
          {{"name", "Name", Unit::kText, Align::kLeft, what, Show::kBoth, kNameWidth},
           {"calls", "# of Calls", Unit::kCount, Align::kRight, "calls (a call whose only child is a call of the same name is one)"},
           {"self_ns", "Self CPU", Unit::kNs, Align::kRight, "total less the time in nested operators and Python functions"},
           {"total_ns", "CPU total", Unit::kNs, Align::kRight, "summed durations (nested calls of the name count again)"},
           {"self_percent", "Self CPU %", Unit::kPercent, Align::kRight, "self_ns / the summed wall time of the processes with the table's events"},
           {"total_percent", "CPU total %", Unit::kPercent, Align::kRight, "total_ns / the same"},
           {"processes", nullptr, Unit::kCount, Align::kRight, "processes with calls of the name", Show::kData}},
          {"name", "self_percent", "self_ns", "total_percent", "total_ns", "calls"}};
}

TableDef MakeOperatorTable() {
  return MakeHostOpTable("operators", "operators.csv", "operator (aten::mm, ...: Kineto cpu_op, or trainprof run --trace=torch-ops)");
}
TableDef MakePythonFunctionTable() {
  return MakeHostOpTable("python_functions", "python_functions.csv",
                         "Python function (Kineto python_function: \"file.py(12): fn\", \"<built-in ...>\")");
}

}  // namespace

const TableDef& OperatorTableDef() {
  static const TableDef t = MakeOperatorTable();
  return t;
}

const TableDef& PythonFunctionTableDef() {
  static const TableDef t = MakePythonFunctionTable();
  return t;
}

Cells HostOpCells(const HostOpRow& r) {
  return {r.name, r.calls, r.self_ns, r.total_ns, r.self_percent, r.total_percent, r.processes};
}

}  // namespace trainprof::collector
