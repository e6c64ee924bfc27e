// NVTX range statistics, the trainprof version of `nsys stats --report nvtx_sum`.
//
// Matching rules: collector/model/nvtx_summary.h (the reader matches while it decodes).
//
// Statistics per (domain, name, style): calls, total, mean, sample std dev (n-1), min, median, max
// (collector/base/duration_summary.h: exact up to 1024 calls, estimated within 0.39% beyond). Percent = total / wall time of the process; in the table merged over processes, total / the
// summed wall time of the processes that recorded a range (whichever row): one denominator per
// table, so Time (%) falls with the total down the table (docs/report.md, "Time (%)").
//
// Memory: a table is its entries (one DurationSummary per name, ~100 bytes) and 4 bytes a row of
// display order; rows are made display-ready one at a time (report.h, RangeRows), never all at once.
// Names that differ only in embedded numbers are grouped (name_groups.h) unless turned off.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/model/model.h"
#include "collector/model/nvtx_summary.h"
#include "collector/base/sample_stats.h"

namespace trainprof::collector {

/// NVTX ranges and marks of one process: its images' summaries (made by the reader) merged.
using NvtxProcessData = NvtxSummary;

/// The process's summary: its images' merged (copied from the trace).
NvtxProcessData CollectNvtx(const Process& process);
/// The same, moved out of the process's images (which are left without NVTX summaries).
NvtxProcessData TakeNvtx(Process* process);

struct RangeStats {
  RangeKey key;
  SampleStats time;      ///< durations (ns): time.count = calls; time.exact false: median estimated
  double percent = 0;    ///< time.total / wall_ns
  uint64_t wall_ns = 0;  ///< the denominator of percent
  uint64_t unbalanced = 0;
  uint64_t names = 1;    ///< distinct names of the row: > 1 for a group ("step <N>")
};

/// The table row of one range key.
RangeStats Summarize(const RangeKey& key, const DurationSummary& durations, uint64_t unbalanced, uint64_t wall_ns);

/// One row's sources: a range key (key.name: the name, or a group's pattern), its durations,
/// names and wall time (RangeSamples: the reader's summaries become table entries without a copy).
using RangeEntry = RangeSamples;

RangeStats Summarize(const RangeEntry& entry);

/// A process's entries (its summary's ranges, moved), each with the process's wall time.
std::vector<RangeEntry> ProcessEntries(NvtxProcessData* data, uint64_t wall_ns);
/// The entries over all processes (equal keys merged), each with `wall_ns` as its denominator
/// (the summed wall time of the processes with ranges, whether this range occurs in them or not); names of a
/// group counted once however many processes have them (from `groups`, if any).
std::vector<RangeEntry> MergedEntries(const std::vector<std::vector<RangeEntry>>& per_process,
                                      const class NameGroups* groups, uint64_t wall_ns);

/// Which patterns (name_groups.h) group at least two distinct names, over every table.
class NameGroups {
 public:
  /// Counts the distinct names of each pattern in `tables` (a name in several tables once).
  NameGroups(const std::vector<const std::vector<RangeEntry>*>& tables, StringPool* strings);
  /// Replaces the entries of grouped names by one entry per group (key.name = the pattern,
  /// interned; names = distinct names of the group in this table). Order is not kept.
  void Apply(std::vector<RangeEntry>* entries, const StringPool& strings) const;
  /// Distinct names of the group whose pattern is `pattern_id` over all tables (0: no group).
  uint64_t NamesOf(StringId pattern_id) const;

 private:
  struct Group {
    StringId pattern = 0;
    uint64_t names = 0;
  };
  std::vector<Group> groups_;                       // patterns with >= 2 names
  std::unordered_map<uint64_t, uint32_t> by_hash_;  // hash of pattern → groups_ index
  std::unordered_map<StringId, uint64_t> names_of_; // pattern id → names
};

/// Display order of a table: total time descending, then calls, unbalanced, name, style.
std::vector<uint32_t> DisplayOrder(const std::vector<RangeEntry>& entries, const StringPool& strings);

/// Marks over all processes, by count (descending).
std::vector<MarkCount> MergedMarks(const std::vector<const NvtxProcessData*>& per_process, const StringPool& strings);

/// "name", "domain:name", "<unnamed>", "<pop without push>"...
std::string RangeDisplayName(const RangeKey& key, const StringPool& strings);
std::string MarkDisplayName(const MarkCount& mark, const StringPool& strings);

}  // namespace trainprof::collector
