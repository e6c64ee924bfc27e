// Time windows over an image's CUDA records: the unit the windowed GPU analyses work in, so that
// a report holds one window's records at a time instead of the whole trace's (docs/performance.md,
// "The windows made concrete"; issue 17).
//
//   windows   [T0, T1) [T1, T2) ... [Tk, UINT64_MAX): cut by record starts (CutWindows), so that
//             at most a budget of records starts in each
//   owns      a record is counted, and its samples (durations, latencies) taken, in the one window
//             its start lies in
//   overlaps  for interval algebra a record is clipped to each window it overlaps: set union,
//             intersection and difference act point by point, so the length of any such
//             expression over the whole time is the sum of its lengths over the windows, exactly
//
// A window's records (SliceWindow) are those it owns or overlaps: a record longer than a window
// is in each window it overlaps, counted in the first.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "collector/base/intervals.h"
#include "collector/model/cuda_model.h"
#include "collector/model/model.h"

namespace trainprof::collector {

/// [begin_ns, end_ns) on CLOCK_MONOTONIC (ns); the last window ends at UINT64_MAX.
struct TimeWindow {
  uint64_t begin_ns = 0;
  uint64_t end_ns = UINT64_MAX;
  /// The window counts a record that starts at `start_ns`.
  bool Owns(uint64_t start_ns) const { return start_ns >= begin_ns && start_ns < end_ns; }
  /// [begin, end) shares time with the window (an empty interval never does).
  bool Overlaps(uint64_t begin, uint64_t end) const { return begin < end_ns && end > begin_ns && end > begin; }
  /// The part of [begin, end) inside the window (empty when it does not overlap).
  Interval Clip(uint64_t begin, uint64_t end) const {
    return {begin > begin_ns ? begin : begin_ns, end < end_ns ? end : end_ns};
  }
};

/// The end a call's interval is taken to have in the GPU analyses (docs/analysis.md, "GPU idle
/// time"): its exit; one that never returned blocked until the process ended (`process_end_ns`);
/// one whose exit was lost to damage has no known end, and none is assumed.
inline uint64_t CallEnd(const CudaCall& c, uint64_t process_end_ns) {
  if (c.returned) return c.end_ns;
  if (c.exit_lost) return c.begin_ns;
  return process_end_ns > c.begin_ns ? process_end_ns : c.begin_ns;
}

/// The calls, kernels, copies and memsets of `all` that `window` owns or overlaps (calls by
/// CallEnd), each vector in its order in `all`. Definitions, launch configurations and counters
/// are not copied: they stay in the image.
CudaData SliceWindow(const CudaData& all, const TimeWindow& window, uint64_t process_end_ns);

/// Windows that cover all time, cut at record starts so that at most `max_records` of `starts`
/// (the start of every record, any order; consumed) lie in each; a run of equal starts longer
/// than that gets a window of its own. One window [0, UINT64_MAX) for `max_records` 0 or no
/// more starts than it.
std::vector<TimeWindow> CutWindows(std::vector<uint64_t> starts, size_t max_records);

/// The start of every call (enter), kernel, copy and memset of `data`, appended to `out`: the
/// input of CutWindows.
void AppendStarts(const CudaData& data, std::vector<uint64_t>* out);

/// The CUDA records of a trace's processes window by window: what the windowed analyses are fed.
/// Either one window over each image's own records (nothing copied), or windows cut by record
/// starts with each window's records sliced out of the images (SliceWindow: copies, so memory
/// grows with the window, on top of the trace). The windowed read (docs/performance.md, "The
/// windows made concrete") is to give the same windows without the trace holding the records.
class CudaWindows {
 public:
  /// One window, [0, UINT64_MAX), over the records of `processes` (kept by address: they must
  /// outlive this).
  explicit CudaWindows(const std::vector<Process>& processes);
  /// Windows of at most `max_records` record starts each (CutWindows; 0: one window).
  CudaWindows(const std::vector<Process>& processes, size_t max_records);

  size_t size() const { return windows_.size(); }
  const TimeWindow& window(size_t k) const { return windows_[k]; }
  /// The records of each image of `process` (one of the processes given) in window k, in the
  /// order of Process::images.
  const std::vector<const CudaData*>& Of(size_t k, const Process& process) const {
    return records_[k][index_.at(&process)];
  }

 private:
  std::vector<TimeWindow> windows_;
  std::unordered_map<const Process*, size_t> index_;
  std::vector<std::vector<std::vector<const CudaData*>>> records_;  // [window][process][image]
  std::vector<std::unique_ptr<CudaData>> slices_;                   // owned copies, when cut
};

}  // namespace trainprof::collector
