// The report's call-site table (stats/callsites.h; docs/report.md, "Call sites"): its declaration
// (JSON callsites, CSV callsites.csv) and the rows Analyze puts into Report::tables. JSON rows also
// carry `frames`, an array of {function, file, line, module} (render_json adds it from
// Report::callsites); CSV has them as one string.
#pragma once

#include <optional>
#include <string_view>

#include "collector/base/table.h"
#include "collector/model/model.h"
#include "collector/report/report.h"
#include "collector/stats/callsites.h"

namespace trainprof::collector {

const TableDef& CallSiteTable();  ///< callsites
Cells CallSiteCells(const CallSiteRow& r);

/// "f (file:line) < g (file:line) < ...", innermost first: the CSV's frames cell.
std::string FramesText(const std::vector<SymbolFrame>& frames);

/// Appends the call-site table of the processes' summaries (their stacked events per call site,
/// symbolized) to r->tables (and its rows to r->callsites), cut to --top: when the trace has
/// stacked events or --by-callsite asked for it; in the text report only with --by-callsite.
void AddCallSiteTable(const std::vector<ProcessSummary>& summaries, const ReportOptions& options, Report* r);

/// The Bottleneck's call-site clauses (docs/analysis.md, "Call sites"): after the sentence on GPU
/// idle time spent in a synchronising call, and after the verdict naming the largest phase, one
/// sentence naming that call's / phase range's top call site in the process, where it has stacks.
void AddCallSiteClauses(const std::vector<ProcessSummary>& summaries, Bottleneck* b);

/// The training phase a range of trainprof's phase domain measures ("trainprof:Net.forward" →
/// forward), by the shim's names (format/trainprof/phases.h); nullopt for other ranges.
std::optional<Part> PhaseOfRange(std::string_view name);

}  // namespace trainprof::collector
