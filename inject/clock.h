// The one time axis of trainprof: CLOCK_MONOTONIC nanoseconds (docs/trace-format.md, "Time").
#pragma once

#include <time.h>

#include <cstdint>

namespace trainprof::inject {

/// CLOCK_MONOTONIC now, in ns. Goes through the vDSO: no system call.
inline uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

/// CLOCK_REALTIME now, in ns since the epoch.
inline uint64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace trainprof::inject
