#include "collector/analysis/collectives.h"

#include <algorithm>
#include <unordered_map>

#include "collector/base/sample_stats.h"

namespace trainprof::collector {

std::optional<std::string> DdpBackend(const Process& process) {
  std::optional<std::string> backend;
  for (const TraceImage& img : process.images) {
    if (const std::string* v = img.Env(kDdpVariable)) backend = *v;  // the last image's wins
  }
  return backend;
}

CollectivesSweep::CollectivesSweep(const std::vector<Interval>& steps, const StringPool& strings)
    : steps_(steps), strings_(strings) {}

void CollectivesSweep::Add(const TimeWindow& w, const std::vector<const CudaData*>& records) {
  std::vector<Interval> kernels;  // clipped to the window
  std::vector<uint64_t> starts;   // of the ones it owns
  for (const CudaData* c : records) {
    for (const GpuKernel& k : c->kernels) {
      auto [it, inserted] = nccl_.try_emplace(k.name, false);
      if (inserted) it->second = IsNcclKernel(strings_.Get(k.name));
      if (!it->second) continue;
      const bool owned = w.Owns(k.start_ns);
      nccl_in_steps_.any = nccl_in_steps_.any || owned;
      if (k.end_ns <= k.start_ns) continue;
      kernels.push_back(w.Clip(k.start_ns, k.end_ns));
      if (owned) starts.push_back(k.start_ns);
    }
  }
  if (kernels.empty()) return;
  std::sort(starts.begin(), starts.end());
  const IntervalSet all = Union(std::move(kernels));
  for (const Interval& s : steps_) {
    nccl_in_steps_.in_steps_ns += LengthWithin(all, s.begin, s.end);
    nccl_in_steps_.kernels += static_cast<uint64_t>(std::lower_bound(starts.begin(), starts.end(), s.end) -
                                           std::lower_bound(starts.begin(), starts.end(), s.begin));
  }
}

CollectiveInfo CollectivesSweep::Result(const std::optional<std::string>& ddp_backend) && {
  return CollectiveInfoOf(nccl_in_steps_, steps_, ddp_backend);
}

CollectiveInfo CollectiveInfoOf(const NcclInSteps& nccl, const std::vector<Interval>& steps,
                                const std::optional<std::string>& ddp_backend) {
  CollectiveInfo c;
  if (ddp_backend) {
    c.ddp = true;
    if (!ddp_backend->empty()) c.backend = *ddp_backend;
  }
  if (nccl.any) {
    c.source = "nccl_kernels";
    c.nccl_kernels = nccl.kernels;
    uint64_t step_total = 0;
    for (const Interval& s : steps) step_total += s.end - s.begin;
    if (!steps.empty()) {
      c.gpu_ns_per_step = static_cast<double>(nccl.in_steps_ns) / static_cast<double>(steps.size());
      c.gpu_percent = Percent(static_cast<double>(nccl.in_steps_ns), static_cast<double>(step_total));
    }
  } else if (c.ddp) {
    c.source = "unknown";
  }
  return c;
}

CollectiveInfo AnalyzeCollectives(const Process& process, const std::vector<Interval>& steps,
                                  const StringPool& strings) {
  std::vector<const CudaData*> records;
  for (const TraceImage& img : process.images) records.push_back(&img.cuda);
  CollectivesSweep sweep(steps, strings);
  sweep.Add(TimeWindow{}, records);
  return std::move(sweep).Result(DdpBackend(process));
}

}  // namespace trainprof::collector
