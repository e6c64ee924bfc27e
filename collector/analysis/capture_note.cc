#include "collector/analysis/capture_note.h"

#include <algorithm>

#include "collector/base/units.h"

namespace trainprof::collector {
namespace {

constexpr size_t kIntervalsListed = 5;

const CaptureConfig* ConfigOf(const Process& p) {
  for (const TraceImage& img : p.images) {
    if (img.capture.present) return &img.capture;
  }
  return nullptr;
}

}  // namespace

bool CaptureLimited(const Process& p) { return ConfigOf(p) != nullptr; }

std::vector<CaptureInterval> CaptureIntervals(const Process& p) {
  std::vector<CaptureInterval> out;
  const CaptureConfig* cfg = ConfigOf(p);
  if (cfg == nullptr) return out;
  std::vector<CaptureEvent> events;
  for (const TraceImage& img : p.images) events.insert(events.end(), img.cuda.captures.begin(), img.cuda.captures.end());
  // Records of several threads: by time; on→on and off→off (a race between two threads noticing
  // changes at the same moment) are one change.
  std::stable_sort(events.begin(), events.end(),
                   [](const CaptureEvent& a, const CaptureEvent& b) { return a.time_ns < b.time_ns; });
  bool on = false;
  for (const CaptureEvent& e : events) {
    if (e.on && !on) out.push_back({e.time_ns, e.time_ns});
    if (!e.on && on) out.back().end_ns = e.time_ns;
    on = e.on;
  }
  if (on) {
    uint64_t end = p.end_ns;
    if (cfg->window_end_ns != 0 && cfg->window_end_ns < end) end = cfg->window_end_ns;
    out.back().end_ns = std::max(end, out.back().start_ns);
  }
  return out;
}

bool RecordedFromDelay(const Process& p) {
  const CaptureConfig* cfg = ConfigOf(p);
  return cfg != nullptr && cfg->window_start_ns > p.start_ns;
}

uint64_t RecordedTime(const Process& p) {
  if (!CaptureLimited(p)) return p.wall_ns;
  uint64_t total = 0;
  for (const CaptureInterval& i : CaptureIntervals(p)) total += i.end_ns - i.start_ns;
  return total;
}

std::optional<CaptureSummary> CaptureSummaryOf(const Process& p) {
  const CaptureConfig* cfg = ConfigOf(p);
  if (cfg == nullptr) return std::nullopt;
  CaptureSummary c;
  if (!cfg->range.empty()) c.settings = "--capture-range=" + cfg->range + " --capture-range-end=" + cfg->range_end;
  if (cfg->window_start_ns != 0 || cfg->window_end_ns != 0) {
    if (!c.settings.empty()) c.settings += ", ";
    c.settings += "--delay/--duration window";
  }
  if (cfg->range.empty() && cfg->range_end == "stop-shutdown") c.settings += " --capture-range-end=stop-shutdown";
  c.start_ns = p.start_ns;
  c.intervals = CaptureIntervals(p);
  return c;
}

std::string DescribeCapture(const CaptureSummary& c, uint64_t offset_ns) {
  auto at = [&](uint64_t t) { return "+" + FormatDuration(static_cast<double>(offset_ns + (t > c.start_ns ? t - c.start_ns : 0))); };
  const std::vector<CaptureInterval>& intervals = c.intervals;
  std::string out = "recording limited (" + c.settings + "): ";
  if (intervals.empty()) return out + "nothing captured; only definitions and process events were recorded";
  uint64_t total = 0;
  for (const CaptureInterval& i : intervals) total += i.end_ns - i.start_ns;
  out += std::to_string(intervals.size()) + (intervals.size() == 1 ? " interval" : " intervals") + " captured, " +
         FormatDuration(static_cast<double>(total)) + " in all: ";
  for (size_t k = 0; k < intervals.size() && k < kIntervalsListed; ++k) {
    out += (k > 0 ? ", " : "") + at(intervals[k].start_ns) + " to " + at(intervals[k].end_ns);
  }
  if (intervals.size() > kIntervalsListed) out += ", and " + std::to_string(intervals.size() - kIntervalsListed) + " more";
  return out;
}

std::string DescribeCapture(const Process& p, uint64_t offset_ns) {
  const std::optional<CaptureSummary> c = CaptureSummaryOf(p);
  return c ? DescribeCapture(*c, offset_ns) : "";
}

}  // namespace trainprof::collector
