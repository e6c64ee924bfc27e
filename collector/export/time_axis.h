// The one time axis of an export (Chrome and Kineto alike): every host's CLOCK_MONOTONIC mapped
// onto CLOCK_REALTIME through its earliest process's (realtime, monotonic) pair, so that ranks on
// several hosts share one axis, and counted from `zero`, the realtime of the earliest process start
// ("the run's start": ts = 0 of a Chrome export, baseTimeNanoseconds of a Kineto export).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collector/base/clock_offset.h"
#include "collector/model/model.h"

namespace trainprof::collector {

/// One process's clock on the export's axis: its CLOCK_MONOTONIC ns → ns after `zero`
/// (0 for a time before it).
struct ExportClock {
  int64_t offset = 0;  ///< realtime - monotonic of the process's host
  uint64_t zero = 0;   ///< realtime ns of the axis' 0
  uint64_t operator()(uint64_t t) const {
    const int64_t r = ShiftedTime(t, offset);  // saturated: a damaged header's clocks may be anything
    return r > 0 && static_cast<uint64_t>(r) > zero ? static_cast<uint64_t>(r) - zero : 0;
  }
};

struct TimeAxis {
  uint64_t zero = 0;                  ///< realtime ns of the earliest process start (0: none known)
  std::vector<ExportClock> clocks;    ///< by index of Trace::processes
};

/// The axis of `trace` (see the file comment).
TimeAxis MakeTimeAxis(const Trace& trace);

}  // namespace trainprof::collector
