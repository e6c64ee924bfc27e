// The temporal breakdown (temporal_breakdown.h), the kernel-category table and the per-step
// communication (kernel_categories.h) of one process, summed window by window
// (model/cuda_window.h): each window's activity is clipped to it, so its lengths add up to those
// of the whole activity, and the active span is the least start to the greatest end over the
// windows. Any cut into windows gives what one window gives.
//
//   GpuOverlapSweep sweep(steps);
//   for (const TimeWindow& w : windows) sweep.Add(CategorizeActivity(process, strings, w, records, enter));
//   if (!sweep.empty()) { sweep.Temporal(); sweep.Categories(); sweep.Steps(); }
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "collector/stats/kernel_categories.h"
#include "collector/stats/temporal_breakdown.h"

namespace trainprof::collector {

/// What the sweep gives of a process with GPU activity: its temporal breakdown, its kernel-category
/// table and, with communication, each step's.
struct GpuOverlap {
  TemporalBreakdown temporal;
  KernelCategoryBreakdown categories;
  std::vector<StepCommunication> steps;  ///< one per step; empty without communication
};

/// The shares from the ns they are shares of: the temporal breakdown's of its active span, the
/// hidden communication's of the communication (none where that is 0).
void SetShares(TemporalBreakdown* t);
void SetShares(KernelCategoryBreakdown* c);
void SetShares(StepCommunication* s);

class GpuOverlapSweep {
 public:
  /// `steps`: the process's steps by begin (CommunicationPerStep's input).
  explicit GpuOverlapSweep(std::vector<StepWindow> steps);

  /// One window's activity, clipped to the window (CategorizeActivity with a window).
  void Add(const CategorizedActivity& window);

  /// No GPU activity in any window.
  bool empty() const { return active_begin_ == UINT64_MAX; }

  TemporalBreakdown Temporal() const;
  KernelCategoryBreakdown Categories() const;
  /// One entry per step; empty when the process has no communication.
  std::vector<StepCommunication> Steps() const;
  /// The three; none when empty().
  std::optional<GpuOverlap> Result() const;

 private:
  std::vector<StepWindow> steps_;
  KernelCategoryBreakdown categories_;  // the lengths summed; the share made at the end
  std::vector<StepCommunication> per_step_;
  uint64_t active_begin_ = UINT64_MAX, active_end_ = 0;
  uint64_t busy_ns_ = 0, compute_ns_ = 0;
};

}  // namespace trainprof::collector
