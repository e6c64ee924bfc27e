// Where a training process's collective time comes from (docs/analysis.md, "Collectives").
//
//   source          what the Collective part of the step is
//   python          the torch.distributed calls of the script (dist.all_reduce, ...), recorded by
//                   the Python shim as kCollective ranges: the whole collective time of a process
//                   without DistributedDataParallel
//   nccl_kernels    the process ran NCCL kernels (kernel records IsNcclKernel takes: ^nccl.*Kernel): the GPU time
//                   of its collectives, DDP's gradient all-reduce included (gpu_ns_per_step)
//   unknown         the process uses DistributedDataParallel without NCCL kernels recorded: DDP's
//                   gradient all-reduce runs inside backward, where nothing affordable observes it
//                   on PyTorch 1.13/2.x CPU builds, so its time is in the backward part
//
// DDP use is the TRAINPROF_DDP=<backend> variable the shim records when the process constructs a
// torch.nn.parallel.DistributedDataParallel (docs/trace-format.md, "Training phases").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collector/base/intervals.h"
#include "collector/base/kernel_names.h"  // IsNcclKernel
#include "collector/model/cuda_window.h"
#include "collector/model/model.h"

namespace trainprof::collector {

/// The process-env variable the shim records for a process that uses DistributedDataParallel.
inline constexpr std::string_view kDdpVariable = "TRAINPROF_DDP";

/// The backend DDP runs on ("gloo", "nccl", ...; "" when the shim could not tell), or none when the
/// process never constructed a DistributedDataParallel.
std::optional<std::string> DdpBackend(const Process& process);

struct CollectiveInfo {
  std::string source = "python";      ///< "python", "nccl_kernels", "unknown"
  bool ddp = false;                   ///< the process constructed a DistributedDataParallel
  std::optional<std::string> backend; ///< DDP's backend, when ddp and known
  uint64_t nccl_kernels = 0;          ///< NCCL kernels that begin in the steps of the statistics
  std::optional<double> gpu_ns_per_step;  ///< nccl_kernels: mean union of NCCL kernel time per step
  std::optional<double> gpu_percent;      ///< ... as a share of the summed step time
  bool known() const { return source != "unknown"; }
};

/// The NCCL kernels of a process over its steps in the statistics (CollectivesSweep): what its
/// summary keeps of them.
struct NcclInSteps {
  bool any = false;          ///< some NCCL kernel at all (in the steps or not)
  uint64_t kernels = 0;      ///< NCCL kernels that begin in the steps
  uint64_t in_steps_ns = 0;  ///< |union of NCCL kernels ∩ the steps|
};

/// The collective source of a process whose DDP backend is `ddp_backend` (DdpBackend: from its
/// environment; nullopt without DDP), from its NCCL kernels over `steps` (the steps in the
/// statistics).
CollectiveInfo CollectiveInfoOf(const NcclInSteps& nccl, const std::vector<Interval>& steps,
                                const std::optional<std::string>& ddp_backend);

/// The collective source of `process`; `steps`: the steps in the statistics (disjoint, by begin).
/// AnalyzeCollectives made window by window (model/cuda_window.h): each window's NCCL kernels
/// clipped to it (their union inside the steps adds up), those it owns counted by the steps their
/// start lies in. Any cut into windows gives what one window gives.
class CollectivesSweep {
 public:
  /// `steps`: the steps of the statistics (kept until Result); `strings` holds the kernel names.
  CollectivesSweep(const std::vector<Interval>& steps, const StringPool& strings);

  /// One window; `records[i]`: the records of the process's image i that the window owns or overlaps.
  void Add(const TimeWindow& window, const std::vector<const CudaData*>& records);

  /// The collectives of a process whose DDP backend is `ddp_backend` (DdpBackend: from its
  /// environment; nullopt without DDP), the kernels from the windows.
  CollectiveInfo Result(const std::optional<std::string>& ddp_backend) &&;
  /// What the windows held of NCCL kernels.
  const NcclInSteps& nccl() const { return nccl_in_steps_; }

 private:
  const std::vector<Interval>& steps_;
  const StringPool& strings_;
  std::unordered_map<StringId, bool> nccl_;  // kernel name → IsNcclKernel (demangling is slow)
  NcclInSteps nccl_in_steps_;
};

CollectiveInfo AnalyzeCollectives(const Process& process, const std::vector<Interval>& steps,
                                  const StringPool& strings);

}  // namespace trainprof::collector
