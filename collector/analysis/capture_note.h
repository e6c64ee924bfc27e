// Capture ranges in the report: when a process recorded only inside capture ranges (--capture-range)
// or a --delay/--duration window, the intervals it captured, from its CAPTURE records.
//
//   TraceImage::capture (header) + TraceImage::cuda.captures (CAPTURE records of every image)
//     ─► sorted by time ─► on→off intervals (an interval still open at the end closes at the
//        window's end or at the process's end) ─► one note line for the report's warnings
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collector/model/model.h"

namespace trainprof::collector {

struct CaptureInterval {
  uint64_t start_ns = 0;  ///< CLOCK_MONOTONIC
  uint64_t end_ns = 0;
  bool operator==(const CaptureInterval&) const = default;
};

/// Whether any image of `p` recorded with capture settings.
bool CaptureLimited(const Process& p);

/// The captured intervals of `p`, in time order.
std::vector<CaptureInterval> CaptureIntervals(const Process& p);

/// Whether `p` recorded from a --delay window on (its first steps, warm-up included, were not
/// recorded).
bool RecordedFromDelay(const Process& p);

/// The time `p` recorded for (ns): the summed captured intervals when recording was limited, else
/// its wall time. The denominator of the NVTX tables' Time (%).
uint64_t RecordedTime(const Process& p);

/// What the capture note of a process says, apart from where the process stands in the run: its
/// capture settings and captured intervals (the report's merge adds the offset).
struct CaptureSummary {
  std::string settings;                    ///< "--capture-range=nvtx:step --capture-range-end=stop", ...
  uint64_t start_ns = 0;                   ///< the process's start (CLOCK_MONOTONIC), the intervals' zero
  std::vector<CaptureInterval> intervals;  ///< CLOCK_MONOTONIC, in time order
  bool operator==(const CaptureSummary&) const = default;
};

/// The capture summary of `p`; nullopt when its recording was not limited.
std::optional<CaptureSummary> CaptureSummaryOf(const Process& p);

/// The note of DescribeCapture, from a capture summary.
std::string DescribeCapture(const CaptureSummary& capture, uint64_t offset_ns);

/// "recording limited to capture ranges (--capture-range=nvtx:step): 2 intervals captured,
/// 12.0 ms in all: +1.00 s to +1.01 s, ..." with times as offsets: `offset_ns` is the process's
/// start relative to the report's time zero. "" when recording was not limited.
std::string DescribeCapture(const Process& p, uint64_t offset_ns);

}  // namespace trainprof::collector
