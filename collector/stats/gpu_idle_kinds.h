// GPU idle time by kind, per stream: Holistic Trace Analysis's idle time breakdown (HTA 0.5.0,
// hta/analyzers/breakdown_analysis.py, BreakdownAnalysis.get_idle_time_breakdown and
// _analyze_idle_time_for_stream; docs/analysis.md, "GPU idle time by kind").
//
//   ops of a stream   its kernels, memcpys and memsets (HTA's categories kernel, gpu_memcpy,
//                     gpu_memset; not cuda_sync), by start time
//   gap               start of an op − end of the op before it on the stream (the first op has none);
//                     each gap is idle time of the stream and goes to one kind:
//     host_wait       the op's launching call (the CUDA call with the op's correlation id) began
//                     after the previous op ended: the host had not enqueued the work yet
//     kernel_wait     otherwise, a gap shorter than kKernelWaitNs: the overhead of launching back
//                     to back kernels
//     other           otherwise (a wait on an event, another stream, ...); an op without a
//                     launching call in the trace is never host_wait, as in HTA
//
// Differences from HTA, on purpose: a negative gap (an op starting before the previous one on its
// stream ended) counts 0, where HTA adds it (negative) to kernel_wait; streams are kept apart by
// device as well (HTA groups by stream alone within a rank). Times are the trace's ns: HTA rounds
// ns timestamps to whole µs (trace_parser.round_down_time_stamps) before it classifies.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "collector/base/id_map.h"
#include "collector/model/cuda_model.h"
#include "collector/model/cuda_window.h"

namespace trainprof::collector {

/// HTA's default `consecutive_kernel_delay` (trace_analysis.py, get_idle_time_breakdown: 30). Its
/// docstring says nanoseconds, but HTA compares it with gaps in the trace's unit, µs: 30 µs.
inline constexpr uint64_t kKernelWaitNs = 30'000;

struct StreamIdleKinds {
  uint32_t device = 0, stream = 0;
  uint64_t ops = 0;  ///< kernels, memcpys and memsets on the stream
  uint64_t idle_ns = 0, host_wait_ns = 0, kernel_wait_ns = 0, other_ns = 0;  ///< idle = Σ the three
  std::optional<double> host_wait_percent, kernel_wait_percent, other_percent;  ///< of idle_ns; none when 0
};

/// Sets `row`'s idle_ns and the three shares from its three kinds' times.
void SetIdleTotals(StreamIdleKinds* row);

/// GPU ops (kernels, memcpys, memsets) whose launching call is not in the trace: no CUDA call of
/// their correlation id (launched before recording began, or the call's record was lost). They
/// count in every GPU statistic; HTA leaves them out (docs/analysis.md).
struct UnlaunchedOps {
  uint64_t ops = 0;
  uint64_t ns = 0;  ///< their summed durations
};

/// The rows of one process made window by window (model/cuda_window.h): each window's ops (those
/// it owns) by start, the gap before a window's first op on a stream measured from the end of the
/// stream's last op in the windows before. Any cut into windows gives the rows one window gives.
class IdleKindsSweep {
 public:
  /// A process with `images` images.
  explicit IdleKindsSweep(size_t images, uint64_t kernel_wait_ns = kKernelWaitNs);

  /// One window; `images[i]`: the records of image i that the window owns or overlaps;
  /// `call_begin[i]`: the enter time by correlation id (EnterByCorrelation, model/cuda_calls.h) of
  /// image i's calls, at least those of the window's ops (an op of correlation 0 has no call).
  void Add(const TimeWindow& window, const std::vector<const CudaData*>& images,
           const std::vector<const IdMap<uint64_t>*>& call_begin);

  /// One row per (device, stream) with GPU activity, by device then stream.
  std::vector<StreamIdleKinds> Rows() &&;
  /// The ops added whose correlation id has no call in `call_begin`.
  const UnlaunchedOps& unlaunched() const { return unlaunched_; }

 private:
  UnlaunchedOps unlaunched_;
  using StreamKey = std::pair<uint32_t, uint32_t>;  // device, stream
  uint64_t kernel_wait_ns_;
  std::map<StreamKey, StreamIdleKinds> rows_;
  std::vector<std::map<StreamKey, uint64_t>> last_end_;  // per image: the end of each stream's last op so far
};

/// One row per (device, stream) with GPU activity, by device then stream. Images of one process
/// (exec) are analysed apart and their rows of the same (device, stream) summed.
/// `unlaunched` (optional): set to the ops whose launching call is not in the trace.
std::vector<StreamIdleKinds> IdleKindsByStream(const std::vector<const CudaData*>& images,
                                               uint64_t kernel_wait_ns = kKernelWaitNs,
                                               UnlaunchedOps* unlaunched = nullptr);

}  // namespace trainprof::collector
