// The declarations of the operator and Python function tables (collector/stats/host_ops.h): one
// row shape, two tables (JSON `operators` / `python_functions`, CSV operators.csv /
// python_functions.csv). The text columns are torch.profiler's key_averages().table() ones users
// know: Name, Self CPU %, Self CPU, CPU total %, CPU total, # of Calls.
#pragma once

#include "collector/base/table.h"
#include "collector/stats/host_ops.h"

namespace trainprof::collector {

const TableDef& OperatorTableDef();        ///< operators (cpu_op)
const TableDef& PythonFunctionTableDef();  ///< python_functions (python_function)
Cells HostOpCells(const HostOpRow& r);

}  // namespace trainprof::collector
