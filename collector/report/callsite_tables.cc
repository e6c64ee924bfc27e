#include "collector/report/callsite_tables.h"

#include "collector/base/units.h"
#include "collector/symbols/symbolizer.h"
#include "trainprof/phases.h"

namespace trainprof::collector {
namespace {

constexpr Align L = Align::kLeft;
constexpr Align R = Align::kRight;

TableDef MakeCallSiteTable() {
  return {"callsites",
          "callsites.csv",
          {{"kind", "Kind", Unit::kText, L, "what the stack was taken at: range (NVTX push/start), mark, cuda (an API call)"},
           {"name", "Name", Unit::kText, L, "the range or mark name (domain:name outside the default domain), or the CUDA API", Show::kBoth, 60},
           {"calls", "Calls", Unit::kCount, R, "events of that name with this call site"},
           {"total_ns", "Total", Unit::kNs, R, "their summed durations (0 for marks)"},
           {"call_site", "Call Site", Unit::kText, L,
            "the first user frame: \"function at file:line\" (file basename); where its callers differ, one row per caller: "
            "\"..., from caller at file:line\"",
            Show::kBoth, 120},
           {"function", nullptr, Unit::kText, L, "the call site's function (demangled; module+0xOFFSET without symbols)", Show::kData},
           {"file", nullptr, Unit::kText, L, "its source file; null without debug information", Show::kData},
           {"line", nullptr, Unit::kCount, R, "its line; null without debug information", Show::kData},
           {"module", nullptr, Unit::kText, L, "the module (basename) of a native call site; null for Python", Show::kData},
           {"caller", nullptr, Unit::kText, L,
            "the first user frame outward of the call site where the callers' stacks differ, \"function at file:line\": "
            "the row holds that caller's events; null: the row holds every caller's",
            Show::kData},
           {"frames", nullptr, Unit::kText, L,
            "the stack from the call site outward, innermost first; JSON: [{function, file, line, module}], CSV: \"f (file:line) < g ...\"",
            Show::kData}},
          {"total_ns", "calls", "kind", "name", "call_site"}};
}

const TableDef& Declared() {
  static const TableDef def = MakeCallSiteTable();
  return def;
}

}  // namespace

const TableDef& CallSiteTable() { return Declared(); }

std::string FramesText(const std::vector<SymbolFrame>& frames) {
  std::string out;
  for (const SymbolFrame& f : frames) {
    if (!out.empty()) out += " < ";
    out += f.Label();
  }
  return out;
}

Cells CallSiteCells(const CallSiteRow& r) {
  Cells c{StackedKindName(r.kind), r.name, r.calls, r.total_ns, r.Site()};
  if (r.frames.empty()) {
    c.insert(c.end(), {nullptr, nullptr, nullptr, nullptr, nullptr, FramesText(r.frames)});
    return c;
  }
  const SymbolFrame& f = r.frames.front();
  Cell caller = nullptr;
  if (r.caller) caller = FrameSiteText(*r.caller);
  c.insert(c.end(), {f.function, Cell(f.file), Cell(f.line), Cell(f.module), caller, FramesText(r.frames)});
  return c;
}

std::optional<Part> PhaseOfRange(std::string_view name) {
  const std::string prefix = std::string(format::kPhaseDomain) + ":";
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  name.remove_prefix(prefix.size());
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  if (name.size() > 8 && name.substr(name.size() - 8) == ".forward") return Part::kForward;
  if (name == "Tensor.backward" || name == "torch.autograd.backward") return Part::kBackward;
  if (starts("Optimizer.step") || starts("Optimizer.zero_grad")) return Part::kOptimizer;
  if (starts("enumerate(DataLoader)")) return Part::kDataWait;
  return std::nullopt;
}

namespace {

std::string Clause(const CallSiteRow& row) {
  return "`" + row.Site() + "` (" + std::to_string(row.calls) + (row.calls == 1 ? " call, " : " calls, ") +
         FormatDuration(static_cast<double>(row.total_ns)) + ")";
}

/// Inserts `sentence` after the first of `text` that contains `marker`; false if none does.
bool InsertAfter(std::vector<std::string>* text, std::string_view marker, std::string sentence) {
  for (size_t i = 0; i < text->size(); ++i) {
    if ((*text)[i].find(marker) == std::string::npos) continue;
    text->insert(text->begin() + static_cast<ptrdiff_t>(i) + 1, std::move(sentence));
    return true;
  }
  return false;
}

}  // namespace

void AddCallSiteClauses(const std::vector<ProcessSummary>& summaries, Bottleneck* b) {
  for (TrainingProcess& t : b->processes) {
    if (t.process < 0) continue;
    const std::vector<CallSiteRow> rows = MergeCallSites({&summaries[static_cast<size_t>(t.process)].callsites});
    if (rows.empty()) continue;
    // The largest row (rows come largest first) of `kind` with frames that `wanted` takes.
    auto top = [&](StackedKind kind, auto wanted) -> const CallSiteRow* {
      for (const CallSiteRow& row : rows) {
        if (row.kind == kind && !row.frames.empty() && wanted(row)) return &row;
      }
      return nullptr;
    };
    auto of_phase = [](Part part) { return [part](const CallSiteRow& row) { return PhaseOfRange(row.name) == part; }; };
    if (t.gpu && t.gpu->cause == IdleCause::kSync) {
      if (const CallSiteRow* row =
              top(StackedKind::kCuda, [&](const CallSiteRow& r) { return t.gpu->sync_call.rfind(r.name, 0) == 0; })) {
        InsertAfter(&t.text, "the host blocks until the GPU is done",
                    "Its top call site: " + row->name + " from " + Clause(*row) + ".");
      }
    }
    if (const CallSiteRow* row = top(StackedKind::kRange, of_phase(t.largest))) {
      InsertAfter(&t.text, "the largest phase is ",
                  std::string("The ") + PartLabel(t.largest) + " phase's top call site: " + Clause(*row) + ".");
    }
    // Input-bound: where the loop waits for its batches (the DataLoader's __next__ range).
    if (t.verdict == Verdict::kInputBound || t.verdict == Verdict::kPartlyInputBound) {
      if (const CallSiteRow* row = top(StackedKind::kRange, of_phase(Part::kDataWait))) {
        InsertAfter(&t.text, "waiting for data is ", "The data wait's top call site: " + Clause(*row) + ".");
      }
    }
  }
}

void AddCallSiteTable(const std::vector<ProcessSummary>& summaries, const ReportOptions& options, Report* r) {
  std::vector<const std::vector<CallSiteGroup>*> groups;
  for (const ProcessSummary& s : summaries) groups.push_back(&s.callsites);
  std::vector<CallSiteRow> rows = MergeCallSites(groups);
  if (rows.empty() && !options.by_callsite) return;
  TableRows t{&CallSiteTable(), "Call sites (--backtrace): the top call sites by total time", {}};
  if (options.top > 0 && rows.size() > options.top) {
    t.omitted = rows.size() - options.top;
    rows.resize(options.top);
  }
  for (const CallSiteRow& row : rows) t.rows.push_back(CallSiteCells(row));
  t.text = options.by_callsite;
  r->callsites = std::move(rows);
  r->tables.push_back(std::move(t));
}

}  // namespace trainprof::collector
