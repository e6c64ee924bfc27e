// GPU activity by kernel category, and how the categories overlap: Holistic Trace Analysis's
// kernel-type breakdown and communication-computation overlap, on CudaData (trainprof's own
// traces and imported Kineto traces alike). Definitions and sources: docs/analysis.md, "Kernel
// categories".
//
//   category        HTA's get_kernel_type (hta/utils/utils.py), on the demangled name:
//     communication   ^nccl.*Kernel (IsNcclKernel, base/kernel_names.h)
//     memory          memcpys and memsets (GpuMemcpy, GpuMemset); a kernel named ^Memcpy, ^Memset, ^dma
//     other           a kernel whose name contains "Memcpy" or "Sync" (HTA: not computation)
//     computation     every other kernel
//   exclusive time  HTA's kernel-type table (BreakdownAnalysis._get_gpu_kernel_type_time,
//                   hta/analyzers/breakdown_analysis.py, with include_memory_kernels=True): each
//                   category's kernels merged into a union, then the time in which exactly one,
//                   two or all three of computation, communication and memory run
//
//     comp   |████████|      |████|
//     comm        |██████████████|
//            └─c─┘└c+m┘└─m─┘└c+m┘       c = computation only, m = communication only, c+m = both
//
//   hidden          |communication ∩ computation| / |communication| (HTA's get_comm_comp_overlap,
//                   hta/analyzers/communication_analysis.py): the share of the communication time
//                   hidden behind computation; per step for the NCCL kernels launched in the step
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/base/id_map.h"
#include "collector/base/intervals.h"
#include "collector/model/cuda_window.h"
#include "collector/model/model.h"

namespace trainprof::collector {

enum class KernelCategory : uint8_t { kComputation, kCommunication, kMemory, kOther, kCount };
inline constexpr size_t kKernelCategories = static_cast<size_t>(KernelCategory::kCount);

/// "computation", "communication", "memory", "other".
const char* KernelCategoryName(KernelCategory c);

/// The category of a kernel by its name as recorded (mangled, or demangled as Kineto writes it):
/// HTA's get_kernel_type (hta/utils/utils.py) on the demangled name.
KernelCategory KernelCategoryOf(std::string_view name);

/// One NCCL kernel and the time its launch call began (the call with its correlation id).
struct LaunchedKernel {
  uint64_t launch_ns = 0;
  Interval run;
};

/// A process's GPU activity (kernels, memcpys, memsets with valid times, every device and
/// stream, every image), by category. CUDA synchronisations (GpuSync) are not GPU work: they
/// are the host waiting (docs/analysis.md says where HTA counts them).
struct CategorizedActivity {
  std::array<IntervalSet, kKernelCategories> sets;  ///< the union of each category's activity
  IntervalSet all;                                  ///< the union of all of it
  uint64_t kernels = 0;                             ///< kernel executions (every category)
  std::vector<LaunchedKernel> communication;        ///< NCCL kernels with a launch call, by launch
  const IntervalSet& of(KernelCategory c) const { return sets[static_cast<size_t>(c)]; }
  bool empty() const { return all.empty(); }
};

/// `process`'s activity by category; `strings` holds its kernel names.
CategorizedActivity CategorizeActivity(const Process& process, const StringPool& strings);

/// `process`'s activity in one time window (model/cuda_window.h): `records[i]` the records of its
/// image i that the window owns or overlaps, `enter[i]` the enter time by correlation id of all
/// of image i's calls (EnterByCorrelation; nullptr: made here from the image). Every interval
/// (the sets, the NCCL kernels' runs) is clipped to the window; `kernels` counts those it owns.
/// Summed over any cut into windows, the lengths below and the per-step communication are those
/// of the whole activity (GpuOverlapSweep).
CategorizedActivity CategorizeActivity(const Process& process, const StringPool& strings, const TimeWindow& window,
                                       const std::vector<const CudaData*>& records,
                                       const std::vector<const IdMap<uint64_t>*>& enter);

/// HTA's kernel-type table of one process, in ns; the seven exclusive parts add up to
/// |computation ∪ communication ∪ memory|.
struct KernelCategoryBreakdown {
  uint64_t computation_ns = 0;    ///< computation only
  uint64_t communication_ns = 0;  ///< communication only
  uint64_t memory_ns = 0;         ///< memory only
  uint64_t computation_overlapping_communication_ns = 0;
  uint64_t communication_overlapping_memory_ns = 0;
  uint64_t computation_overlapping_memory_ns = 0;
  uint64_t computation_overlapping_communication_overlapping_memory_ns = 0;  ///< all three
  uint64_t communication_total_ns = 0;   ///< |communication|
  uint64_t communication_hidden_ns = 0;  ///< |communication ∩ computation|
  std::optional<double> communication_hidden_percent;  ///< hidden / total; none without communication
};

KernelCategoryBreakdown BreakDownCategories(const CategorizedActivity& activity);

/// A step of the process: its position among the process's steps (steps.csv's `step`) and time.
struct StepWindow {
  uint64_t step = 0;
  Interval time;
};

/// Communication of one step: the NCCL kernels launched in it (launch call begin in [begin, end)).
struct StepCommunication {
  uint64_t step = 0;
  uint64_t communication_ns = 0;  ///< |union of those kernels|
  uint64_t hidden_ns = 0;         ///< ... ∩ computation (of any step: the GPU overlaps them)
  std::optional<double> hidden_percent;  ///< none without communication in the step
};

/// One entry per step of `steps` (sorted by begin): a kernel goes to the last step begun at or
/// before its launch, if that step has not ended by then (steps of different threads rarely
/// overlap; kernels launched between steps are in no step).
std::vector<StepCommunication> CommunicationPerStep(const CategorizedActivity& activity,
                                                    const std::vector<StepWindow>& steps);

/// One row of `kernel_categories`: a process with GPU activity.
struct KernelCategoryRow {
  std::string host;
  int32_t pid = 0;
  std::optional<int64_t> rank;
  KernelCategoryBreakdown breakdown;
  std::vector<StepCommunication> steps;  ///< empty without steps
};

}  // namespace trainprof::collector
