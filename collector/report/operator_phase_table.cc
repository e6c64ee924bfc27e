#include "collector/report/operator_phase_table.h"

#include "collector/analysis/operator_phases.h"
#include "collector/base/units.h"

namespace trainprof::collector {
namespace {

TableDef MakeOperatorPhaseTable() {
  return {"operators_by_phase",
          "operators_by_phase.csv",
          {{"phase", "Phase", Unit::kText, Align::kLeft,
            "the innermost phase range the calls started in, as the function table's --by-phase: data_wait, fetch, "
            "getitem, collate, worker_init, forward, training_step, validation_step, backward, optimizer, collective, "
            "checkpoint, dataloader_iter, init_process_group; other (outside every phase range)"},
           {"name", "Name", Unit::kText, Align::kLeft, "operator (trainprof run --trace=torch-ops)", Show::kBoth, 55},
           {"calls", "# of Calls", Unit::kCount, Align::kRight, "calls in the phase (as the operator table counts them)"},
           {"self_ns", "Self CPU", Unit::kNs, Align::kRight, "total less the time in nested operators"},
           {"total_ns", "CPU total", Unit::kNs, Align::kRight, "summed durations"}},
          {"phase", "name", "self_ns", "total_ns", "calls"}};
}

}  // namespace

const TableDef& OperatorPhaseTable() {
  static const TableDef def = MakeOperatorPhaseTable();
  return def;
}

void AddOperatorPhaseTable(const std::vector<ProcessSummary>& summaries, const StringPool& strings,
                           const ReportOptions& options, Report* r) {
  size_t omitted = 0;
  std::vector<const std::vector<OperatorPhaseStat>*> stats;
  for (const ProcessSummary& s : summaries) stats.push_back(&s.operator_phases);
  const std::vector<OperatorPhaseRow> rows = MergeOperatorPhases(stats, strings, options.top, &omitted);
  if (rows.empty()) return;
  TableRows t{&OperatorPhaseTable(), "Operators by phase (--trace=torch-ops; --top N rows per phase)", {}};
  if (omitted > 0) t.omitted = omitted;
  for (const OperatorPhaseRow& row : rows) t.rows.push_back({row.phase, row.name, row.calls, row.self_ns, row.total_ns});
  r->tables.push_back(std::move(t));
}

}  // namespace trainprof::collector
