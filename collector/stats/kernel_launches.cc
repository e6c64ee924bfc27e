#include "collector/stats/kernel_launches.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "collector/base/kernel_names.h"
#include "collector/base/sample_stats.h"
#include "collector/model/cuda_calls.h"
#include "collector/stats/gpu_kernel_stats.h"

namespace trainprof::collector {
namespace {

// HTA's launch calls (cuda_kernel_analysis.py: cudaLaunchKernel, cudaLaunchKernelExC, and with
// include_memory_events cudaMemcpyAsync, cudaMemsetAsync), by display name.
bool IsLaunchCall(std::string_view name) {
  return name == "cudaLaunchKernel" || name == "cudaLaunchKernelExC" || name == "cudaMemcpyAsync" ||
         name == "cudaMemsetAsync";
}

void AddSample(const LaunchCall& call, uint64_t start, uint64_t end, LaunchSamples* s) {
  const uint64_t cpu = call.end - call.begin;
  const uint64_t delay = start > call.end ? start - call.end : 0;
  s->cpu.Add(cpu);
  s->delay.Add(delay);
  if (cpu <= kLaunchRuntimeCutoffNs && end - start < cpu) ++s->shorter;
  if (cpu > kLaunchRuntimeCutoffNs) ++s->long_launches;
  if (delay > kLaunchDelayCutoffNs) ++s->long_delays;
}

KernelLaunchRow RowOf(std::string name, const LaunchSamples* s) {
  KernelLaunchRow r;
  r.name = std::move(name);
  const SampleStats cpu = s->cpu.Stats();
  const SampleStats delay = s->delay.Stats();
  r.count = cpu.count;
  r.cpu_launch_mean_ns = cpu.mean;
  r.cpu_launch_median_ns = cpu.median;
  r.launch_delay_mean_ns = delay.mean;
  r.launch_delay_median_ns = delay.median;
  r.launch_delay_p95_ns = s->delay.Quantile(0.95);
  r.exact = cpu.exact && delay.exact;
  r.shorter_than_launch = s->shorter;
  r.long_launches = s->long_launches;
  r.long_delays = s->long_delays;
  return r;
}

}  // namespace

IdMap<LaunchCall> LaunchCallsOf(const CudaData& data, const StringPool& strings) {
  return LaunchCallsOf(std::vector{&data}, strings);
}

IdMap<LaunchCall> LaunchCallsOf(const std::vector<const CudaData*>& sources, const StringPool& strings) {
  std::unordered_map<StringId, bool> is_launch;  // call name → a launch call
  auto launches = [&](const CudaCall& call) {
    if (!call.returned || call.correlation == 0) return false;
    auto [it, fresh] = is_launch.try_emplace(call.name, false);
    if (fresh) it->second = IsLaunchCall(CudaApiDisplayName(strings.Get(call.name)));
    return it->second;
  };
  IdSpan span;
  for (const CudaData* data : sources) {
    for (const CudaCall& call : data->calls) {
      if (launches(call)) span.Add(call.correlation);
    }
  }
  IdMap<LaunchCall> out(span);
  for (const CudaData* data : sources) {
    for (const CudaCall& call : data->calls) {
      if (launches(call)) out.Emplace(call.correlation, LaunchCall{call.begin_ns, call.end_ns});
    }
  }
  return out;
}

KernelLaunchSweep::KernelLaunchSweep(const StringPool& strings) : strings_(strings) {}

LaunchSamples& KernelLaunchSweep::RowOfKernel(StringId name) {
  auto [it, fresh] = by_kernel_.try_emplace(name, nullptr);
  if (fresh) {
    const std::string recorded(strings_.Get(name));
    it->second = &by_name_[{0, recorded}];
    it->second->name = recorded;
  }
  return *it->second;
}

LaunchSamples& KernelLaunchSweep::RowOfCopy(format::MemcpyKind kind) {
  auto [it, fresh] = by_copy_.try_emplace(kind, nullptr);
  if (fresh) {
    const std::string label = "memcpy " + MemcpyKindName(kind);
    it->second = &by_name_[{1, label}];
    it->second->memory = true;
    it->second->name = label;
  }
  return *it->second;
}

void KernelLaunchSweep::Add(const TimeWindow& w, const std::vector<const CudaData*>& images,
                            const std::vector<const IdMap<LaunchCall>*>& launches) {
  for (size_t i = 0; i < images.size(); ++i) {
    const IdMap<LaunchCall>& launch_of = *launches[i];
    if (launch_of.empty()) continue;
    const CudaData& c = *images[i];
    for (const GpuKernel& k : c.kernels) {
      const LaunchCall* call = w.Owns(k.start_ns) ? launch_of.Find(k.correlation) : nullptr;
      if (call != nullptr) AddSample(*call, k.start_ns, k.end_ns, &RowOfKernel(k.name));
    }
    for (const GpuMemcpy& m : c.memcpys) {
      const LaunchCall* call = w.Owns(m.start_ns) ? launch_of.Find(m.correlation) : nullptr;
      if (call != nullptr) AddSample(*call, m.start_ns, m.end_ns, &RowOfCopy(m.kind));
    }
    for (const GpuMemset& m : c.memsets) {
      const LaunchCall* call = w.Owns(m.start_ns) ? launch_of.Find(m.correlation) : nullptr;
      if (call == nullptr) continue;
      if (memsets_ == nullptr) {
        memsets_ = &by_name_[{1, "memset"}];
        memsets_->memory = true;
        memsets_->name = "memset";
      }
      AddSample(*call, m.start_ns, m.end_ns, memsets_);
    }
  }
}

std::vector<LaunchSamples> KernelLaunchSweep::Samples() && {
  std::vector<LaunchSamples> out;
  out.reserve(by_name_.size());
  for (auto& [key, s] : by_name_) out.push_back(std::move(s));
  return out;
}

KernelLaunches KernelLaunchSweep::Rows(const std::function<std::vector<const CudaDigest*>()>& digests, bool full_names,
                                       size_t top) && {
  const std::vector<LaunchSamples> own = std::move(*this).Samples();
  return KernelLaunchRows({&own}, digests, strings_, full_names, top);
}

KernelLaunches KernelLaunchRows(const std::vector<const std::vector<LaunchSamples>*>& processes,
                                const std::function<std::vector<const CudaDigest*>()>& digests,
                                const StringPool& strings, bool full_names, size_t top) {
  // (0 kernel / 1 memory, recorded name or label) → the samples of every process added, and the
  // row's name.
  std::map<std::pair<int, std::string>, std::pair<LaunchSamples, std::string>> by_name;
  for (const std::vector<LaunchSamples>* samples : processes) {
    for (const LaunchSamples& s : *samples) {
      auto [it, fresh] = by_name.try_emplace({s.memory ? 1 : 0, s.name});
      LaunchSamples& sum = it->second.first;
      if (fresh) {
        sum = s;
        continue;
      }
      sum.cpu.Merge(s.cpu);
      sum.delay.Merge(s.delay);
      sum.shorter += s.shorter;
      sum.long_launches += s.long_launches;
      sum.long_delays += s.long_delays;
    }
  }
  // Kernels by the kernel table's display names: where two shorten to one name, its numbered ones
  // ("gemm<...> #1"), so that a row here names the same kernel as the row there.
  std::unordered_map<std::string, int> display_count;
  for (auto& [key, entry] : by_name) {
    if (key.first != 0) continue;
    entry.second = key.second.empty() ? "<unnamed>" : KernelDisplayName(key.second, full_names);
    ++display_count[entry.second];
  }
  if (std::any_of(display_count.begin(), display_count.end(), [](const auto& e) { return e.second > 1; })) {
    std::unordered_map<std::string, std::string> numbered;  // mangled → display name
    for (KernelRow& row : KernelTable(digests(), strings, full_names)) numbered[row.mangled] = std::move(row.name);
    for (auto& [key, entry] : by_name) {
      if (key.first == 0) entry.second = numbered[key.second];
    }
  }
  KernelLaunches out;
  out.rows.reserve(by_name.size());
  for (auto& [key, entry] : by_name) {
    out.rows.push_back(RowOf(key.first != 0 ? key.second : std::move(entry.second), &entry.first));
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const KernelLaunchRow& a, const KernelLaunchRow& b) {
    return a.count != b.count ? a.count > b.count : a.name < b.name;
  });
  if (top != 0 && out.rows.size() > top) {
    out.omitted = out.rows.size() - top;
    out.rows.resize(top);
  }
  return out;
}

KernelLaunches AnalyzeKernelLaunches(const std::vector<const CudaData*>& images, const StringPool& strings,
                                     bool full_names, size_t top) {
  KernelLaunchSweep sweep(strings);
  for (const CudaData* c : images) {  // one image's launch calls at a time
    const IdMap<LaunchCall> launches = LaunchCallsOf(*c, strings);
    sweep.Add(TimeWindow{}, {c}, {&launches});
  }
  std::vector<CudaDigest> digests;  // the kernel table's numbering needs its order (by total time)
  return std::move(sweep).Rows(
      [&] {
        std::vector<const CudaDigest*> of;
        for (const CudaData* c : images) digests.push_back(DigestOf(*c));
        for (const CudaDigest& d : digests) of.push_back(&d);
        return of;
      },
      full_names, top);
}

}  // namespace trainprof::collector
