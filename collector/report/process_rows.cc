#include "collector/report/process_rows.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "collector/analysis/capture_note.h"

namespace trainprof::collector {

void SetRunSpan(const std::vector<ProcessSummary>& summaries, Report* r) {
  const size_t n = summaries.size();
  std::set<std::string> hosts;
  // The span on the wall clock, over the processes whose start it knows (0: a damaged header
  // with no other process of its host to place it); with none, on CLOCK_MONOTONIC.
  uint64_t first_start = UINT64_MAX, last_end = 0, mono_first = UINT64_MAX, mono_last = 0;
  for (const ProcessSummary& s : summaries) {
    const ProcessInfo& p = s.info;
    if (p.start_realtime_ns != 0) {
      first_start = std::min(first_start, p.start_realtime_ns);
      last_end = std::max(last_end, p.start_realtime_ns + p.wall_ns);
    }
    mono_first = std::min(mono_first, p.start_ns);
    mono_last = std::max(mono_last, p.start_ns + p.wall_ns);
    hosts.insert(p.host);
  }
  r->hosts = hosts.size();
  if (first_start == UINT64_MAX) {
    r->start_realtime_ns = 0;
    r->span_ns = n > 0 && mono_last > mono_first ? mono_last - mono_first : 0;
  } else {
    r->start_realtime_ns = first_start;
    r->span_ns = last_end > first_start ? last_end - first_start : 0;
  }
}

ProcessRow ProcessRowOf(ProcessInfo info, int parent, int depth, const Report& r) {
  ProcessRow row;
  static_cast<ProcessInfo&>(row) = std::move(info);
  row.parent = parent;
  row.depth = depth;
  row.offset_ns = row.start_realtime_ns > r.start_realtime_ns ? row.start_realtime_ns - r.start_realtime_ns : 0;
  return row;
}

void AddProcessLosses(LossLog* log, size_t index, const std::string& who, const ProcessSummary& s, uint64_t offset_ns) {
  for (const LossNote& n : s.losses) {
    if (n.warn) {
      log->Add(n.kind, n.n, index, who, n.detail);
    } else {
      log->Count(n.kind, n.n);
    }
  }
  if (s.capture) log->Add(Loss::capture_limited, 1, index, who, DescribeCapture(*s.capture, offset_ns));
}

}  // namespace trainprof::collector
