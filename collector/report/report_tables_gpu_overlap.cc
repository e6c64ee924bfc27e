// The declarations of the GPU overlap tables (report_tables.h): temporal_breakdown and
// kernel_categories (with the per-step communication of kernel_categories[].steps).
#include "collector/report/report_tables.h"

#include <string_view>

namespace trainprof::collector {
namespace {

constexpr Align L = Align::kLeft;
constexpr Align R = Align::kRight;

// A table of one row per process: host, pid and rank, then `columns`.
TableDef ProcessTable(const char* name, const char* csv, const std::vector<ColumnDef>& columns,
                      std::vector<const char*> text) {
  TableDef t{name,
             csv,
             {{"host", nullptr, Unit::kText, L, "host name", Show::kData},
              {"pid", "PID", Unit::kCount, R, "the process"},
              {"rank", "Rank", Unit::kCount, R, "its rank (RANK, or Kineto's distributedInfo); null without"}},
             std::move(text)};
  t.columns.insert(t.columns.end(), columns.begin(), columns.end());
  return t;
}

TableDef MakeTemporalBreakdownTable() {
  return ProcessTable(
      "temporal_breakdown", "temporal_breakdown.csv",
      {{"active_span_ns", "Active Span", Unit::kNs, R, "first start to last end of the process's GPU activity"},
       {"idle_ns", "Idle", Unit::kNs, R, "span minus the union of all GPU activity (every stream)"},
       {"compute_ns", "Compute", Unit::kNs, R, "union of the computation kernels"},
       {"non_compute_ns", "Non-compute", Unit::kNs, R, "span - compute - idle: communication, memory, other"},
       {"idle_percent", "Idle (%)", Unit::kPercent, R, "idle_ns / active_span_ns"},
       {"compute_percent", "Compute (%)", Unit::kPercent, R, "compute_ns / active_span_ns"},
       {"non_compute_percent", "Non-compute (%)", Unit::kPercent, R, "non_compute_ns / active_span_ns"}},
      {"pid", "rank", "active_span_ns", "idle_percent", "compute_percent", "non_compute_percent", "idle_ns",
       "compute_ns", "non_compute_ns"});
}

TableDef MakeKernelCategoryTable() {
  // Key, header, meaning of the ns columns: the seven exclusive parts, then the communication.
  static constexpr const char* kTimes[][3] = {
      {"computation_ns", "Comp", "only computation kernels run"},
      {"communication_ns", "Comm", "only communication (NCCL) kernels run"},
      {"memory_ns", "Memory", "only memcpys and memsets run"},
      {"computation_overlapping_communication_ns", "Comp+Comm", "computation and communication run, no memory"},
      {"communication_overlapping_memory_ns", "Comm+Mem", "communication and memory, no computation"},
      {"computation_overlapping_memory_ns", "Comp+Mem", "computation and memory, no communication"},
      {"computation_overlapping_communication_overlapping_memory_ns", "All Three", "all three run"},
      {"communication_total_ns", "Comm Total", "union of the communication kernels"},
      {"communication_hidden_ns", "Hidden", "communication overlapping computation"}};
  std::vector<ColumnDef> columns;
  std::vector<const char*> text = {"pid", "rank"};
  for (const auto& [key, header, meaning] : kTimes) {
    columns.push_back({key, header, Unit::kNs, R, meaning});
    if (std::string_view(key) != "communication_hidden_ns") text.push_back(key);
  }
  columns.push_back({"communication_hidden_percent", "Hidden (%)", Unit::kPercent, R,
                     "hidden / total communication; null without communication"});
  text.push_back("communication_hidden_percent");
  return ProcessTable("kernel_categories", "kernel_categories.csv", columns, std::move(text));
}

TableDef MakeStepCommunicationTable() {
  return {"kernel_categories[].steps",
          "kernel_category_steps.csv",
          {{"step", "Step", Unit::kCount, R, "position among the process's steps (steps.csv's step)"},
           {"communication_ns", "Comm", Unit::kNs, R, "union of the NCCL kernels launched in the step"},
           {"hidden_ns", "Hidden", Unit::kNs, R, "of it, overlapping computation"},
           {"hidden_percent", "Hidden (%)", Unit::kPercent, R, "hidden / communication; null without"}},
          {"step", "communication_ns", "hidden_ns", "hidden_percent"}};
}

template <TableDef (*make)()>
const TableDef& Declared() {
  static const TableDef t = make();
  return t;
}

Cells ProcessCells(const std::string& host, int32_t pid, const std::optional<int64_t>& rank) {
  return {host, pid, Cell(rank)};
}

}  // namespace

const TableDef& TemporalBreakdownTable() { return Declared<MakeTemporalBreakdownTable>(); }
Cells TemporalBreakdownCells(const TemporalBreakdownRow& r) {
  Cells c = ProcessCells(r.host, r.pid, r.rank);
  const TemporalBreakdown& t = r.breakdown;
  c.insert(c.end(), {t.active_span_ns, t.idle_ns, t.compute_ns, t.non_compute_ns, Cell(t.idle_percent),
                     Cell(t.compute_percent), Cell(t.non_compute_percent)});
  return c;
}

const TableDef& KernelCategoryTable() { return Declared<MakeKernelCategoryTable>(); }
Cells KernelCategoryCells(const KernelCategoryRow& r) {
  Cells c = ProcessCells(r.host, r.pid, r.rank);
  const KernelCategoryBreakdown& b = r.breakdown;
  c.insert(c.end(), {b.computation_ns, b.communication_ns, b.memory_ns, b.computation_overlapping_communication_ns,
                     b.communication_overlapping_memory_ns, b.computation_overlapping_memory_ns,
                     b.computation_overlapping_communication_overlapping_memory_ns, b.communication_total_ns,
                     b.communication_hidden_ns, Cell(b.communication_hidden_percent)});
  return c;
}

const TableDef& StepCommunicationTable() { return Declared<MakeStepCommunicationTable>(); }
Cells StepCommunicationCells(const StepCommunication& s) {
  return {s.step, s.communication_ns, s.hidden_ns, Cell(s.hidden_percent)};
}

}  // namespace trainprof::collector
