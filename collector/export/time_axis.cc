#include "collector/export/time_axis.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace trainprof::collector {

TimeAxis MakeTimeAxis(const Trace& trace) {
  // Each host's monotonic clock mapped onto realtime by its earliest process with a known wall-clock
  // start (0: a damaged header, the reader said so).
  struct Host {
    uint64_t earliest = UINT64_MAX;  // the earliest process start (monotonic ns)
    uint64_t known_start = UINT64_MAX;
    int64_t offset = 0;  // realtime - monotonic
    bool known = false;
  };
  std::map<std::string, Host> hosts;
  for (const Process& p : trace.processes) {
    Host& h = hosts[p.host];
    h.earliest = std::min(h.earliest, p.start_ns);
    if (p.start_realtime_ns != 0 && p.start_ns < h.known_start) {
      h.known_start = p.start_ns;
      h.offset = RealtimeOffset(p.start_realtime_ns, p.start_ns);
      h.known = true;
    }
  }
  TimeAxis axis;
  uint64_t zero = UINT64_MAX;
  for (const Process& p : trace.processes) {
    const Host& h = hosts[p.host];
    if (!h.known) continue;
    const int64_t r = ShiftedTime(p.start_ns, h.offset);
    if (r >= 0 && static_cast<uint64_t>(r) < zero) zero = static_cast<uint64_t>(r);
  }
  axis.zero = zero == UINT64_MAX ? 0 : zero;
  // A host whose wall clock no header gives starts at the axis' 0.
  for (auto& [name, h] : hosts) {
    if (!h.known) h.offset = RealtimeOffset(axis.zero, h.earliest);  // its earliest start at the axis' 0
  }
  axis.clocks.reserve(trace.processes.size());
  for (const Process& p : trace.processes) axis.clocks.push_back({hosts[p.host].offset, axis.zero});
  return axis;
}

}  // namespace trainprof::collector
