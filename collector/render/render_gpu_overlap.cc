#include "collector/render/render_gpu_overlap.h"

#include <algorithm>

#include "collector/base/sample_stats.h"
#include "collector/base/units.h"
#include "collector/render/table_render.h"
#include "collector/report/rank_tables.h"
#include "collector/report/report_tables.h"

namespace trainprof::collector {
namespace {

// A table of one row per process: the rows of the ranks the text shows (rank_tables.h), then a line
// for the others.
template <typename Row, typename CellsOf>
std::string RowsOfShownRanks(const Report& r, const TableDef& def, const std::vector<Row>& rows, CellsOf cells) {
  std::vector<const Row*> kept;
  for (const Row& x : rows) {
    if (ShowsRank(r, x.rank)) kept.push_back(&x);
  }
  std::string out = TextTable(def, RowsOf(kept, [&cells](const Row* x) { return cells(*x); }), "  ");
  if (const size_t other = rows.size() - kept.size(); other > 0) {
    out += "  ... " + std::to_string(other) + (other == 1 ? " more row" : " more rows") +
           " of other ranks (--by-rank lists them; JSON and CSV have them all)\n";
  }
  return out;
}

std::string Who(const KernelCategoryRow& k) {
  return "pid " + std::to_string(k.pid) + (k.rank ? " (rank " + std::to_string(*k.rank) + ")" : "");
}

// "pid 12 (rank 0): median 45.0%, lowest 12.0% (step 3) over 8 steps with communication": the
// steps of each process that has some.
std::string StepLines(const Report& r) {
  std::string out;
  for (const KernelCategoryRow& k : r.kernel_categories) {
    if (!ShowsRank(r, k.rank)) continue;
    std::vector<double> shares;
    const StepCommunication* lowest = nullptr;
    for (const StepCommunication& s : k.steps) {
      if (!s.hidden_percent) continue;
      shares.push_back(*s.hidden_percent);
      if (lowest == nullptr || *s.hidden_percent < *lowest->hidden_percent) lowest = &s;
    }
    if (lowest == nullptr) continue;
    std::sort(shares.begin(), shares.end());
    const size_t n = shares.size();
    const double median = n % 2 == 1 ? shares[n / 2] : (shares[n / 2 - 1] + shares[n / 2]) / 2;
    out += "  " + Who(k) + ": median " + FormatPercent(median) + "%, lowest " + FormatPercent(*lowest->hidden_percent) +
           "% (step " + std::to_string(lowest->step) + "), over " + std::to_string(n) +
           (n == 1 ? " step" : " steps") + " with communication\n";
  }
  if (out.empty()) return out;
  return "  Communication hidden behind computation per step (NCCL kernels launched in the step):\n" + out;
}

}  // namespace

std::string GpuOverlapText(const Report& r) {
  if (r.temporal_breakdown.empty()) return "";
  std::string out = "\nGPU temporal breakdown\n";
  out += RowsOfShownRanks(r, TemporalBreakdownTable(), r.temporal_breakdown, TemporalBreakdownCells);
  out +=
      "  Active span = first to last GPU activity of the process (kernels, copies, memsets, every stream); Idle =\n"
      "  nothing runs; Compute = computation kernels run; Non-compute = only communication, memory or other\n"
      "  kernels run. As Holistic Trace Analysis's get_temporal_breakdown, over every kernel: HTA by default\n"
      "  leaves out the last ProfilerStep and rounds ns traces to whole µs, so its figures can differ\n"
      "  (docs/analysis.md, \"Where trainprof differs from HTA on purpose\").\n";
  out += "\nGPU kernel categories\n";
  out += RowsOfShownRanks(r, KernelCategoryTable(), r.kernel_categories, KernelCategoryCells);
  out +=
      "  Time in which exactly these categories run: computation kernels, communication (NCCL) kernels, memory\n"
      "  (copies, memsets); Hidden = communication overlapping computation / all communication (HTA's kernel-type\n"
      "  breakdown and get_comm_comp_overlap).\n";
  out += StepLines(r);
  return out;
}

void AddGpuOverlapJson(const Report& r, nlohmann::ordered_json* doc) {
  (*doc)["temporal_breakdown"] = TableJson(TemporalBreakdownTable(), RowsOf(r.temporal_breakdown, TemporalBreakdownCells));
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const KernelCategoryRow& k : r.kernel_categories) {
    nlohmann::ordered_json row = RowJson(KernelCategoryTable(), KernelCategoryCells(k));
    row["steps"] = TableJson(StepCommunicationTable(), RowsOf(k.steps, StepCommunicationCells));
    rows.push_back(std::move(row));
  }
  (*doc)["kernel_categories"] = std::move(rows);
}

std::vector<CsvRows> GpuOverlapCsv(const Report& r) {
  const TableDef& t = TemporalBreakdownTable();
  CsvRows temporal{t.csv, {CsvHeader(t)}};
  for (const TemporalBreakdownRow& x : r.temporal_breakdown) temporal.rows.push_back(CsvFields(t, TemporalBreakdownCells(x)));
  const TableDef& k = KernelCategoryTable();
  CsvRows categories{k.csv, {CsvHeader(k)}};
  for (const KernelCategoryRow& x : r.kernel_categories) categories.rows.push_back(CsvFields(k, KernelCategoryCells(x)));
  const TableDef& s = StepCommunicationTable();
  CsvRows steps{s.csv, {{"host", "pid", "rank"}}};
  for (const std::string& h : CsvHeader(s)) steps.rows[0].push_back(h);
  for (const KernelCategoryRow& x : r.kernel_categories) {
    for (const StepCommunication& step : x.steps) {
      std::vector<std::string> fields = {x.host, std::to_string(x.pid), x.rank ? std::to_string(*x.rank) : ""};
      for (const std::string& f : CsvFields(s, StepCommunicationCells(step))) fields.push_back(f);
      steps.rows.push_back(std::move(fields));
    }
  }
  return {std::move(temporal), std::move(categories), std::move(steps)};
}

}  // namespace trainprof::collector
