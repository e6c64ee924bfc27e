// `trainprof export --format chrome [-o FILE] PATH...`: the traces as a file another tool opens.
// The work is done by collector/export_chrome.*; this file wires options, files and exit statuses
// (as for `trainprof report`: 0 written, 1 output not written, 2 no usable trace). docs/cli.md.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace trainprof::launcher {

struct ExportArgs {
  std::vector<std::string> paths;  ///< trace files or directories searched for *.trace
  std::string format = "chrome";   ///< chrome (Trace Event JSON: Perfetto, chrome://tracing)
  std::string output;              ///< file; "" = trace.json in the current directory; "-" = stdout
  bool gzip = false;               ///< gzip the output (also when -o ends in .gz)
};

/// Adds export's options/positionals to `sub` (the `export` subcommand), storing into *args.
void AddExportOptions(CLI::App* sub, ExportArgs* args);

/// Runs the export. Returns the exit status.
int RunExport(const ExportArgs& args);

}  // namespace trainprof::launcher
