// Clock arithmetic on times read from trace headers, which a damaged file may fill with anything:
// the offset between a process's CLOCK_REALTIME and CLOCK_MONOTONIC (the header's pair taken
// together, docs/trace-format.md), and a monotonic time moved by it, both saturated to int64_t so
// that no input makes the arithmetic overflow (UBSan's signed-overflow check; the fuzzers).
#pragma once

#include <cstdint>

namespace trainprof::collector {

/// realtime_ns − monotonic_ns (ns), saturated to [INT64_MIN, INT64_MAX].
inline int64_t RealtimeOffset(uint64_t realtime_ns, uint64_t monotonic_ns) {
  if (realtime_ns >= monotonic_ns) {
    const uint64_t d = realtime_ns - monotonic_ns;
    return d > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(d);
  }
  const uint64_t d = monotonic_ns - realtime_ns;
  return d > static_cast<uint64_t>(INT64_MAX) ? INT64_MIN : -static_cast<int64_t>(d);
}

/// `ns` + `offset` (ns), saturated to [INT64_MIN, INT64_MAX]; `ns` past INT64_MAX counts as INT64_MAX.
inline int64_t ShiftedTime(uint64_t ns, int64_t offset) {
  const int64_t t = ns > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(ns);
  int64_t out = 0;
  if (__builtin_add_overflow(t, offset, &out)) return offset > 0 ? INT64_MAX : INT64_MIN;
  return out;
}

}  // namespace trainprof::collector
