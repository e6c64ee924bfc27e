#include "collector/report/function_tables.h"

#include <string>


namespace trainprof::collector {
namespace {

constexpr Align L = Align::kLeft;
constexpr Align R = Align::kRight;

std::vector<ColumnDef> FunctionColumns() {
  return {
      {"function", "Function", Unit::kText, L,
       "Python: the code's qualified name; native: the demangled symbol (module+0xOFFSET without symbols); "
       "<no stack>, <unknown stack>, <no frames> for samples without frames",
       Show::kBoth, 60},
      {"file", nullptr, Unit::kText, L, "its file (Python) or source file (native, with debug information); null without",
       Show::kData},
      {"line", nullptr, Unit::kCount, R, "the line most of its samples were at; null without", Show::kData},
      {"module", nullptr, Unit::kText, L, "the module (basename) of a native function; null for Python", Show::kData},
      {"location", "File:Line", Unit::kText, L, "the file (after site-packages/ or lib/pythonX.Y/, else its basename):line, or the module", Show::kText, 40},
      {"self_samples", "Self", Unit::kCount, R, "samples with the function as the innermost frame"},
      {"total_samples", "Total", Unit::kCount, R, "samples with the function anywhere on the stack (once per sample)"},
      {"self_share", "Self (%)", Unit::kPercent, R, "self_samples / the samples of the scope, percent"},
      {"total_share", "Total (%)", Unit::kPercent, R, "total_samples / the samples of the scope, percent"},
  };
}

const std::vector<const char*> kText = {"self_share", "total_share", "self_samples", "total_samples", "function",
                                        "location"};

TableDef MakeFunctionTable() { return {"functions", "functions.csv", FunctionColumns(), kText}; }

TableDef MakeByProcessTable() {
  TableDef t{"functions_by_process",
             "functions_by_process.csv",
             {{"host", nullptr, Unit::kText, L, "host name", Show::kData},
              {"pid", "PID", Unit::kCount, R, "the process"},
              {"rank", nullptr, Unit::kCount, R, "its rank (RANK); null without", Show::kData}},
             {"pid"}};
  for (const ColumnDef& c : FunctionColumns()) t.columns.push_back(c);
  t.text.insert(t.text.end(), kText.begin(), kText.end());
  return t;
}

TableDef MakeByPhaseTable() {
  TableDef t{"functions_by_phase",
             "functions_by_phase.csv",
             {{"phase", "Phase", Unit::kText, L,
               "the innermost phase range of the sample's thread at its time (forward, backward, data_wait, "
               "optimizer, getitem, ...), or other"}},
             {"phase"}};
  for (const ColumnDef& c : FunctionColumns()) t.columns.push_back(c);
  t.text.insert(t.text.end(), kText.begin(), kText.end());
  return t;
}

template <TableDef (*make)()>
const TableDef& Declared() {
  static const TableDef t = make();
  return t;
}

/// Rows of `rows` cut to `top` per group (rows of one group are consecutive); the cut rows counted.
template <typename SameGroup>
std::vector<const FunctionRow*> CutPerGroup(const std::vector<FunctionRow>& rows, size_t top, SameGroup same,
                                            size_t* omitted) {
  std::vector<const FunctionRow*> out;
  size_t in_group = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    in_group = i > 0 && same(rows[i - 1], rows[i]) ? in_group + 1 : 0;
    if (top > 0 && in_group >= top) {
      ++*omitted;
      continue;
    }
    out.push_back(&rows[i]);
  }
  return out;
}

// "; not in it: 29 threads never sampled, 150 ms of CPU time while threads blocked the sampling
// signal (see the warnings)", or "" (analysis/sampling_note.h).
std::string NotSampledNote(const std::vector<ProcessSummary>& summaries) {
  uint64_t threads = 0, blocked_ms = 0;
  for (const ProcessSummary& s : summaries) {
    for (const LossNote& n : s.losses) {
      if (n.kind == Loss::threads_not_sampled) threads += n.n;
      if (n.kind == Loss::samples_blocked_cpu_ms) blocked_ms += n.n;
    }
  }
  std::string parts;
  if (threads > 0) parts = std::to_string(threads) + (threads == 1 ? " thread" : " threads") + " never sampled";
  if (blocked_ms > 0) {
    parts += (parts.empty() ? "" : ", ") + std::to_string(blocked_ms) +
             " ms of CPU time while threads blocked the sampling signal";
  }
  return parts.empty() ? "" : "; not in it: " + parts + " (see the warnings)";
}

}  // namespace

const TableDef& FunctionTable() { return Declared<MakeFunctionTable>(); }
const TableDef& FunctionByProcessTable() { return Declared<MakeByProcessTable>(); }
const TableDef& FunctionByPhaseTable() { return Declared<MakeByPhaseTable>(); }

Cells FunctionCells(const FunctionRow& r) {
  return {r.function, Cell(r.file), Cell(r.line), Cell(r.module), r.Location(),
          r.self_samples, r.total_samples, r.self_share, r.total_share};
}

void AddFunctionTables(const std::vector<ProcessSummary>& summaries, const ReportOptions& options, Report* r) {
  bool any = false;
  std::vector<const FunctionCounts*> counts;
  for (const ProcessSummary& s : summaries) {
    any = any || s.functions.samples > 0;
    counts.push_back(&s.functions);
  }
  if (!any) {  // --by-phase asked for a table the trace cannot have: say why in its place
    if (options.by_phase) {
      r->tables.push_back({&FunctionByPhaseTable(),
                           "Functions by phase (CPU samples): the trace has no samples (trainprof run --sample=HZ)",
                           {}});
    }
    return;
  }
  const FunctionTables ft = MergeFunctionCounts(counts);

  auto table = [&](const TableDef& def, std::string title, const std::vector<FunctionRow>& rows, auto same,
                   auto prefix) {
    TableRows t{&def, std::move(title), {}};
    size_t omitted = 0;
    for (const FunctionRow* row : CutPerGroup(rows, options.top, same, &omitted)) {
      Cells c = prefix(*row);
      Cells f = FunctionCells(*row);
      c.insert(c.end(), std::make_move_iterator(f.begin()), std::make_move_iterator(f.end()));
      t.rows.push_back(std::move(c));
    }
    if (options.top > 0) t.omitted = omitted;
    return t;
  };
  auto all = [](const FunctionRow&, const FunctionRow&) { return true; };
  const std::string samples = std::to_string(ft.samples) + (ft.samples == 1 ? " sample" : " samples");

  TableRows merged = table(FunctionTable(),
                           "Functions (CPU samples, --sample): " + samples +
                               ", all processes, by self samples (Python frames where the stack has them)" +
                               NotSampledNote(summaries),
                           ft.merged, all, [](const FunctionRow&) { return Cells{}; });
  if (options.top == 0) merged.text_rows = kFunctionTextRows;
  r->tables.push_back(std::move(merged));

  TableRows by_process = table(
      FunctionByProcessTable(), "Functions by process (CPU samples): by self samples, each process's share",
      ft.by_process, [](const FunctionRow& a, const FunctionRow& b) { return a.process == b.process; },
      [&](const FunctionRow& row) {
        const ProcessInfo& p = summaries[static_cast<size_t>(row.process)].info;
        return Cells{p.host, p.pid, Cell(p.rank)};
      });
  by_process.text = options.by_process;
  r->tables.push_back(std::move(by_process));

  TableRows by_phase = table(
      FunctionByPhaseTable(), "Functions by phase (CPU samples): by self samples, each phase's share", ft.by_phase,
      [](const FunctionRow& a, const FunctionRow& b) { return a.phase == b.phase; },
      [](const FunctionRow& row) { return Cells{row.phase}; });
  by_phase.text = options.by_phase;
  r->tables.push_back(std::move(by_phase));
}

}  // namespace trainprof::collector
