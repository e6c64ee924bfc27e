#include "collector/stats/gpu_tracing.h"

#include <algorithm>

#include "collector/model/cuda_calls.h"

namespace trainprof::collector {

GpuTracing GpuTracingOf(const Process& process, const StringPool& strings, const std::vector<CudaDigest>* digests) {
  GpuTracing g;
  for (size_t k = 0; k < process.images.size(); ++k) {
    const TraceImage& img = process.images[k];
    const CudaData& c = img.cuda;
    g.any = g.any || c.any();
    g.records_dropped += c.records_dropped;
    g.invalid_timestamps += c.invalid_timestamps;
    g.unmatched_exits += c.unmatched_exits;
    const CudaDigest& d = digests != nullptr && k < digests->size() ? (*digests)[k] : img.cuda_digest;
    g.calls += d.calls();
    // Names of unfinished calls in the order of their first unfinished call (ties: the digest's
    // row order, by name id).
    std::vector<const CudaApiSamples*> unfinished;
    for (const CudaApiSamples& row : d.api()) {
      g.api_errors += row.errors;
      g.lost_exits += row.exit_lost;
      if (row.unfinished == 0) continue;
      g.unfinished_calls += row.unfinished;
      unfinished.push_back(&row);
    }
    std::stable_sort(unfinished.begin(), unfinished.end(), [](const CudaApiSamples* a, const CudaApiSamples* b) {
      return a->first_unfinished_ns < b->first_unfinished_ns;
    });
    for (const CudaApiSamples* row : unfinished) {
      std::string name = row->name == 0 ? "<unnamed>" : CudaApiDisplayName(strings.Get(row->name));
      if (std::find(g.unfinished_names.begin(), g.unfinished_names.end(), name) == g.unfinished_names.end()) {
        g.unfinished_names.push_back(std::move(name));
      }
    }
    g.overhead_ns += d.overhead_ns();
    for (const CaptureEvent& e : c.captures) g.capture_pauses += e.on ? 0 : 1;
    for (const GpuStatusEvent& s : c.status) {
      if (s.cupti_version != 0) g.cupti_version = s.cupti_version;
      if (s.driver_version != 0) g.driver_version = s.driver_version;
      switch (s.state) {
        case format::GpuState::kUnavailable:
          g.state = "unavailable";
          g.cupti_result = s.cupti_result;
          g.message = std::string(strings.Get(s.message));
          break;
        case format::GpuState::kOn:
          if (g.state != "unavailable") g.state = "on";
          break;
        case format::GpuState::kFlushed:
          g.flushed = true;
          if (g.state == "none") g.state = "on";
          break;
        default:
          if (g.state == "none") g.state = "state " + std::to_string(s.raw_state);
          break;
      }
    }
  }
  return g;
}

}  // namespace trainprof::collector
