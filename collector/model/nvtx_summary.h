// NVTX ranges and marks of one process image, matched and summarised while the reader decodes
// them (collector/read/nvtx_matcher.h), so that a report never holds the events themselves.
//
// Matching (per process image, since an exec ends every open range):
//   push/pop     per thread and domain, with a stack
//   start/end    by range id across all threads of the image
// Unbalanced ranges are counted, never timed: a pop on an empty stack ("<pop without push>"
// row), an end with an unknown id ("<end without start>" row), a range still open at the end of
// the trace (counted on its own row).
#pragma once

#include <cstdint>
#include <vector>

#include "collector/base/duration_summary.h"
#include "collector/base/string_pool.h"

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

struct RangeKeyHash {
  size_t operator()(const RangeKey& k) const {
    uint64_t h = (uint64_t{k.domain} << 32) ^ k.name;
    h ^= (static_cast<uint64_t>(k.style) << 1 | static_cast<uint64_t>(k.orphan)) * 0x9E3779B97F4A7C15ull;
    h *= 0xbf58476d1ce4e5b9ull;
    return static_cast<size_t>(h ^ (h >> 31));
  }
};

struct RangeSamples {
  RangeKey key;
  uint32_t names = 1;         ///< distinct names of a report row (> 1: a group, nvtx_stats.h)
  DurationSummary durations;  ///< ns, of matched ranges
  uint64_t unbalanced = 0;
  uint64_t wall_ns = 0;       ///< a report row's denominator of percent (nvtx_stats.h)
};

struct MarkCount {
  StringId domain = 0;
  StringId name = 0;
  uint64_t count = 0;
};

/// NVTX ranges and marks of one process image (or, merged, of one process).
struct NvtxSummary {
  std::vector<RangeSamples> ranges;  ///< one per key
  std::vector<MarkCount> marks;      ///< one per (domain, name)
  uint64_t unbalanced = 0;           ///< all unbalanced ranges

  /// Adds `other`'s ranges and marks, merging equal keys (rows end sorted by key). Memory: the
  /// two summaries, no index.
  void Merge(NvtxSummary&& other);
  void Merge(const NvtxSummary& other) { Merge(NvtxSummary(other)); }
};

}  // namespace trainprof::collector
