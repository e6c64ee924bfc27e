// Configuration of the injection library, read once from the environment the launcher set.
// Contract with launcher/inject_env.cc (docs/cli.md, "Environment"):
//   TRAINPROF_OUTPUT_DIR       absolute directory for pid-<PID>.trace (required to record)
//   TRAINPROF_FOLLOW_CHILDREN  "1": descendants record too; otherwise only TRAINPROF_ROOT_PID
//   TRAINPROF_ROOT_PID         pid of the launched command
//   TRAINPROF_RUN_ID           32 hex digits naming this `trainprof run` (FileHeader::run_id)
//   TRAINPROF_TRACE            sources, e.g. "cuda,nvtx,python"
//   TRAINPROF_UMASK            octal mask (`run --umask`, default 077): pid-*.trace get exactly
//                              0666 & ~MASK, a directory the library creates 0777 & ~MASK
//   TRAINPROF_LIB              absolute path of this library (also in LD_PRELOAD and
//                              NVTX_INJECTION64_PATH)
//   TRAINPROF_PYTHON_DIR       the Python shim folder the launcher put on PYTHONPATH
//   TRAINPROF_QUIET            "1": an ancestor already said recording failed; do not repeat it
//   TRAINPROF_CUDA_QUIET       "1": an ancestor already said CUDA tracing is unavailable
//   TRAINPROF_BACKTRACE        `run --backtrace=LIST`: cuda[:THRESHOLD_NS], nvtx, none
//                              (comma-separated; unset: cuda:1000; inject/stacks/backtrace_settings.h)
//   TRAINPROF_SAMPLE           `run --sample=HZ`: CPU samples per second of each thread's CPU time
//                              (1..10000; unset: none; inject/stacks/sample_settings.h)
// Read here but set by users, not by the launcher (docs/cli.md):
//   TRAINPROF_CUPTI_PATH       libcupti to load (a file, or a folder holding libcupti.so*)
//   TRAINPROF_GPU_FLUSH_MS     how often GPU activity is flushed from CUPTI (default 200 ms)
//   CUDA_HOME                  a CUDA toolkit to look for libcupti in
// Capture (focused recording; only with `trainprof run --capture-range/--delay/--duration`):
//   TRAINPROF_CAPTURE_RANGE    "cudaProfilerApi" or "nvtx:NAME"
//   TRAINPROF_CAPTURE_RANGE_END "stop", "stop-shutdown" or "repeat"
//   TRAINPROF_CAPTURE_WINDOW   "START:END": CLOCK_MONOTONIC ns of the --delay/--duration window
//                              (0: unbounded on that side)
//   TRAINPROF_LAUNCHER_PID     pid of `trainprof run`, told (SIGUSR2) when a capture range ends
//                              with stop-shutdown
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

inline constexpr unsigned kGpuFlushMsMin = 10;
inline constexpr unsigned kGpuFlushMsMax = 10000;

/// Environment variables the library owns (stripped from, or restored into, a child's env).
inline constexpr const char* kOwnedVars[] = {
    "TRAINPROF_OUTPUT_DIR", "TRAINPROF_FOLLOW_CHILDREN", "TRAINPROF_ROOT_PID", "TRAINPROF_TRACE",
    "TRAINPROF_LIB",        "TRAINPROF_PYTHON_DIR",      "NVTX_INJECTION64_PATH",
    "TRAINPROF_CAPTURE_RANGE", "TRAINPROF_CAPTURE_RANGE_END", "TRAINPROF_CAPTURE_WINDOW",
    "TRAINPROF_LAUNCHER_PID", "TRAINPROF_UMASK", "TRAINPROF_RUN_ID", "TRAINPROF_BACKTRACE", "TRAINPROF_SAMPLE",
    "CUDA_INJECTION64_PATH", "INTEL_LIBITTNOTIFY64", "TRAINPROF_CUDA_QUIET",    "TRAINPROF_QUIET"};  // QUIET stays last
inline constexpr size_t kNumOwnedVars = sizeof(kOwnedVars) / sizeof(kOwnedVars[0]);

struct Config {
  const char* output_dir = nullptr;  ///< null: the library stays inert
  bool follow_children = false;
  int root_pid = 0;                  ///< 0: unknown (record in this process)
  const char* run_id = nullptr;      ///< TRAINPROF_RUN_ID (null: none)
  bool trace_nvtx = true;
  bool trace_python = true;
  bool trace_cuda = true;
  bool trace_torch_ops = false;  ///< "torch-ops" in TRAINPROF_TRACE (opt-in): itt_collector.cc
  unsigned umask = 077;               ///< TRAINPROF_UMASK (missing or not octal up to 0777: 077)
  const char* cupti_path = nullptr;  ///< TRAINPROF_CUPTI_PATH
  const char* cuda_home = nullptr;   ///< CUDA_HOME
  /// GPU activity flush interval (TRAINPROF_GPU_FLUSH_MS, clamped to kGpuFlushMs{Min,Max}).
  unsigned gpu_flush_ms = 200;
  const char* capture_range = nullptr;      ///< TRAINPROF_CAPTURE_RANGE (null: none)
  const char* capture_range_end = nullptr;  ///< TRAINPROF_CAPTURE_RANGE_END (null: stop)
  uint64_t capture_window_start_ns = 0;     ///< TRAINPROF_CAPTURE_WINDOW (0: from the start)
  uint64_t capture_window_end_ns = 0;       ///< (0: to the end)
  int launcher_pid = 0;                     ///< TRAINPROF_LAUNCHER_PID (0: unknown)
  const char* backtrace = nullptr;          ///< TRAINPROF_BACKTRACE (null: the default, cuda:1000)
  uint32_t sample_hz = 0;                   ///< TRAINPROF_SAMPLE (0: no CPU sampling)
  const char* lib_path = nullptr;
  const char* python_dir = nullptr;
  /// Failures were already reported (by this process or an ancestor): say nothing more. Passed
  /// on to forked children with the Config, and to exec'd ones as TRAINPROF_QUIET=1.
  bool quiet = false;
  /// CUDA tracing was said to be unavailable (here or in an ancestor): do not say it again.
  /// Passed on like `quiet`, as TRAINPROF_CUDA_QUIET=1.
  bool cuda_quiet = false;
  /// "NAME=value" copies of each kOwnedVars entry present at start (nullptr if absent), kept to
  /// re-add them to a child's environment with --follow-children.
  const char* saved[kNumOwnedVars] = {};
};

/// Reads the configuration from `environ`. Called once, at library start (not in a vfork child).
/// Copies the strings it keeps, so later setenv/unsetenv by the program does not affect it.
Config ReadConfig();

}  // namespace trainprof::inject
