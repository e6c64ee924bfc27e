// `trainprof report [OPTIONS] PATH...`: options of the report subcommand and its run.
// The work is done by collector/ (trace_set → report → render); this file only wires options,
// files and exit statuses. docs/report.md is the reference.
//
// Exit status: 0 report written (damaged files are warnings on stderr); 1 the output could not be
// written; 2 no trace found, a PATH cannot be read, no trace file is usable, or --strict and a
// file was damaged (the report is still written).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

namespace trainprof::launcher {

struct ReportArgs {
  std::vector<std::string> paths;  ///< trace files or directories searched for *.trace
  std::string format = "text";     ///< text | json | csv
  std::string output;              ///< file (text, json); directory or prefix (csv); "" = stdout
  bool by_process = false;         ///< NVTX table per process too
  bool by_callsite = false;        ///< the call-site table in the text report (--by-callsite)
  bool by_phase = false;           ///< the function table of CPU samples per phase in the text report (--by-phase)
  bool by_rank = false;            ///< every rank's rows in the text report, however many (--by-rank)
  std::vector<std::string> ranks;  ///< --rank values as given: only the processes of these ranks
  size_t top = 0;                  ///< rows per table, 0 = all
  bool strict = false;             ///< exit 2 if any file was damaged
  bool full_names = false;         ///< kernel names demangled in full, not shortened
  bool no_group_names = false;     ///< every NVTX name its own row (no "step <N>" groups)
};

/// Adds report's options/positionals to `sub` (the `report` subcommand), storing into *args.
void AddReportOptions(CLI::App* sub, ReportArgs* args);

/// Runs the report: prints to stdout (or writes --output), warnings to stderr. Returns the exit status.
int RunReport(const ReportArgs& args);

}  // namespace trainprof::launcher
