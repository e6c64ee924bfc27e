#include "collector/summary/gpu_ops.h"

#include <utility>

#include "collector/base/id_map.h"

namespace trainprof::collector {

GpuOpsSummary SummarizeGpuOps(const Process& p, const StringPool& strings) {
  GpuOpsSummary out;
  std::vector<const CudaData*> records;
  for (const TraceImage& img : p.images) records.push_back(&img.cuda);
  out.idle_kinds = IdleKindsByStream(records, kKernelWaitNs, &out.unlaunched);
  KernelLaunchSweep launches(strings);
  for (const CudaData* c : records) {  // one image's launch calls at a time
    const IdMap<LaunchCall> calls = LaunchCallsOf(*c, strings);
    launches.Add(TimeWindow{}, {c}, {&calls});
  }
  out.launches = std::move(launches).Samples();
  return out;
}

GpuOpsSweep::GpuOpsSweep(const Trace& trace) : trace_(trace) {
  idle_.reserve(trace.processes.size());
  launch_.reserve(trace.processes.size());
  for (const Process& p : trace.processes) {
    idle_.emplace_back(p.images.size());
    launch_.emplace_back(trace.strings);
  }
}

void GpuOpsSweep::Add(const TimeWindow& window, const std::vector<const CudaWindowData*>& data) {
  for (size_t p = 0; p < data.size(); ++p) {
    const CudaWindowData& d = *data[p];
    std::vector<const IdMap<uint64_t>*> call_begin;
    std::vector<IdMap<LaunchCall>> launches;
    for (size_t i = 0; i < d.images(); ++i) {
      call_begin.push_back(&d.Enter(i));
      launches.push_back(LaunchCallsOf(d.PartnerSources(i), trace_.strings));
    }
    idle_[p].Add(window, d.records(), call_begin);
    std::vector<const IdMap<LaunchCall>*> launch_of;
    for (const IdMap<LaunchCall>& l : launches) launch_of.push_back(&l);
    launch_[p].Add(window, d.records(), launch_of);
  }
}

std::vector<GpuOpsSummary> GpuOpsSweep::Summaries() && {
  std::vector<GpuOpsSummary> out(idle_.size());
  for (size_t p = 0; p < out.size(); ++p) {
    out[p].unlaunched = idle_[p].unlaunched();
    out[p].idle_kinds = std::move(idle_[p]).Rows();
    out[p].launches = std::move(launch_[p]).Samples();
  }
  return out;
}

}  // namespace trainprof::collector
