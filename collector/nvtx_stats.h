// NVTX range statistics, the trainprof version of `nsys stats --report nvtx_sum`.
//
// Matching (per process image, since an exec ends every open range):
//   push/pop     per thread and domain, with a stack
//   start/end    by range id across all threads of the image
// Unbalanced ranges are counted, never timed: a pop on an empty stack ("<pop without push>"
// row), an end with an unknown id ("<end without start>" row), a range still open at the end of
// the trace (counted on its own row).
//
// Statistics per (domain, name, style): calls, total, mean, sample std dev (n-1), min, exact median,
// max. Percent = total / wall time of the process; in the table merged over processes, total / the
// summed wall time of the processes in which the range occurs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/model.h"

namespace trainprof::collector {

enum class RangeStyle : uint8_t { kPushPop, kStartEnd };
const char* RangeStyleName(RangeStyle style);  // "push/pop", "start/end"

struct RangeKey {
  StringId domain = 0;
  StringId name = 0;
  RangeStyle style = RangeStyle::kPushPop;
  bool orphan = false;  ///< unmatched pops (kPushPop) or ends (kStartEnd): unbalanced only
  bool operator==(const RangeKey&) const = default;
};

struct RangeSamples {
  RangeKey key;
  std::vector<uint64_t> durations;  ///< ns, of matched ranges
  uint64_t unbalanced = 0;
};

struct MarkCount {
  StringId domain = 0;
  StringId name = 0;
  uint64_t count = 0;
};

/// NVTX ranges and marks of one process, matched but not yet summarised.
struct NvtxProcessData {
  std::vector<RangeSamples> ranges;
  std::vector<MarkCount> marks;
  uint64_t unbalanced = 0;  ///< all unbalanced ranges of the process
};

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
  double percent = 0;
  uint64_t wall_ns = 0;  ///< the denominator of percent
  uint64_t unbalanced = 0;
};

/// Summary of `durations` (sorted in place).
RangeStats Summarize(const RangeKey& key, std::vector<uint64_t>* durations, uint64_t unbalanced, uint64_t wall_ns);

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
