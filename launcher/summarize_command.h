// `trainprof summarize [-o DIR] PATH...`: each trace file's processes summarised into a summary
// file of its own (collector/summary/summary_file.h), which `trainprof report` merges as it merges
// traces. The map step of a report that a scheduler spreads: one task per node, each summarising
// the files of its node (docs/scaling.md). docs/cli.md is the reference.
//
// Exit status: 0 summaries written (damaged and unusable files are warnings on stderr, their
// summaries say what was lost); 1 a summary could not be written; 2 no trace found, a PATH cannot
// be read, or -o is a directory of the traces.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace trainprof::launcher {

struct SummarizeArgs {
  std::vector<std::string> paths;  ///< trace files or directories searched for them
  std::string output = "summaries";  ///< the directory the summary files go to (made if missing, 0700)
};

/// Adds summarize's options and positionals to `sub`, storing into *args.
void AddSummarizeOptions(CLI::App* sub, SummarizeArgs* args);

/// Writes one summary file per trace file found (NAME.summary for NAME.trace, NAME.pt.summary for
/// NAME.pt.trace.json[.gz]) into args.output; warnings to stderr. Returns the exit status.
int RunSummarize(const SummarizeArgs& args);

}  // namespace trainprof::launcher
