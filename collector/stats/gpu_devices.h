// GPU activity per device: busy time and launch latency, per process and merged over the
// processes of a host.
//
//   activity        kernels, memcpys and memsets with valid times on the device (the GPU is busy
//                   while any of them runs: Nsight Systems' "GPU utilization" counts kernels; we add
//                   copies and memsets, which keep a copy engine busy and are GPU work the step waits for)
//   busy_ns         |union of the activity ∩ the lifetime| (concurrent kernels count once)
//   busy_percent    busy_ns / lifetime_ns; lifetime = the process's wall time (merged: the union of
//                   the lifetimes of the processes that used the device)
//   active window   first activity start to last activity end; active_busy_percent = busy / window
//                   (what the GPU did once the program started using it: no start-up, no tail)
//   kernel_ns, memory_ns   Σ durations (not unions: concurrent kernels add up)
//   launch latency  kernel start − enter of the API call with the same correlation id (the
//                   launch): mean, median, p95 (linear interpolation). Kernels without a correlated
//                   call (dropped, or launched before tracing) and those that appear to start before
//                   their call (clock trouble) are left out.
//
// Merging: by (host, device id). The trace format has no device UUID, so processes that see
// different GPUs under one id (CUDA_VISIBLE_DEVICES set per process) are merged; per-process rows
// are always exact. A merged row is made from each process's DeviceUse (its summary's part): the
// row of the one process that used the device, or, for a device processes share, the union of
// their activities, each kept to kMaxActivityIntervals intervals (past that its shortest gaps are
// filled, and the merged busy time may exceed the true one by at most what was filled:
// busy_error_ns).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collector/base/duration_summary.h"
#include "collector/base/id_map.h"
#include "collector/base/intervals.h"
#include "collector/model/cuda_window.h"
#include "collector/model/model.h"

namespace trainprof::collector {

struct DeviceRow {
  std::optional<int32_t> pid;  ///< the process; none for a row merged over processes
  std::string host;
  uint32_t device = 0;
  std::string name;        ///< from GPU_DEVICE ("" when not recorded)
  uint32_t processes = 0;  ///< processes with activity on it (1 for a per-process row)
  uint64_t kernels = 0, kernel_ns = 0;
  uint64_t memcpys = 0, memsets = 0, memory_ns = 0;
  uint64_t busy_ns = 0;
  /// busy_ns may exceed the true busy time by up to this: a merged row of a device processes shared
  /// whose activity a process's summary kept bounded (DeviceUse::filled_ns); 0: exact.
  uint64_t busy_error_ns = 0;
  uint64_t lifetime_ns = 0;
  std::optional<double> busy_percent;  ///< none for a zero lifetime
  uint64_t active_begin_ns = 0, active_end_ns = 0;
  std::optional<double> active_busy_percent;  ///< none for an empty window
  uint64_t latency_count = 0;
  double latency_mean_ns = 0, latency_median_ns = 0, latency_p95_ns = 0;
  bool latency_exact = true;  ///< false: median and p95 estimated (past DurationSummary::kExactSamples kernels)
};

/// At most this many intervals of a process's activity on a device are kept for the merge (16
/// bytes each in memory; delta-coded in a summary file).
inline constexpr size_t kMaxActivityIntervals = 4096;

/// One process's use of one device: what its summary keeps (summary/process_summary.h), from which
/// its own row (ProcessDeviceRows) and the merged rows (MergedDeviceRows) are made.
struct DeviceUse {
  uint32_t device = 0;
  std::string name;  ///< from GPU_DEVICE ("" when not recorded)
  uint64_t kernels = 0, kernel_ns = 0, memcpys = 0, memsets = 0, memory_ns = 0;
  uint64_t busy_ns = 0;    ///< |activity ∩ the process's lifetime|
  uint64_t active_ns = 0;  ///< |activity|
  uint64_t active_begin = UINT64_MAX, active_end = 0;  ///< first start, last end (UINT64_MAX, 0: none)
  DurationSummary latency;  ///< launch latencies: exact up to 1024 kernels, then bounded
  /// The union of the activity, at most kMaxActivityIntervals intervals (BoundActivity).
  IntervalSet activity;
  uint64_t filled_ns = 0;  ///< the gaps filled to keep `activity` within the bound (counted busy)
};

/// Fills the shortest gaps of `activity` until it has at most `max` intervals (max ≥ 1), adding
/// what it filled to `*filled`. Intervals that touch are joined first (windows cut them).
void BoundActivity(IntervalSet* activity, size_t max, uint64_t* filled);

/// A process's uses of its devices (DeviceSweep::Uses), with what its rows need of the process.
struct ProcessDeviceUses {
  std::string host;
  int32_t pid = 0;
  Interval life;  ///< its lifetime (start_ns, end_ns: CLOCK_MONOTONIC)
  const std::vector<DeviceUse>* uses = nullptr;  ///< by device id
};

/// `process`'s uses of its devices from the CUDA records its images keep (one window), by device
/// id; `kept` (optional): the devices whose activity to keep (DeviceSweep), null: all.
std::vector<DeviceUse> DeviceUsesOf(const Process& process, const StringPool& strings,
                                    const std::set<uint32_t>* kept = nullptr);

/// The rows of one process, by device id: exact.
std::vector<DeviceRow> ProcessDeviceRows(const ProcessDeviceUses& p);

/// One row per (host, device) over the processes, by host then device: the row of a device one
/// process used, without its pid; for a device processes share, counts and sums added, latencies
/// merged, the lifetime the union of theirs, busy and active time from the union of their
/// activities (busy_error_ns: the gaps their bounds filled).
std::vector<DeviceRow> MergedDeviceRows(const std::vector<ProcessDeviceUses>& processes);

/// The device rows made window by window (model/cuda_window.h): counts, sums and latency samples
/// of the records each window owns, busy and active time from each window's activity clipped to
/// it. Any cut into windows gives the rows one window gives.
///
///   DeviceSweep sweep(processes, strings, /*merged=*/true, DevicesUsed(...));
///   for (const TimeWindow& w : windows) sweep.Add(w, records_of_w, enter_of_w);
///   std::vector<DeviceRow> rows = std::move(sweep).Rows();
class DeviceSweep {
 public:
  /// `devices[p]`: the devices processes[p] has GPU records on (DevicesUsed). Device names come
  /// from the images' GPU_DEVICE definitions. `merged`: rows per (host, device) over all
  /// processes, else per process and device, in process order.
  /// `kept` (not merged; optional): per process, the devices whose activity its uses keep
  /// (bounded: BoundActivity); of the others only their span, as one interval (what a merge needs
  /// of a device no other process uses: the bound at 1). Null: every device's.
  DeviceSweep(std::vector<const Process*> processes, const StringPool& strings, bool merged,
              const std::vector<std::set<uint32_t>>& devices,
              const std::vector<std::set<uint32_t>>* kept = nullptr);

  /// One window; `records[p][i]`: the records of processes[p]->images[i] that the window owns or
  /// overlaps (SliceWindow, or the whole CudaData for a single window); `enter[p][i]`: the enter
  /// time by correlation id (EnterByCorrelation, model/cuda_calls.h) of the image's calls, at
  /// least those of the window's kernels, or null: made from the whole image here (for one window:
  /// then only one image's is held at a time).
  void Add(const TimeWindow& window, const std::vector<std::vector<const CudaData*>>& records,
           const std::vector<std::vector<const IdMap<uint64_t>*>>& enter);

  /// The rows, by host and device (merged) or by process and device.
  std::vector<DeviceRow> Rows() &&;
  /// Not merged: each row's use of its device (its activity bounded: BoundActivity), in Rows'
  /// order.
  std::vector<DeviceUse> Uses() &&;

 private:
  struct Device {  // one row's sums so far
    DeviceUse use;  // its activity kept only when not merged
    bool keep_activity = false;  // in full (bounded), else its span made at the end
    uint32_t processes = 0;
    IntervalSet life;              // the lifetimes of the processes that use the device
    std::vector<Interval> window;  // this window's activity, clipped to it
  };
  std::vector<const Process*> processes_;
  bool merged_;
  std::vector<std::map<uint32_t, size_t>> target_;  // per process: device → index into rows_
  std::vector<Device> rows_;
  std::vector<std::pair<std::string, uint32_t>> keys_;  // host, device of each entry of rows_
  std::vector<std::optional<int32_t>> pids_;
};

/// A DeviceSweep fed CudaWindowData (what CudaWindows::Read gives): each window's correlation
/// look-ups its own (CudaWindowData::Enter, made from its partners), or, for one window over the
/// images' own records (`whole`), made image by image by the DeviceSweep.
///
///   DeviceWindowSweep sweep(processes, strings, /*merged=*/true, windows.whole());
///   for (size_t k = 0; k < windows.size(); ++k) sweep.Add(windows.window(k), data_of_k);
///   std::vector<DeviceRow> rows = std::move(sweep).Rows();
class DeviceWindowSweep {
 public:
  DeviceWindowSweep(const std::vector<const Process*>& processes, const StringPool& strings, bool merged, bool whole,
                    const std::vector<std::set<uint32_t>>* kept = nullptr);

  /// One window; `data[p]`: its records of processes[p].
  void Add(const TimeWindow& window, const std::vector<const CudaWindowData*>& data);
  /// The rows, as DeviceSweep::Rows.
  std::vector<DeviceRow> Rows() &&;
  /// The uses, as DeviceSweep::Uses.
  std::vector<DeviceUse> Uses() &&;

 private:
  bool whole_;
  std::optional<DeviceSweep> sweep_;
};

/// The devices a process has a kernel, copy or memset on.
std::set<uint32_t> DevicesUsed(const Process& process);

/// Per process, the devices another of `processes` on its host uses too (DevicesUsed): those whose
/// activity a report keeps for the merged rows (DeviceSweep's `kept`).
std::vector<std::set<uint32_t>> SharedDevices(const std::vector<const Process*>& processes);

/// One row per device the process used (by device id).
std::vector<DeviceRow> ProcessDevices(const Process& process, const StringPool& strings);

/// One row per (host, device) over all processes, by host then device.
std::vector<DeviceRow> MergedDevices(const std::vector<const Process*>& processes, const StringPool& strings);

/// Union of the process's GPU activity on every device (the bottleneck's "GPU busy").
IntervalSet ProcessGpuActivity(const Process& process);

}  // namespace trainprof::collector
