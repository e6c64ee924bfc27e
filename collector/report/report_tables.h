// The declarations of the report's tables (collector/base/table.h): each table's columns once,
// and the typed cells of one row. The text, JSON and CSV renderers walk these; docs/report-schema.md
// is checked against them (tests/unit/collector/report_tables_test.cc).
//
// Adding a table: compute its rows in an analysis module, declare it here (a TableDef and a
// cells function), and put a TableRows into Report::tables in Analyze (report.cc): every renderer
// then shows it (text: a section; JSON: a member before "bottleneck"... see collector/README.md).
#pragma once

#include <string>
#include <vector>

#include "collector/base/table.h"
#include "collector/report/report.h"

namespace trainprof::collector {

const TableDef& RangeTable();  ///< nvtx_ranges (and each process's)
Cells RangeCells(const RangeRow& r);

const TableDef& MarkTable();  ///< nvtx_marks
Cells MarkCells(const MarkRow& m);

const TableDef& CudaApiTableDef();  ///< cuda_api
Cells CudaApiCells(const CudaApiRow& r);

const TableDef& KernelTableDef();  ///< gpu_kernels
Cells KernelCells(const KernelRow& r);

const TableDef& MemoryTableDef();  ///< memory_ops
Cells MemoryCells(const MemoryOpRow& r);

const TableDef& DeviceTable();  ///< devices (gpu_devices.csv)
/// `who`: the text report's PID cell ("1234", "all", "all@host").
Cells DeviceCells(const DeviceRow& d, const std::string& who = "");

const TableDef& TemporalBreakdownTable();  ///< temporal_breakdown (report_tables_gpu_overlap.cc)
Cells TemporalBreakdownCells(const TemporalBreakdownRow& r);

const TableDef& KernelCategoryTable();  ///< kernel_categories, without its steps
Cells KernelCategoryCells(const KernelCategoryRow& r);

/// kernel_categories[].steps (JSON), kernel_category_steps.csv (prefixed by host, pid, rank).
const TableDef& StepCommunicationTable();
Cells StepCommunicationCells(const StepCommunication& s);

/// Every declared table (the schema doc test walks them).
std::vector<const TableDef*> DeclaredTables();

}  // namespace trainprof::collector
