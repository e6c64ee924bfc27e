// rank_filter.h: processes, their tree links and their files, cut to some ranks.
#include "collector/read/rank_filter.h"

#include <set>
#include <utility>

namespace trainprof::collector {

std::string MissingRank(const std::set<int64_t>& present, const std::vector<int64_t>& ranks) {
  for (int64_t r : ranks) {
    if (present.count(r) > 0) continue;
    std::string have;  // "0-1023", "0, 2, 5-7": runs of consecutive ranks as ranges
    for (auto it = present.begin(); it != present.end();) {
      const int64_t first = *it;
      int64_t last = first;
      for (++it; it != present.end() && *it == last + 1; ++it) last = *it;
      have += (have.empty() ? "" : ", ") + std::to_string(first) +
              (last == first ? "" : (last == first + 1 ? ", " : "-") + std::to_string(last));
    }
    return "--rank " + std::to_string(r) + ": no process has rank " + std::to_string(r) +
           (present.empty() ? " (no process has a rank)" : " (ranks: " + have + ")");
  }
  return "";
}

std::string KeepRanks(Trace* trace, const std::vector<int64_t>& ranks) {
  if (ranks.empty()) return "";
  std::set<int64_t> present;
  for (const Process& p : trace->processes) {
    if (p.rank) present.insert(*p.rank);
  }
  if (std::string missing = MissingRank(present, ranks); !missing.empty()) return missing;
  const std::set<int64_t> wanted(ranks.begin(), ranks.end());

  // Processes, in tree order (each parent before its children), with their links remapped.
  std::vector<int> new_index(trace->processes.size(), -1);
  std::vector<Process> kept;
  for (size_t i = 0; i < trace->processes.size(); ++i) {
    const Process& p = trace->processes[i];
    if (!p.rank || wanted.count(*p.rank) == 0) continue;
    new_index[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(trace->processes[i]));
  }
  for (Process& p : kept) {
    p.parent = p.parent >= 0 ? new_index[static_cast<size_t>(p.parent)] : -1;
    std::vector<int> children;
    for (int c : p.children) {
      if (new_index[static_cast<size_t>(c)] >= 0) children.push_back(new_index[static_cast<size_t>(c)]);
    }
    p.children = std::move(children);
    p.depth = p.parent >= 0 ? kept[static_cast<size_t>(p.parent)].depth + 1 : 0;
  }

  // Files: those of the kept images, and those with no usable image (their damage is reported).
  std::vector<bool> used(trace->files.size(), false);
  std::vector<bool> has_image(trace->files.size(), false);
  for (const Process& p : trace->processes) {  // the left-out processes, still whole (the kept were moved)
    for (const TraceImage& img : p.images) {
      if (img.file < has_image.size()) has_image[img.file] = true;
    }
  }
  for (const Process& p : kept) {
    for (const TraceImage& img : p.images) {
      if (img.file < used.size()) used[img.file] = has_image[img.file] = true;
    }
  }
  std::vector<size_t> new_file(trace->files.size(), 0);
  std::vector<FileStatus> files;
  for (size_t f = 0; f < trace->files.size(); ++f) {
    if (!used[f] && has_image[f]) continue;
    new_file[f] = files.size();
    files.push_back(std::move(trace->files[f]));
  }
  for (Process& p : kept) {
    for (TraceImage& img : p.images) {
      if (img.file < new_file.size()) img.file = new_file[img.file];
    }
  }

  std::set<std::string> hosts;
  for (const Process& p : kept) hosts.insert(p.host);
  std::vector<HostClock> clocks;
  for (HostClock& h : trace->host_clocks) {
    if (hosts.count(h.host) > 0 || h.host == trace->clock_reference) clocks.push_back(std::move(h));
  }
  trace->host_clocks = std::move(clocks);
  trace->processes = std::move(kept);
  trace->files = std::move(files);
  return "";
}

}  // namespace trainprof::collector
