// One host's wall clock against the run's reference host (the host of the lowest rank), as
// analysis/host_clocks.h estimates it from instants the ranks share. Trace::host_clocks holds one
// per host with ranks when ranks ran on two or more hosts; the processes' start_realtime_ns are
// then on the reference's clock (AlignHostClocks).
#pragma once

#include <cstdint>
#include <string>

namespace trainprof::collector {

struct HostClock {
  std::string host;
  /// This host's CLOCK_REALTIME minus the reference's at the same instant (ns), subtracted from the
  /// wall-clock starts of its processes. 0 for the reference and for source "wall_clock".
  int64_t offset_ns = 0;
  uint64_t uncertainty_ns = 0;  ///< the median end skew of the instants used (0: reference or none)
  /// "reference", "barrier", "collective", "nccl_kernel", "init_process_group" (the shared
  /// instants used), "wall_clock" (none shared with the reference: its wall clock is taken as it is), or "unknown"
  /// (none shared, and no wall clock either: its ranks cannot be put beside the others)
  std::string source;
  /// The host's files give wall-clock starts. false (damaged headers): its monotonic clock was
  /// aligned instead, and offset_ns is that clock's minus the reference's wall clock.
  bool wall_clock = true;
  uint64_t instants = 0;  ///< shared instants the estimate used
  uint64_t ranks = 0;     ///< ranked processes on the host
};

}  // namespace trainprof::collector
