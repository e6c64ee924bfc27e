// Every host on one clock: each host's wall clock (CLOCK_REALTIME, through which the processes of
// several hosts share one time axis) estimated against the reference host's (the host of the
// lowest rank) from instants that the ranks of both hosts share, so that a host whose clock is off
// (no NTP, a drifting VM) does not make its ranks look early or late. Nsight Systems and HTA put
// hosts on one axis by their wall clocks alone.
//
// Shared instants, in order of preference (the first kind the two hosts share is used):
//   barrier            the end of each torch.distributed.barrier() (the shim's collective ranges
//                      named "barrier"): every rank leaves it once the last one arrived
//   collective         the end of each blocking collective (all_reduce, all_gather, ...) of ranks
//                      without GPU activity (gloo on CPU: the call returns when the collective is
//                      done; with NCCL it returns once the work is queued, so those are not used)
//   nccl_kernel        the end of each NCCL kernel on the GPU (base/kernel_names.h IsNcclKernel):
//                      a collective's kernel ends on every rank of it together, its last step
//                      waiting for all of them (its start does not: a rank early for it waits
//                      inside). On the host's monotonic clock, as CUPTI's timestamps are put
//                      (docs/trace-format.md). Ranks of several communicators (tensor and data
//                      parallel groups) may pair one group's k-th kernel with another's: the
//                      instants' spread, the uncertainty, then says how well it went.
//   init_process_group the end of init_process_group (its rendezvous: the ranks join together)
// The k-th instant of a name is matched across ranks by its order on the rank (the k-th barrier
// of every rank is one barrier; the k-th ncclDevKernel_AllReduce_Sum_f32_RING_LL one all-reduce;
// the reader keeps the first model/cuda_model.h kMaxNcclEndsPerName of each kernel name). A
// pairing that slips (pipeline-parallel send/recv kernels that differ per rank, one rank's GPU
// record lost) shows as a larger uncertainty, not as a wrong offset said to be exact. For each
// matched instant k both hosts have, d_k = (median end on the host) − (median end on the
// reference), each on its own wall clock; the host's offset is the median of the d_k, and its
// uncertainty the median over the instants of their spread (last − first end across the ranks of
// both hosts, once aligned): the collective's own end skew, the floor of an estimate from it. A host without a shared instant keeps its wall clock
// (source "wall_clock"), and the report says so.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collector/analysis/training_steps.h"
#include "collector/model/model.h"

namespace trainprof::collector {

/// One instant a ranked process shares with the ranks of other hosts (see the file comment).
struct SharedInstant {
  enum class Kind : uint8_t { kBarrier, kCollective, kNcclKernel, kInitProcessGroup };
  uint64_t end_ns = 0;  ///< CLOCK_MONOTONIC of the process
  Kind kind = Kind::kBarrier;
  StringId name = 0;  ///< the collective's or NCCL kernel's name (0 for init_process_group)
  bool operator==(const SharedInstant&) const = default;
};
inline constexpr size_t kSharedInstantKinds = 4;
/// "barrier", "collective", "nccl_kernel", "init_process_group".
const char* SharedInstantKindName(SharedInstant::Kind kind);

/// The shared instants of `p` (its phases `phases`; names in `strings`), in time order: the ends of
/// its barriers, of its blocking collectives where it has no GPU activity (gloo), of its NCCL
/// kernels and of its init_process_group. Empty for a process without a rank. What a summary
/// keeps of it for the merge (summary/process_summary.h ProcessPlace).
std::vector<SharedInstant> SharedInstantsOf(const Process& p, const ProcessPhases& phases, const StringPool& strings);

/// One process as the estimate reads it.
struct ClockInput {
  std::string_view host;
  std::optional<int64_t> rank;
  uint64_t start_realtime_ns = 0;  ///< its file's wall-clock start (0: unknown), not yet aligned
  uint64_t start_ns = 0;           ///< CLOCK_MONOTONIC
  const std::vector<SharedInstant>* instants = nullptr;
};

/// The hosts' clocks and every process's wall-clock start on the reference's clock.
struct HostClockEstimate {
  std::vector<HostClock> clocks;  ///< by host name; empty unless ranks ran on two or more hosts
  std::string reference;          ///< the host of the lowest rank ("" without clocks)
  std::vector<uint64_t> start_realtime_ns;  ///< per input process: its start, aligned where its host was
};

/// Estimates the hosts' clocks from the processes' shared instants (see the file comment); the
/// names of their instants are ids of one pool. The same estimate whatever the processes' order.
HostClockEstimate EstimateHostClocks(const std::vector<ClockInput>& processes);

/// Estimates the hosts' clocks of `trace` (see the file comment), puts them in trace->host_clocks
/// and trace->clock_reference, and moves the wall-clock start (Process::start_realtime_ns) of each
/// host's processes onto the reference's clock; each TraceImage keeps its header's (what a second
/// read of the file checks). Nothing changes unless
/// ranked processes ran on two or more hosts. Call once, after reading, before the report or
/// the export's time axis.
void AlignHostClocks(Trace* trace);

}  // namespace trainprof::collector
