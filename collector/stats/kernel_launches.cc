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

struct Call {
  uint64_t begin = 0, end = 0;
};

struct Samples {
  std::string name;
  std::vector<uint64_t> cpu, delay;
  uint64_t shorter = 0, long_launches = 0, long_delays = 0;
};

// (0 kernel / 1 memory, recorded name or label): kernels and memory operations never share a row.
using Key = std::pair<int, std::string>;

void Add(const Call& call, uint64_t start, uint64_t end, Samples* s) {
  const uint64_t cpu = call.end - call.begin;
  const uint64_t delay = start > call.end ? start - call.end : 0;
  s->cpu.push_back(cpu);
  s->delay.push_back(delay);
  if (cpu <= kLaunchRuntimeCutoffNs && end - start < cpu) ++s->shorter;
  if (cpu > kLaunchRuntimeCutoffNs) ++s->long_launches;
  if (delay > kLaunchDelayCutoffNs) ++s->long_delays;
}

KernelLaunchRow RowOf(Samples* s) {
  KernelLaunchRow r;
  r.name = std::move(s->name);
  const SampleStats cpu = SummarizeSample(&s->cpu);
  const SampleStats delay = SummarizeSample(&s->delay);
  r.count = cpu.count;
  r.cpu_launch_mean_ns = cpu.mean;
  r.cpu_launch_median_ns = cpu.median;
  r.launch_delay_mean_ns = delay.mean;
  r.launch_delay_median_ns = delay.median;
  r.launch_delay_p95_ns = Quantile(&s->delay, 0.95);
  r.shorter_than_launch = s->shorter;
  r.long_launches = s->long_launches;
  r.long_delays = s->long_delays;
  return r;
}

}  // namespace

KernelLaunches AnalyzeKernelLaunches(const std::vector<const CudaData*>& images, const StringPool& strings,
                                     bool full_names, size_t top) {
  std::map<Key, Samples> by_name;
  // The rows by what a GPU record carries (a node-based map: a row never moves), so that a record
  // costs no name string and no look-up by string.
  std::unordered_map<StringId, Samples*> by_kernel;
  std::map<format::MemcpyKind, Samples*> by_copy;
  auto kernel_row = [&](StringId name) -> Samples& {
    auto [it, fresh] = by_kernel.try_emplace(name, nullptr);
    if (fresh) it->second = &by_name[{0, std::string(strings.Get(name))}];
    return *it->second;
  };
  auto copy_row = [&](format::MemcpyKind kind) -> Samples& {
    auto [it, fresh] = by_copy.try_emplace(kind, nullptr);
    if (fresh) it->second = &by_name[{1, "memcpy " + MemcpyKindName(kind)}];
    return *it->second;
  };
  Samples* memsets = nullptr;
  for (const CudaData* c : images) {
    std::unordered_map<StringId, bool> is_launch;  // call name → a launch call
    auto launches = [&](const CudaCall& call) {
      if (!call.returned || call.correlation == 0) return false;
      auto [it, fresh] = is_launch.try_emplace(call.name, false);
      if (fresh) it->second = IsLaunchCall(CudaApiDisplayName(strings.Get(call.name)));
      return it->second;
    };
    IdSpan span;
    for (const CudaCall& call : c->calls) {
      if (launches(call)) span.Add(call.correlation);
    }
    IdMap<Call> launch_of(span);  // correlation → its launch call
    for (const CudaCall& call : c->calls) {
      if (launches(call)) launch_of.Emplace(call.correlation, Call{call.begin_ns, call.end_ns});
    }
    if (launch_of.empty()) continue;
    for (const GpuKernel& k : c->kernels) {
      const Call* call = launch_of.Find(k.correlation);
      if (call == nullptr) continue;
      Add(*call, k.start_ns, k.end_ns, &kernel_row(k.name));
    }
    for (const GpuMemcpy& m : c->memcpys) {
      const Call* call = launch_of.Find(m.correlation);
      if (call == nullptr) continue;
      Add(*call, m.start_ns, m.end_ns, &copy_row(m.kind));
    }
    for (const GpuMemset& m : c->memsets) {
      const Call* call = launch_of.Find(m.correlation);
      if (call == nullptr) continue;
      if (memsets == nullptr) memsets = &by_name[{1, "memset"}];
      Add(*call, m.start_ns, m.end_ns, memsets);
    }
  }
  // Kernels by the kernel table's display names: where two shorten to one name, its numbered ones
  // ("gemm<...> #1"), so that a row here names the same kernel as the row there.
  std::unordered_map<std::string, int> display_count;
  for (auto& [key, s] : by_name) {
    if (key.first != 0) continue;
    s.name = key.second.empty() ? "<unnamed>" : KernelDisplayName(key.second, full_names);
    ++display_count[s.name];
  }
  if (std::any_of(display_count.begin(), display_count.end(), [](const auto& e) { return e.second > 1; })) {
    std::unordered_map<std::string, std::string> numbered;  // mangled → display name
    std::vector<CudaDigest> digests;  // the kernel table's numbering needs its order (by total time)
    for (const CudaData* c : images) digests.push_back(DigestOf(*c));
    std::vector<const CudaDigest*> of;
    for (const CudaDigest& d : digests) of.push_back(&d);
    for (KernelRow& row : KernelTable(of, strings, full_names)) numbered[row.mangled] = std::move(row.name);
    for (auto& [key, s] : by_name) {
      if (key.first == 0) s.name = numbered[key.second];
    }
  }
  KernelLaunches out;
  out.rows.reserve(by_name.size());
  for (auto& [key, s] : by_name) {
    if (key.first != 0) s.name = key.second;
    out.rows.push_back(RowOf(&s));
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

}  // namespace trainprof::collector
