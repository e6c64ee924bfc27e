#include "trace_inputs.h"

#include <iostream>

#include "collector/export/selection.h"
#include "collector/read/exported_copies.h"

namespace trainprof::launcher {

void Error(const std::string& what) { std::cerr << "trainprof: error: " << what << "\n"; }

std::string NoReadableTrace(const std::vector<collector::FileStatus>& files, const std::string& from) {
  const bool summary = files.size() == 1 && files[0].path.ends_with(".summary");
  if (files.size() == 1) return std::string(summary ? "the summary file " : "the trace file ") + files[0].path + " could not be read";
  return "none of the " + std::to_string(files.size()) + " trace and summary files" +
         (from.empty() ? "" : " (from " + from + ")") + " could be read";
}

void AddTracePathsArgument(CLI::App* sub, std::vector<std::string>* paths) {
  sub->add_option("PATH", *paths, "Trace files (pid-*.trace, or torch.profiler/Kineto JSON traces, .json or .json.gz), summary files (trainprof summarize) or directories of them (searched recursively for *.trace, *.pt.trace.json, *.pt.trace.json.gz, *.summary)")
      ->required()
      ->type_name("");
}

std::string JoinPaths(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::optional<collector::TraceFileList> FindTraceFilesOrSay(const std::vector<std::string>& paths) {
  collector::TraceFileList list = collector::FindTraceFiles(paths);
  collector::SkipExportedCopies(&list);  // a Kineto export beside the traces it was made from
  for (const std::string& e : list.errors) Error(e);
  for (const std::string& w : list.warnings) std::cerr << "trainprof: warning: " << w << "\n";
  if (!list.errors.empty()) return std::nullopt;
  if (list.files.empty()) {
    Error("no trace files (*.trace, *.pt.trace.json[.gz], *.summary) found in " + JoinPaths(paths));
    return std::nullopt;
  }
  return list;
}

std::function<std::string(const std::string&)> IdListCheck(int64_t min) {
  return [min](const std::string& v) {
    std::vector<int64_t> ignored;
    return collector::ParseIdList(v, min, &ignored);
  };
}

}  // namespace trainprof::launcher
