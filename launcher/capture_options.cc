#include "capture_options.h"

#include <time.h>

#include <cmath>
#include <cstdlib>
#include <strings.h>

#include "inject_env.h"
#include "trainprof/trace_format.h"

namespace trainprof::launcher {

namespace {

constexpr double kMaxSeconds = 1e9;  // ~31 years: any real run, and the ns still fit in 64 bits

// Seconds as given ("2", "0.5", "1e-3") to ns; nullopt if not a finite decimal number in range.
std::optional<uint64_t> ParseSeconds(const std::string& text) {
  if (text.empty() || text.find_first_not_of(" \t") != 0) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < 0 || v > kMaxSeconds) return std::nullopt;
  // "0x1p3" and "inf" are strtod's too; only plain decimal numbers are seconds here.
  if (text.find_first_of("xXnN") != std::string::npos) return std::nullopt;
  return static_cast<uint64_t>(std::llround(v * 1e9));
}

}  // namespace

std::string CaptureOptions::RangeText() const {
  switch (range) {
    case Range::kCudaProfilerApi: return "cudaProfilerApi";
    case Range::kNvtx: return "nvtx:" + nvtx_name;
    default: return "none";
  }
}

const char* CaptureOptions::EndText() const {
  switch (end) {
    case End::kStopShutdown: return "stop-shutdown";
    case End::kRepeat: return "repeat";
    default: return "stop";
  }
}

std::optional<CaptureOptions> ParseCaptureOptions(const CaptureArgs& args, unsigned trace, std::string* error) {
  CaptureOptions o;
  const std::string& r = args.range;
  if (r.empty() || strcasecmp(r.c_str(), "none") == 0) {
    o.range = CaptureOptions::Range::kNone;
  } else if (strcasecmp(r.c_str(), "cudaProfilerApi") == 0) {
    o.range = CaptureOptions::Range::kCudaProfilerApi;
  } else if (r.size() >= 4 && strncasecmp(r.c_str(), "nvtx", 4) == 0 && (r.size() == 4 || r[4] == ':')) {
    o.range = CaptureOptions::Range::kNvtx;
    o.nvtx_name = r.size() > 5 ? r.substr(5) : "";
    if (o.nvtx_name.empty()) {
      *error = "--capture-range=nvtx needs the name of the NVTX range that starts the capture: "
               "--capture-range=nvtx:NAME (e.g. nvtx:train_step)";
      return std::nullopt;
    }
    if (o.nvtx_name.size() > format::kMaxStringBytes) {
      *error = "--capture-range=nvtx:NAME: NAME is " + std::to_string(o.nvtx_name.size()) +
               " bytes, longer than NVTX names are recorded (" + std::to_string(format::kMaxStringBytes) + ")";
      return std::nullopt;
    }
  } else {
    *error = "--capture-range: unknown value '" + r + "' (valid: none, cudaProfilerApi, nvtx:NAME)";
    return std::nullopt;
  }

  if (!args.range_end.empty()) {
    if (args.range_end == "stop") {
      o.end = CaptureOptions::End::kStop;
    } else if (args.range_end == "stop-shutdown") {
      o.end = CaptureOptions::End::kStopShutdown;
    } else if (args.range_end == "repeat") {
      o.end = CaptureOptions::End::kRepeat;
    } else {
      *error = "--capture-range-end: unknown value '" + args.range_end + "' (valid: stop, stop-shutdown, repeat)";
      return std::nullopt;
    }
  }

  if (!args.delay.empty()) {
    std::optional<uint64_t> ns = ParseSeconds(args.delay);
    if (!ns) {
      *error = "--delay: '" + args.delay + "' is not a number of seconds (0 or more, e.g. --delay 30 or --delay 2.5)";
      return std::nullopt;
    }
    o.delay_ns = *ns;
  }
  if (!args.duration.empty()) {
    std::optional<uint64_t> ns = ParseSeconds(args.duration);
    if (!ns || *ns == 0) {
      *error = "--duration: '" + args.duration +
               "' is not a number of seconds greater than 0 (e.g. --duration 60 or --duration 0.5)";
      return std::nullopt;
    }
    o.duration_ns = *ns;
  }

  if (!args.range_end.empty() && o.range == CaptureOptions::Range::kNone &&
      !(o.end == CaptureOptions::End::kStopShutdown && o.duration_ns != 0)) {
    *error = "--capture-range-end=" + args.range_end +
             " needs --capture-range=cudaProfilerApi or nvtx:NAME (stop-shutdown also works with --duration)";
    return std::nullopt;
  }
  if (o.range == CaptureOptions::Range::kCudaProfilerApi && !(trace & kTraceCuda)) {
    *error = "--capture-range=cudaProfilerApi needs CUDA tracing, which --trace leaves out "
             "(cudaProfilerStart/Stop are seen through it)";
    return std::nullopt;
  }
  if (o.range == CaptureOptions::Range::kNvtx && !(trace & (kTraceNvtx | kTracePython))) {
    *error = "--capture-range=nvtx:NAME needs NVTX (or Python phase) tracing, which --trace leaves out";
    return std::nullopt;
  }
  return o;
}

void ApplyCaptureEnvironment(std::vector<std::string>* env, const CaptureOptions& o, uint64_t launch_ns,
                             pid_t launcher) {
  // Without options, drop what an enclosing `trainprof run` may have left in the environment.
  for (const char* name : {"TRAINPROF_CAPTURE_RANGE", "TRAINPROF_CAPTURE_RANGE_END", "TRAINPROF_CAPTURE_WINDOW",
                           "TRAINPROF_LAUNCHER_PID"}) {
    UnsetEnv(env, name);
  }
  if (o.range != CaptureOptions::Range::kNone) SetEnv(env, "TRAINPROF_CAPTURE_RANGE", o.RangeText());
  if (o.range != CaptureOptions::Range::kNone || o.shuts_down()) SetEnv(env, "TRAINPROF_CAPTURE_RANGE_END", o.EndText());
  if (o.delay_ns != 0 || o.duration_ns != 0) {
    uint64_t start = o.delay_ns != 0 ? launch_ns + o.delay_ns : 0;
    uint64_t end = o.duration_ns != 0 ? launch_ns + o.delay_ns + o.duration_ns : 0;
    SetEnv(env, "TRAINPROF_CAPTURE_WINDOW", std::to_string(start) + ":" + std::to_string(end));
  }
  if (o.shuts_down() && o.range != CaptureOptions::Range::kNone) {
    SetEnv(env, "TRAINPROF_LAUNCHER_PID", std::to_string(launcher));
  }
}

uint64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace trainprof::launcher
