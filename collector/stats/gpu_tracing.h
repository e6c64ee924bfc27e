// How GPU tracing went in one process: its state from the GPU_STATUS records, and what was lost
// (records CUPTI dropped, records with invalid timestamps, calls that never returned).
//
//   state   "none"         no GPU_STATUS record: the process never initialised CUDA (or CUDA
//                          tracing was off, or the file is format version 1)
//           "on"           CUPTI subscribed and recording
//           "unavailable"  CUPTI could not be used; `message` and `cupti_result` say why (e.g.
//                          another CUPTI subscriber such as torch.profiler); NVTX and Python phases
//                          still record
//   flushed  a GPU_STATUS "flushed" record: CUPTI's buffers were flushed at the end of the
//            process, so its GPU activity is complete (a process killed with SIGKILL loses what
//            CUPTI still buffered)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collector/model/model.h"

namespace trainprof::collector {

struct GpuTracing {
  std::string state = "none";
  bool flushed = false;
  std::optional<uint64_t> cupti_result;  ///< of the "unavailable" record
  uint64_t cupti_version = 0;            ///< CUPTI API version (0: not recorded)
  uint64_t driver_version = 0;           ///< CUDA driver version, e.g. 12040 (0: not recorded)
  std::string message;                   ///< why it is unavailable
  uint64_t records_dropped = 0;          ///< Σ GPU_DROPPED counts
  uint64_t invalid_timestamps = 0;       ///< GPU records with a zero or reversed time (left out)
  uint64_t calls = 0;                    ///< CUDA API calls recorded
  uint64_t unfinished_calls = 0;         ///< calls that never returned
  uint64_t lost_exits = 0;               ///< calls whose exit may be in damaged bytes (not unfinished)
  std::vector<std::string> unfinished_names;  ///< their display names, distinct, in time order
  uint64_t unmatched_exits = 0;          ///< exits without their enter
  uint64_t api_errors = 0;               ///< returned calls with a non-zero status
  uint64_t overhead_ns = 0;              ///< Σ GPU_OVERHEAD durations (CUPTI's own cost)
  uint64_t capture_pauses = 0;           ///< CAPTURE records switching recording off
  bool any = false;                      ///< any CUDA record at all
};

/// `digests`: the CUDA digests of the process's images, in image order, where they were taken
/// out of the images (the report's summaries hold them); null: the images' own.
GpuTracing GpuTracingOf(const Process& process, const StringPool& strings,
                        const std::vector<CudaDigest>* digests = nullptr);

}  // namespace trainprof::collector
