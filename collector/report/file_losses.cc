#include "collector/report/file_losses.h"

#include <map>
#include <string>

#include "collector/read/process_tree.h"
#include "collector/base/units.h"
#include "collector/read/trace_reader.h"

namespace trainprof::collector {
void AddFileLosses(const std::vector<FileStatus>& files,
                   const std::vector<std::pair<std::string, std::string>>& file_runs, size_t not_recorded_omitted,
                   LossLog* log, Report* r) {
  for (size_t i = 0; i < files.size(); ++i) {
    const FileStatus& f = files[i];
    if (f.usable) ++r->usable_files;
    if (f.damaged()) ++r->damaged_files;
    log->Add(Loss::damaged_files, f.damaged() ? 1 : 0, i, f.path, f.damaged() ? DescribeDamage(f) : "");
    log->Count(Loss::unusable_files, f.usable ? 0 : 1);
    log->Count(Loss::truncated_files, f.truncated ? 1 : 0);
    for (size_t k = 0; k < kLossKinds; ++k) log->Count(static_cast<Loss>(k), f.losses[static_cast<Loss>(k)]);
  }

  // A directory with the files of several `trainprof run`s (one -o directory used twice, or by two
  // runs at once): say so, per directory (runs on several hosts are reported together on purpose).
  std::map<std::string, std::map<std::string, size_t>> runs;  // directory → run id → files
  for (const auto& [path, run_id] : file_runs) {
    if (run_id.empty()) continue;
    size_t slash = path.rfind('/');
    ++runs[slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash)][run_id];
  }
  for (const auto& [dir, ids] : runs) {
    if (ids.size() < 2) continue;
    std::string list;
    for (const auto& [id, files] : ids) list += (list.empty() ? "" : ", ") + id.substr(0, 8) + ": " + Plural(files, "file", "files");
    log->Add(Loss::mixed_run_directories, 1, 0, "",
               dir + " holds the trace files of " + std::to_string(ids.size()) + " runs of `trainprof run` (run ids " +
                   list + ")");
  }

  log->Add(Loss::children_not_shown, not_recorded_omitted, 0, "", std::to_string(kMaxNotRecorded));
}

}  // namespace trainprof::collector
