// `trainprof run` capture options (docs/cli.md, "Capture ranges"): which part of the run is
// recorded, and what happens when it ends. Parsed and checked here, then passed to the library
// as TRAINPROF_CAPTURE_* (inject/config.h, inject/capture_logic.h).
//
//   --capture-range none|cudaProfilerApi|nvtx:NAME   ─► TRAINPROF_CAPTURE_RANGE
//   --capture-range-end stop|stop-shutdown|repeat    ─► TRAINPROF_CAPTURE_RANGE_END
//   --delay SEC, --duration SEC                      ─► TRAINPROF_CAPTURE_WINDOW (absolute
//        CLOCK_MONOTONIC ns from the launch, so every process of the run shares one window)
//   stop-shutdown                                    ─► TRAINPROF_LAUNCHER_PID (the library
//        signals the end of a capture range to trainprof, capture_shutdown.h)
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainprof::launcher {

/// The options as given (empty: not given).
struct CaptureArgs {
  std::string range;
  std::string range_end;
  std::string delay;
  std::string duration;
};

struct CaptureOptions {
  enum class Range { kNone, kCudaProfilerApi, kNvtx };
  enum class End { kStop, kStopShutdown, kRepeat };
  Range range = Range::kNone;
  std::string nvtx_name;  ///< kNvtx
  End end = End::kStop;
  uint64_t delay_ns = 0;
  uint64_t duration_ns = 0;  ///< 0: no --duration

  bool any() const { return range != Range::kNone || delay_ns != 0 || duration_ns != 0; }
  /// trainprof ends the run: when a capture range ends, or when --duration's window ends.
  bool shuts_down() const { return end == End::kStopShutdown; }
  /// "nvtx:NAME", "cudaProfilerApi" or "none".
  std::string RangeText() const;
  /// "stop", "stop-shutdown" or "repeat".
  const char* EndText() const;
};

/// Checks the options against each other and the traced sources (`trace`, a TraceSource mask).
/// Usage errors (a message in *error): an unknown range or end; nvtx: without a NAME, or a NAME
/// longer than 4096 bytes; a --delay that is not a number of seconds >= 0, a --duration not > 0
/// (both at most 1e9 s); --capture-range-end without a capture range (except stop-shutdown with
/// --duration); cudaProfilerApi without cuda traced; nvtx:NAME with neither nvtx nor python traced.
std::optional<CaptureOptions> ParseCaptureOptions(const CaptureArgs& args, unsigned trace, std::string* error);

/// Sets (or, without capture options, removes) the TRAINPROF_CAPTURE_* variables and
/// TRAINPROF_LAUNCHER_PID in `env`. `launch_ns`: CLOCK_MONOTONIC at the launch; `launcher`: our pid.
void ApplyCaptureEnvironment(std::vector<std::string>* env, const CaptureOptions& options, uint64_t launch_ns,
                             pid_t launcher);

/// CLOCK_MONOTONIC now, in ns (the library's clock).
uint64_t MonotonicNowNs();

}  // namespace trainprof::launcher
