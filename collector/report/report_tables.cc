#include "collector/report/report_tables.h"

#include "collector/report/callsite_tables.h"
#include "collector/report/function_tables.h"
#include "collector/report/operator_phase_table.h"
#include "collector/report/rank_tables.h"

#include "collector/base/units.h"
#include "collector/report/gpu_idle_launch_tables.h"
#include "collector/report/host_ops_tables.h"

namespace trainprof::collector {
namespace {

constexpr Align L = Align::kLeft;
constexpr Align R = Align::kRight;

// The duration statistics of a row (SampleStats), as every statistics table names them, with
// median_exact after the median (false where the median is DurationSummary's estimate).
void AddTimeColumns(std::vector<ColumnDef>* c) {
  c->insert(c->end(), {{"total_ns", "Total Time", Unit::kNs, R, "sum of the durations"},
                       {"percent", "Time (%)", Unit::kPercent, R, "share of the table's denominator (see the table)"},
                       {"mean_ns", "Mean", Unit::kNs, R, "mean duration (0 without durations)"},
                       {"std_ns", "StdDev", Unit::kNs, R, "sample standard deviation (n-1); 0 below two"},
                       {"min_ns", "Min", Unit::kNs, R, "shortest duration"},
                       {"median_ns", "Median", Unit::kNs, R, "median duration (mean of the two middle ones)"}});
  c->push_back({"median_exact", nullptr, Unit::kFlag, L, "false: median_ns is estimated", Show::kData});
  c->push_back({"max_ns", "Max", Unit::kNs, R, "longest duration"});
}

// The cells of AddTimeColumns; `dash`: "-" in the text report (a row without durations).
void AddTimeCells(Cells* c, const SampleStats& s, double percent, bool dash) {
  auto d = [dash](Cell v) { return dash ? std::move(v).Text("-") : std::move(v); };
  c->push_back(d(s.total));
  c->push_back(d(percent));
  c->push_back(d(s.mean));
  c->push_back(d(s.std));
  c->push_back(d(s.min));
  c->push_back(d(Cell(s.median).Estimated(!s.exact)));
  c->push_back(s.exact);
  c->push_back(d(s.max));
}

// The text columns of a statistics table: Time (%), Total Time, the count, Mean .. StdDev.
std::vector<const char*> TimeText(const char* count) {
  return {"percent", "total_ns", count, "mean_ns", "median_ns", "min_ns", "max_ns", "std_ns"};
}

std::vector<const char*> Concat(std::vector<const char*> a, const std::vector<const char*>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A statistics table: `lead` columns (the last one the count), the time columns, `trail`
// columns; the text table: the time columns with the count, then `text_trail`.
TableDef StatsTable(const char* name, const char* csv, std::vector<ColumnDef> lead,
                    std::vector<ColumnDef> trail, const std::vector<const char*>& text_trail) {
  TableDef t{name, csv, std::move(lead), {}};
  const char* count = t.columns.back().key;
  AddTimeColumns(&t.columns);
  t.columns.insert(t.columns.end(), trail.begin(), trail.end());
  t.text = Concat(TimeText(count), text_trail);
  return t;
}

TableDef MakeRangeTable() {
  return StatsTable("nvtx_ranges", "nvtx_ranges.csv",
                    {{"name", nullptr, Unit::kText, L, "display name (domain:name, <unnamed>, a group's pattern)", Show::kData},
               {"domain", nullptr, Unit::kText, L, "NVTX domain, \"\" for the default", Show::kData},
               {"style", "Style", Unit::kText, L, "push/pop or start/end"},
               {"calls", "Calls", Unit::kCount, R, "completed ranges"}},
                    {{"unbalanced", "Unbalanced", Unit::kCount, R, "ranges left open, or unmatched pops/ends"},
                    {"names", nullptr, Unit::kCount, R, "distinct names of the row (a group: > 1)", Show::kData},
                    {"range", "Range", Unit::kText, L, "the name, with \"(N names)\" for a group", Show::kText}},
                    {"unbalanced", "style", "range"});
}

TableDef MakeMarkTable() {
  return {"nvtx_marks",
          "nvtx_marks.csv",
          {{"name", "Mark", Unit::kText, L, "display name, as for ranges"},
           {"domain", nullptr, Unit::kText, L, "NVTX domain, \"\" for the default", Show::kData},
           {"count", "Count", Unit::kCount, R, "marks"}},
          {"count", "name"}};
}

TableDef MakeApiTable() {
  return StatsTable("cuda_api", "cuda_api.csv",
                    {{"name", "Name", Unit::kText, L, "function name without CUPTI's _vNNNN suffix"},
               {"api", nullptr, Unit::kText, L, "runtime or driver", Show::kData},
               {"calls", "Calls", Unit::kCount, R, "calls that returned"}},
                    {{"errors", "Errors", Unit::kCount, R, "returned calls with a non-zero status"},
                                     {"unfinished", "Unfinished", Unit::kCount, R, "calls that never returned"}},
                    {"errors", "unfinished", "name"});
}

constexpr size_t kKernelNameWidth = 100;  // display names longer than this are cut, unless --full-names

TableDef MakeKernelTable() {
  return StatsTable("gpu_kernels", "gpu_kernels.csv",
                    {{"name", "Name", Unit::kText, L, "demangled (shortened unless --full-names)", Show::kBoth,
                kKernelNameWidth},
               {"mangled", nullptr, Unit::kText, L, "the name as recorded: the key of the row", Show::kData},
               {"instances", "Instances", Unit::kCount, R, "kernel executions"}},
                    {{"grid", "Grid", Unit::kText, L, "XxYxZ when every instance used it, else varies"},
                    {"block", "Block", Unit::kText, L, "XxYxZ when every instance used it, else varies"},
                    {"grid_most_common", nullptr, Unit::kText, L, "most frequent grid", Show::kData},
                    {"block_most_common", nullptr, Unit::kText, L, "most frequent block", Show::kData},
                    {"grid_variants", nullptr, Unit::kCount, R, "distinct grids", Show::kData},
                    {"block_variants", nullptr, Unit::kCount, R, "distinct blocks", Show::kData}},
                    {"grid", "block", "name"});
}

TableDef MakeMemoryTable() {
  return StatsTable("memory_ops", "memory_ops.csv",
                    {{"kind", nullptr, Unit::kText, L, "memcpy_htod, memcpy_dtoh, ..., memset", Show::kData},
               {"label", "Operation", Unit::kText, L, "memcpy HtoD, ..., memset"},
               {"count", "Count", Unit::kCount, R, "operations"}},
                    {{"total_bytes", "Total Size", Unit::kBytes, R, "sum of the sizes"},
                    {"mean_bytes", nullptr, Unit::kBytes, R, "mean size", Show::kData},
                    {"min_bytes", "Min Size", Unit::kBytes, R, "smallest size"},
                    {"median_bytes", nullptr, Unit::kBytes, R, "median size", Show::kData},
                    {"median_bytes_exact", nullptr, Unit::kFlag, L, "false: median_bytes is estimated", Show::kData},
                    {"max_bytes", "Max Size", Unit::kBytes, R, "largest size"},
                    {"bandwidth_gbps", "Bandwidth", Unit::kNumber, R, "total bytes / total time, GB/s"},
                    {"pageable_count", "Pageable", Unit::kCount, R, "copies with pageable host memory"},
                    {"pageable_bytes", nullptr, Unit::kBytes, R, "their bytes", Show::kData}},
                    {"total_bytes", "min_bytes", "max_bytes", "bandwidth_gbps", "pageable_count",
                                      "label"});
}

TableDef MakeDeviceTable() {
  return {"devices",
          "gpu_devices.csv",
          {{"who", "PID", Unit::kText, L, "the process, or all (of a host) for a merged row", Show::kText},
           {"pid", nullptr, Unit::kCount, R, "the process; null for a row merged over processes", Show::kData},
           {"host", nullptr, Unit::kText, L, "host name", Show::kData},
           {"device", "Device", Unit::kCount, R, "device id"},
           {"name", "Name", Unit::kText, L, "device name (\"\" when not recorded)"},
           {"processes", nullptr, Unit::kCount, R, "processes with activity on it", Show::kData},
           {"kernels", "Kernels", Unit::kCount, R, "kernels"},
           {"kernel_ns", "Kernel Time", Unit::kNs, R, "summed kernel durations"},
           {"memcpys", nullptr, Unit::kCount, R, "memory copies", Show::kData},
           {"memsets", nullptr, Unit::kCount, R, "memsets", Show::kData},
           {"copies_sets", "Copies+Sets", Unit::kCount, R, "memcpys + memsets", Show::kText},
           {"memory_ns", "Memory Time", Unit::kNs, R, "summed copy and memset durations"},
           {"busy_ns", nullptr, Unit::kNs, R, "union of the activity within the lifetime", Show::kData},
           {"busy_error_ns", nullptr, Unit::kNs, R,
            "busy_ns may exceed the true busy time by up to this: a merged row of a device processes shared, whose "
            "activity their summaries kept bounded (docs/summary-format.md); 0: exact",
            Show::kData},
           {"lifetime_ns", nullptr, Unit::kNs, R, "wall time (merged: union of the lifetimes)", Show::kData},
           {"busy_percent", "Busy", Unit::kPercent, R, "busy_ns / lifetime_ns; null for a zero lifetime"},
           {"active_begin_ns", nullptr, Unit::kNs, R, "first activity start", Show::kData},
           {"active_end_ns", nullptr, Unit::kNs, R, "last activity end", Show::kData},
           {"active_busy_percent", "Busy (active)", Unit::kPercent, R, "busy / active window; null when empty"},
           {"launch_latency.count", nullptr, Unit::kCount, R, "kernels with a correlated launch call", Show::kData},
           {"launch_latency.mean_ns", "Launch Mean", Unit::kNs, R, "kernel start - launch call enter: mean"},
           {"launch_latency.median_ns", "Launch Median", Unit::kNs, R, "... median"},
           {"launch_latency.p95_ns", "Launch P95", Unit::kNs, R, "... 95th percentile"},
           {"launch_latency.exact", nullptr, Unit::kFlag, L,
            "false: median and p95 estimated (more than 1024 kernels, within 0.39%)", Show::kData}},
          {"who", "device", "name", "busy_percent", "active_busy_percent", "kernels", "kernel_ns", "copies_sets",
           "memory_ns", "launch_latency.mean_ns", "launch_latency.median_ns", "launch_latency.p95_ns"}};
}

// The declaration made by `make`, made once.
template <TableDef (*make)()>
const TableDef& Declared() {
  static const TableDef t = make();
  return t;
}

Cell Pct(const std::optional<double>& p) { return p ? Cell(*p).Text(FormatPercent(*p) + "%") : Cell(nullptr); }

}  // namespace

const TableDef& RangeTable() { return Declared<MakeRangeTable>(); }
Cells RangeCells(const RangeRow& r) {
  Cells c = {r.name, r.domain, r.style, r.time.count};
  AddTimeCells(&c, r.time, r.percent, r.time.count == 0);
  c.insert(c.end(), {r.unbalanced, r.names,
                     r.grouped ? r.name + " (" + Plural(r.names, "name", "names") + ")" : r.name});
  return c;
}

const TableDef& MarkTable() { return Declared<MakeMarkTable>(); }
Cells MarkCells(const MarkRow& m) { return {m.name, m.domain, m.count}; }

const TableDef& CudaApiTableDef() { return Declared<MakeApiTable>(); }
Cells CudaApiCells(const CudaApiRow& r) {
  Cells c = {r.name, r.api, r.time.count};
  AddTimeCells(&c, r.time, r.percent, r.time.count == 0);
  c.insert(c.end(), {r.errors, r.unfinished});
  return c;
}

const TableDef& KernelTableDef() { return Declared<MakeKernelTable>(); }
Cells KernelCells(const KernelRow& r) {
  Cells c = {r.name, r.mangled, r.time.count};
  AddTimeCells(&c, r.time, r.percent, false);
  c.insert(c.end(), {r.grid, r.block, r.grid_most_common, r.block_most_common, r.grid_variants, r.block_variants});
  return c;
}

const TableDef& MemoryTableDef() { return Declared<MakeMemoryTable>(); }
Cells MemoryCells(const MemoryOpRow& r) {
  Cells c = {r.kind, r.label, r.time.count};
  AddTimeCells(&c, r.time, r.percent, false);
  const std::string pageable =
      r.pageable_count == 0 ? "0"
                            : std::to_string(r.pageable_count) + " (" +
                                  FormatBytes(static_cast<double>(r.pageable_bytes)) + ")";
  c.insert(c.end(), {r.size.total, r.size.mean, r.size.min, r.size.median, r.size.exact, r.size.max,
                     r.bandwidth_gbps ? Cell(*r.bandwidth_gbps).Text(FormatBytes(*r.bandwidth_gbps * 1e9) + "/s")
                                      : Cell(nullptr),
                     Cell(r.pageable_count).Text(pageable), r.pageable_bytes});
  return c;
}

const TableDef& DeviceTable() { return Declared<MakeDeviceTable>(); }
Cells DeviceCells(const DeviceRow& d, const std::string& who) {
  const bool lat = d.latency_count > 0;
  return {who,
          d.pid,
          d.host,
          d.device,
          Cell(d.name).Text(d.name.empty() ? "-" : d.name),
          d.processes,
          d.kernels,
          d.kernel_ns,
          d.memcpys,
          d.memsets,
          d.memcpys + d.memsets,
          d.memory_ns,
          d.busy_ns,
          d.busy_error_ns,
          d.lifetime_ns,
          Pct(d.busy_percent).Estimated(d.busy_error_ns > 0),
          d.active_begin_ns,
          d.active_end_ns,
          Pct(d.active_busy_percent).Estimated(d.busy_error_ns > 0),
          d.latency_count,
          lat ? Cell(d.latency_mean_ns) : Cell(nullptr),
          lat ? Cell(d.latency_median_ns).Estimated(!d.latency_exact) : Cell(nullptr),
          lat ? Cell(d.latency_p95_ns).Estimated(!d.latency_exact) : Cell(nullptr),
          d.latency_exact};
}

std::vector<const TableDef*> DeclaredTables() {
  return {&RangeTable(), &MarkTable(), &CudaApiTableDef(), &KernelTableDef(), &MemoryTableDef(), &DeviceTable(),
          &TemporalBreakdownTable(), &KernelCategoryTable(), &GpuIdleKindsTable(), &KernelLaunchTable(),
          &OperatorTableDef(), &PythonFunctionTableDef(), &CallSiteTable(), &FunctionTable(), &FunctionByProcessTable(),
          &FunctionByPhaseTable(), &OperatorPhaseTable(), &RankSpreadTable(), &HostClockTable()};
}

}  // namespace trainprof::collector
