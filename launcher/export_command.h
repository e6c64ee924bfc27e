// `trainprof export [--format chrome|kineto|folded] [--weight calls|time] [--from auto|samples|callsites] [-o FILE|DIR] [--window W] [--pid P] [--rank R] PATH...`:
// the traces as files another tool opens. The work is done by collector/export/ (export_chrome.h,
// export_kineto.h, selection.h); this file wires options, files and exit statuses (as for
// `trainprof report`: 0 written, 1 output not written, 2 no usable trace or a selection that
// selects nothing). docs/cli.md.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace trainprof::launcher {

struct ExportArgs {
  std::vector<std::string> paths;  ///< trace files or directories searched for *.trace
  std::string format = "chrome";   ///< chrome (Trace Event JSON: Perfetto, chrome://tracing), kineto, or folded (stacks)
  std::string weight = "calls";    ///< folded: each stack's count is its calls, or its total time in ns ("time")
  std::string from = "auto";       ///< folded: samples, callsites, or auto (samples where there are any)
  /// chrome: file; "" = trace.json in the current directory; "-" = stdout. kineto: the directory
  /// (created if missing) the per-rank files go into; required.
  std::string output;
  bool gzip = false;               ///< gzip the output (also when -o ends in .gz, chrome)
  std::string window;              ///< --window START:END | nvtx:NAME#N ("" = everything)
  std::vector<std::string> pids;   ///< --pid values as given (each a comma list)
  std::vector<std::string> ranks;  ///< --rank values as given
};

/// Adds export's options/positionals to `sub` (the `export` subcommand), storing into *args.
void AddExportOptions(CLI::App* sub, ExportArgs* args);

/// Runs the export. Returns the exit status.
int RunExport(const ExportArgs& args);

}  // namespace trainprof::launcher
