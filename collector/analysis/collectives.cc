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

CollectiveInfo AnalyzeCollectives(const Process& process, const std::vector<Interval>& steps,
                                  const StringPool& strings) {
  CollectiveInfo c;
  if (std::optional<std::string> b = DdpBackend(process)) {
    c.ddp = true;
    if (!b->empty()) c.backend = std::move(*b);
  }
  std::unordered_map<StringId, bool> nccl;  // kernel name → IsNcclKernel (demangling is slow)
  std::vector<Interval> kernels;
  bool any_nccl = false;
  for (const TraceImage& img : process.images) {
    for (const GpuKernel& k : img.cuda.kernels) {
      auto [it, inserted] = nccl.try_emplace(k.name, false);
      if (inserted) it->second = IsNcclKernel(strings.Get(k.name));
      if (!it->second) continue;
      any_nccl = true;
      if (k.end_ns > k.start_ns) kernels.push_back({k.start_ns, k.end_ns});
    }
  }
  if (any_nccl) {
    c.source = "nccl_kernels";
    std::vector<uint64_t> starts;
    for (const Interval& k : kernels) starts.push_back(k.begin);
    std::sort(starts.begin(), starts.end());
    const IntervalSet all = Union(std::move(kernels));
    uint64_t in_steps = 0, step_total = 0;
    for (const Interval& s : steps) {
      step_total += s.end - s.begin;
      in_steps += LengthWithin(all, s.begin, s.end);
      c.nccl_kernels += static_cast<uint64_t>(std::lower_bound(starts.begin(), starts.end(), s.end) -
                                              std::lower_bound(starts.begin(), starts.end(), s.begin));
    }
    if (!steps.empty()) {
      c.gpu_ns_per_step = static_cast<double>(in_steps) / static_cast<double>(steps.size());
      c.gpu_percent = Percent(static_cast<double>(in_steps), static_cast<double>(step_total));
    }
  } else if (c.ddp) {
    c.source = "unknown";
  }
  return c;
}

}  // namespace trainprof::collector
