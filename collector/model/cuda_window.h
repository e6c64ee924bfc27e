// Time windows over an image's CUDA records: the unit the windowed GPU analyses work in, so that
// a report holds a window's records at a time (a few, with ForEachCudaWindow's read-ahead) instead
// of the whole trace's (docs/performance.md, "The windows made concrete"; issue 17).
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
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collector/base/id_map.h"
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

/// `count` records starting at `time_ns` (or placed there: a chunk's records at its earliest time).
struct StartCount {
  uint64_t time_ns = 0;
  uint64_t count = 0;
  /// A chunk's: the end of its span [time_ns, end_ns] (it is read again for every window the span
  /// meets); 0 for a record's start.
  uint64_t end_ns = 0;
};

/// How many windows of `windows` (CutWindows' output) the chunk spans of `starts` meet in all
/// (those with end_ns set): the chunks a windowed read decodes.
uint64_t ChunkReads(const std::vector<StartCount>& starts, const std::vector<TimeWindow>& windows);

/// CutWindows over counted starts: cut at their times so that at most `max_records` lie in each
/// window; a time with more than that gets a window of its own. With counts of 1, the windows of
/// CutWindows.
std::vector<TimeWindow> CutWindows(std::vector<StartCount> starts, size_t max_records);

/// The start of every call (enter), kernel, copy and memset of `data`, appended to `out`: the
/// input of CutWindows.
void AppendStarts(const CudaData& data, std::vector<uint64_t>* out);

/// Where the records of `image` start, for cutting windows (`out` appended): each chunk's count at
/// its earliest time, from the image's chunk index (read/cuda_chunk_index.h); false where it has
/// none (then nothing is appended). read/cuda_chunk_index.h makes one.
using CudaStartCounter = std::function<bool(const TraceImage& image, std::vector<StartCount>* out)>;

/// Decodes the records of `image` that `window` owns or overlaps into `records` (SliceWindow's
/// records in its order, calls by CallEnd with `process_end_ns`) without the image's vectors, and,
/// unless `partners` is null, the records correlated with them wherever they lie in time: every
/// call with the correlation id of one of their kernels, copies or memsets, and every kernel, copy
/// and memset with the id of one of their calls, in the image's order (read/cuda_chunk_index.h).
/// The correlation look-ups of the window (EnterByCorrelation, LaunchCallsOf,
/// CorrelateGpuRecords) made of the partners give, for the window's ids, what they give of the
/// whole image. It may give in `partners` only the partners that `records` does not hold, and then
/// sets *partners_extra: where no correlation id is in both, the look-ups made over the records,
/// then those, are the ones made over every partner (CudaWindowData::PartnerSources). False where
/// it cannot (then the outputs are not used), with `error` said where it should have (the file
/// changed since it was read).
using CudaWindowReader =
    std::function<bool(const TraceImage& image, const TimeWindow& window, uint64_t process_end_ns, CudaData* records,
                       CudaData* partners, bool* partners_extra, std::string* error)>;

/// One window's records of one process: per image (in the order of Process::images) the records
/// the window owns or overlaps, and what its correlation look-ups read. Holds what it had to read
/// or copy; otherwise points into the images.
class CudaWindowData {
 public:
  CudaWindowData() = default;
  /// Records and (every one of their) partners held elsewhere (they must outlive this).
  CudaWindowData(std::vector<const CudaData*> records, std::vector<const CudaData*> partners)
      : records_(std::move(records)), partners_(std::move(partners)), partners_extra_(records_.size(), 0) {}

  /// The records of each image that the window owns or overlaps.
  const std::vector<const CudaData*>& records() const { return records_; }
  /// What the window's correlation look-ups of an image read, in order: the records correlated
  /// with the window's (a CudaWindowReader's partners; or the window's records, then the partners
  /// they are not), or, where the window was not read again, the whole image's. A look-up over
  /// them (EnterByCorrelation, CorrelateGpuRecords, LaunchCallsOf: the first record of an id
  /// wins) gives, for the ids of the window's records, what it gives over the whole image.
  std::vector<const CudaData*> PartnerSources(size_t image) const;
  /// EnterByCorrelation(PartnerSources(image)) (model/cuda_calls.h): the
  /// enter time by correlation id that the window's analyses look up, made once for all of them
  /// (by CudaWindows::Read where it reads the window; else when first asked, which is not
  /// thread-safe).
  const IdMap<uint64_t>& Enter(size_t image) const;
  size_t images() const { return records_.size(); }

 private:
  friend class CudaWindows;
  std::vector<const CudaData*> records_, partners_;
  std::vector<uint8_t> partners_extra_;  // per image: partners_ hold only what records_ does not
  std::vector<std::unique_ptr<CudaData>> owned_;
  mutable std::vector<std::unique_ptr<const IdMap<uint64_t>>> enter_;  // per image, once made
};

/// The CUDA records of a trace's processes window by window: what the windowed analyses are fed.
/// Either one window over each image's own records (nothing copied), or windows cut by record
/// starts, each window's records read when asked for (Read): decoded again from the trace file by
/// a CudaWindowReader (the windowed read) or, where it cannot, sliced out of the images
/// (SliceWindow). A reader of the windows holds one window at a time (ForEachCudaWindow: a few);
/// read again, the images keep only the calls that carry a stack (docs/performance.md, "The
/// windowed read").
class CudaWindows {
 public:
  /// One window, [0, UINT64_MAX), over the records of `processes` (kept by address: they must
  /// outlive this).
  explicit CudaWindows(const std::vector<Process>& processes);
  /// Windows of at most `max_records` record starts each (CutWindows; 0: one window), read with
  /// their partners by `read` where it can (may be empty: sliced, the look-ups over the whole
  /// images). The starts are counted by `count` where it can (may be empty), or taken from the
  /// images' records. Where chunks whose spans cross many windows would be read more than
  /// kMaxChunkReads times their number in all (ChunkReads), the budget doubles until they would not.
  CudaWindows(const std::vector<Process>& processes, size_t max_records, CudaWindowReader read = {},
              const CudaStartCounter& count = {});

  static constexpr uint64_t kMaxChunkReads = 4;

  size_t size() const { return windows_.size(); }
  const TimeWindow& window(size_t k) const { return windows_[k]; }
  /// One window over the images' own records (Read gives the images themselves).
  bool whole() const { return whole_; }
  /// Window k's records of `process` (one of the processes given), read now. Safe to call from
  /// several threads at once.
  CudaWindowData Read(size_t k, const Process& process) const;
  /// How many (window, image) record sets the reader gave and how many were sliced, so far.
  size_t read_count() const { return read_; }
  size_t sliced_count() const { return sliced_; }
  /// What went wrong reading windows again, once each ("FILE: why"): their records were then
  /// sliced out of what the image kept, which may be none of them.
  std::vector<std::string> Errors() const;

 private:
  std::vector<TimeWindow> windows_;
  bool whole_ = true;  // one window over the images' own records
  CudaWindowReader read_records_;
  mutable std::atomic<size_t> read_{0}, sliced_{0};
  mutable std::mutex errors_mutex_;
  mutable std::vector<std::string> errors_;
  void Said(const std::string& error) const;
};

/// Window k of each of `processes`, as CudaWindows::Read gives them: `data[p]` is processes[p]'s.
using CudaWindowVisit = std::function<void(size_t k, const std::vector<const CudaWindowData*>& data)>;

/// Reading threads at most (ForEachCudaWindow).
inline constexpr size_t kMaxReadThreads = 16;

/// Reads the windows, each window of each process once, and gives each to `visit`, in order: one
/// pass that can feed every windowed analysis, where a loop per analysis would decode every window
/// again for each. The reads are tasks, one per (window, process), taken in order by `threads`
/// threads of their own (at most kMaxReadThreads; fewer where no more can be had) and by the
/// caller while it waits for the window it visits next, up to threads + 3 windows past the one
/// visited (so at most threads + 4 windows are held). With 0 threads, or where the windows are the
/// images' own records (nothing to read), the caller reads each window in turn. Rethrows what a
/// read threw; no later window is visited then.
void ForEachCudaWindow(const CudaWindows& windows, const std::vector<const Process*>& processes, size_t threads,
                       const CudaWindowVisit& visit);
/// The same over every process of a trace.
void ForEachCudaWindow(const CudaWindows& windows, const std::vector<Process>& processes, size_t threads,
                       const CudaWindowVisit& visit);

}  // namespace trainprof::collector
