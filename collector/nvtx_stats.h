// NVTX range statistics, the trainprof version of `nsys stats --report nvtx_sum`.
//
// Matching rules: collector/nvtx_summary.h (the reader matches while it decodes).
//
// Statistics per (domain, name, style): calls, total, mean, sample std dev (n-1), min, median, max
// (collector/duration_summary.h: exact up to 1024 calls, estimated within 0.39% beyond). Percent = total / wall time of the process; in the table merged over processes, total / the
// summed wall time of the processes in which the range occurs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/model.h"
#include "collector/nvtx_summary.h"

namespace trainprof::collector {

/// NVTX ranges and marks of one process: its images' summaries (made by the reader) merged.
using NvtxProcessData = NvtxSummary;

NvtxProcessData CollectNvtx(const Process& process);

struct RangeStats {
  RangeKey key;
  uint64_t calls = 0;
  uint64_t total_ns = 0;
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
  double mean_ns = 0;
  double std_ns = 0;     ///< sample standard deviation (n-1); 0 for fewer than two calls
  double median_ns = 0;  ///< mean of the two middle durations for an even count
  bool median_exact = true;  ///< false: estimated (DurationSummary::kRelativeError)
  double percent = 0;
  uint64_t wall_ns = 0;  ///< the denominator of percent
  uint64_t unbalanced = 0;
};

/// The table row of one range key.
RangeStats Summarize(const RangeKey& key, const DurationSummary& durations, uint64_t unbalanced, uint64_t wall_ns);

/// One process's table, sorted by total time (descending).
std::vector<RangeStats> RangeTable(NvtxProcessData* data, uint64_t wall_ns, const StringPool& strings);
/// The table over all processes; wall_ns[i] belongs to per_process[i].
std::vector<RangeStats> MergedRangeTable(const std::vector<NvtxProcessData>& per_process,
                                         const std::vector<uint64_t>& wall_ns, const StringPool& strings);
/// Marks over all processes, by count (descending).
std::vector<MarkCount> MergedMarks(const std::vector<NvtxProcessData>& per_process, const StringPool& strings);

/// "name", "domain:name", "<unnamed>", "<pop without push>"...
std::string RangeDisplayName(const RangeKey& key, const StringPool& strings);
std::string MarkDisplayName(const MarkCount& mark, const StringPool& strings);

}  // namespace trainprof::collector
