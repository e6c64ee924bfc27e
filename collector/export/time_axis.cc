#include "collector/export/time_axis.h"

#include <map>
#include <string>
#include <utility>

namespace trainprof::collector {

TimeAxis MakeTimeAxis(const Trace& trace) {
  // Each host's monotonic clock mapped onto realtime by its earliest process.
  std::map<std::string, std::pair<uint64_t, int64_t>> earliest;  // host -> (start_ns, realtime - monotonic)
  for (const Process& p : trace.processes) {
    const int64_t offset = RealtimeOffset(p.start_realtime_ns, p.start_ns);
    auto [it, fresh] = earliest.emplace(p.host, std::make_pair(p.start_ns, offset));
    if (!fresh && p.start_ns < it->second.first) it->second = {p.start_ns, offset};
  }
  TimeAxis axis;
  uint64_t zero = UINT64_MAX;
  for (const Process& p : trace.processes) {
    const int64_t r = ShiftedTime(p.start_ns, earliest[p.host].second);
    if (r >= 0 && static_cast<uint64_t>(r) < zero) zero = static_cast<uint64_t>(r);
  }
  axis.zero = zero == UINT64_MAX ? 0 : zero;
  axis.clocks.reserve(trace.processes.size());
  for (const Process& p : trace.processes) axis.clocks.push_back({earliest[p.host].second, axis.zero});
  return axis;
}

}  // namespace trainprof::collector
