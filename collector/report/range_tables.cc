#include "collector/report/range_tables.h"

#include <memory>
#include <string>

#include "collector/base/name_groups.h"
#include "collector/stats/nvtx_stats.h"

namespace trainprof::collector {
namespace {

template <typename T>
size_t CutToTop(std::vector<T>* rows, size_t top) {
  if (top == 0 || rows->size() <= top) return 0;
  size_t omitted = rows->size() - top;
  rows->resize(top);
  return omitted;
}

}  // namespace

std::vector<RangeRows> BuildRangeTables(const ReportOptions& options, std::vector<ProcessSummary>* summaries,
                                        StringPool* names, Report* r) {
  const size_t n = summaries->size();
  std::vector<uint64_t> walls(n);
  std::vector<const NvtxProcessData*> nvtx(n);
  for (size_t i = 0; i < n; ++i) {
    walls[i] = (*summaries)[i].recorded_ns;
    nvtx[i] = &(*summaries)[i].nvtx;
  }
  // Range tables: each process's entries (its summaries, moved), names grouped by one decision
  // over every table, then the merged table (the process's own when there is one process).
  std::vector<std::shared_ptr<RangeTableData>> tables(n);
  std::vector<std::vector<RangeEntry>> entries(n);
  for (size_t i = 0; i < n; ++i) entries[i] = ProcessEntries(&(*summaries)[i].nvtx, walls[i]);
  std::shared_ptr<const NameGroups> groups;
  if (options.group_names) {
    std::vector<const std::vector<RangeEntry>*> all_tables;
    for (const auto& e : entries) all_tables.push_back(&e);
    auto g = std::make_shared<NameGroups>(all_tables, names);
    for (auto& e : entries) g->Apply(&e, *names);
    groups = std::move(g);
  }
  // One denominator for the merged table (docs/report.md, "Time (%)"): the processes with ranges.
  for (size_t i = 0; i < n; ++i) {
    if (entries[i].empty()) continue;
    r->nvtx_ranges_wall_ns += walls[i];
    ++r->nvtx_ranges_processes;
  }
  std::shared_ptr<RangeTableData> merged;
  if (n == 1) {
    merged = std::make_shared<RangeTableData>();
    merged->entries = std::move(entries[0]);
    merged->groups = groups;
    tables[0] = merged;
  } else {
    merged = std::make_shared<RangeTableData>();
    merged->entries = MergedEntries(entries, groups.get(), r->nvtx_ranges_wall_ns);
    merged->groups = groups;
    for (size_t i = 0; i < n; ++i) {
      tables[i] = std::make_shared<RangeTableData>();
      tables[i]->entries = std::move(entries[i]);
      tables[i]->groups = groups;
    }
  }
  entries = {};
  const std::vector<uint32_t> merged_order = DisplayOrder(merged->entries, *names);
  r->nvtx_ranges = RangeRows(merged, merged_order);
  r->nvtx_ranges_omitted = r->nvtx_ranges.CutTo(options.top);
  for (const MarkCount& m : MergedMarks(nvtx, *names)) {
    r->nvtx_marks.push_back({MarkDisplayName(m, *names), std::string(names->Get(m.domain)), m.count});
  }
  r->nvtx_marks_omitted = CutToTop(&r->nvtx_marks, options.top);
  // Each process's own table (one process: the merged one, same entries, same order, sorted once).
  std::vector<RangeRows> own(n);
  for (size_t i = 0; i < n; ++i) {
    own[i] = n == 1 ? RangeRows(tables[0], merged_order) : RangeRows(tables[i], DisplayOrder(tables[i]->entries, *names));
  }
  return own;
}

}  // namespace trainprof::collector
