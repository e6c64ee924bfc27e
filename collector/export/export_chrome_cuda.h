// The CUDA part of `trainprof export --format chrome`, laid out as torch.profiler's (Kineto's)
// traces are, so that Perfetto shows what users know:
//   CUDA API calls      "X" on the calling thread; cat "cuda_runtime" or "cuda_driver"; name without
//                       CUPTI's _vNNNN suffix; args: correlation, cbid, and status when not 0
//   kernels             "X" on a GPU track: one Chrome process per (traced process, device), named
//                       "GPU <device>: <name> (pid <pid>)", one thread per stream ("stream <id>");
//                       cat "kernel"; args: device, context, stream, correlation, grid, block,
//                       registers per thread, shared memory (bytes per block)
//   memcpys, memsets    the same tracks; cat "gpu_memcpy" / "gpu_memset"; name "Memcpy HtoD
//                       (Pageable -> Device)", "Memset (Device)"; args: bytes, bandwidth (GB/s)
//   launch → GPU work   flow events "s"/"f" (cat "ac2g", as Kineto), from the API call that started
//                       the work to the work, matched by correlation id
// GPU tracks' Chrome pids are 1'000'000'000 + 1000 × process index + device (no real pid is that
// large on Linux: pid_max ≤ 2^22).
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/export/chrome_writer.h"
#include "collector/export/selection.h"
#include "collector/export/time_axis.h"
#include "collector/model/model.h"

namespace trainprof::collector {

/// The export's time axis for one process (time_axis.h).
using ChromeClock = ExportClock;

struct ChromeCudaStats {
  uint64_t api_calls = 0;
  uint64_t gpu_ops = 0;  ///< kernels, memcpys, memsets
  uint64_t flows = 0;    ///< launch → GPU work links
};

/// Writes image `img` of process `p` (the process_index-th of the trace; Chrome pid `pid`): the
/// calls and GPU work that overlap the window of `selection`, and the flows whose both ends are kept.
ChromeCudaStats ExportChromeCuda(const Process& p, const TraceImage& img, size_t process_index, int64_t pid,
                                 const ChromeClock& clock, const Selection& selection, ChromeWriter* w);

}  // namespace trainprof::collector
