// The PATH... argument that `trainprof report` and `trainprof export` share: its CLI11 option and
// the search for the trace files, with the messages both commands print (docs/cli.md); the check
// of their --pid / --rank values.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collector/read/trace_set.h"

namespace trainprof::launcher {

/// Adds the required positional PATH... (trace files or directories of them) to `sub`, into *paths.
void AddTracePathsArgument(CLI::App* sub, std::vector<std::string>* paths);

/// Finds the trace files of `paths` (collector::FindTraceFiles), less the Kineto files trainprof
/// exported from trace files also found (collector::SkipExportedCopies). Prints each error and warning
/// ("trainprof: error: ...", "trainprof: warning: ..."); returns nothing, after the errors, when
/// a PATH could not be searched or no trace file was found ("no trace files (*.trace, ...) found
/// in DIR, FILE"), else the list.
std::optional<collector::TraceFileList> FindTraceFilesOrSay(const std::vector<std::string>& paths);

/// The paths as given, joined by ", " (for messages).
std::string JoinPaths(const std::vector<std::string>& paths);

/// A CLI11 check of one --pid / --rank value ("3", "0,1, 2"): "" or what is wrong with it
/// (collector::ParseIdList; values below `min` refused).
std::function<std::string(const std::string&)> IdListCheck(int64_t min);

/// Prints "trainprof: error: <what>".
void Error(const std::string& what);

/// The error for a set of trace files none of which could be read: the file by name when there is
/// one, else their count and `from` (the paths given, "" for none).
std::string NoReadableTrace(const std::vector<collector::FileStatus>& files, const std::string& from);

}  // namespace trainprof::launcher
