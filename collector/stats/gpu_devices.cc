#include "collector/stats/gpu_devices.h"

#include <algorithm>
#include <map>

#include "collector/base/sample_stats.h"
#include "collector/model/cuda_calls.h"

namespace trainprof::collector {
namespace {

struct DeviceSamples {
  std::string name;
  std::vector<Interval> activity;
  std::vector<Interval> lifetimes;
  std::vector<uint64_t> latencies;
  uint32_t processes = 0;
  uint64_t kernels = 0, kernel_ns = 0, memcpys = 0, memsets = 0, memory_ns = 0;
};

// The samples of each device of one process.
std::map<uint32_t, DeviceSamples> Collect(const Process& p, const StringPool& strings) {
  std::map<uint32_t, DeviceSamples> out;
  {  // each device's activity sized once: the vectors hold an interval per GPU record
    std::map<uint32_t, std::pair<size_t, size_t>> records;  // device → (GPU records, kernels)
    for (const TraceImage& img : p.images) {
      for (const GpuKernel& k : img.cuda.kernels) ++records[k.device].first, ++records[k.device].second;
      for (const GpuMemcpy& m : img.cuda.memcpys) ++records[m.device].first;
      for (const GpuMemset& m : img.cuda.memsets) ++records[m.device].first;
    }
    for (const auto& [device, n] : records) {
      out[device].activity.reserve(n.first);
      out[device].latencies.reserve(n.second);
    }
  }
  for (const TraceImage& img : p.images) {
    const CudaData& c = img.cuda;
    const IdMap<uint64_t> enter_of = EnterByCorrelation(c, /*skip_zero=*/false);
    for (const GpuKernel& k : c.kernels) {
      DeviceSamples& d = out[k.device];
      d.activity.push_back({k.start_ns, k.end_ns});
      ++d.kernels;
      d.kernel_ns += k.duration();
      const uint64_t* enter = enter_of.Find(k.correlation);
      if (enter != nullptr && k.start_ns >= *enter) d.latencies.push_back(k.start_ns - *enter);
    }
    for (const GpuMemcpy& m : c.memcpys) {
      DeviceSamples& d = out[m.device];
      d.activity.push_back({m.start_ns, m.end_ns});
      ++d.memcpys;
      d.memory_ns += m.duration();
    }
    for (const GpuMemset& m : c.memsets) {
      DeviceSamples& d = out[m.device];
      d.activity.push_back({m.start_ns, m.end_ns});
      ++d.memsets;
      d.memory_ns += m.duration();
    }
    for (const GpuDevice& dev : c.devices) {
      auto it = out.find(dev.id);
      if (it != out.end() && it->second.name.empty()) it->second.name = std::string(strings.Get(dev.name));
    }
  }
  for (auto& [id, d] : out) {
    d.processes = 1;
    d.lifetimes.push_back({p.start_ns, p.end_ns});
  }
  return out;
}

void MergeInto(DeviceSamples* to, DeviceSamples&& from) {
  if (to->name.empty()) to->name = std::move(from.name);
  to->activity.insert(to->activity.end(), from.activity.begin(), from.activity.end());
  to->lifetimes.insert(to->lifetimes.end(), from.lifetimes.begin(), from.lifetimes.end());
  to->latencies.insert(to->latencies.end(), from.latencies.begin(), from.latencies.end());
  to->processes += from.processes;
  to->kernels += from.kernels;
  to->kernel_ns += from.kernel_ns;
  to->memcpys += from.memcpys;
  to->memsets += from.memsets;
  to->memory_ns += from.memory_ns;
}

DeviceRow Summarize(uint32_t device, DeviceSamples&& d) {
  DeviceRow row;
  row.device = device;
  row.name = std::move(d.name);
  row.processes = d.processes;
  row.kernels = d.kernels;
  row.kernel_ns = d.kernel_ns;
  row.memcpys = d.memcpys;
  row.memsets = d.memsets;
  row.memory_ns = d.memory_ns;
  const IntervalSet busy = Union(std::move(d.activity));
  const IntervalSet life = Union(std::move(d.lifetimes));
  row.lifetime_ns = Length(life);
  row.busy_ns = Length(Intersect(busy, life));
  if (row.lifetime_ns > 0) row.busy_percent = Percent(row.busy_ns, row.lifetime_ns);
  if (!busy.empty()) {
    row.active_begin_ns = busy.front().begin;
    row.active_end_ns = busy.back().end;
    if (row.active_end_ns > row.active_begin_ns) {
      row.active_busy_percent = Percent(Length(busy), row.active_end_ns - row.active_begin_ns);
    }
  }
  const SampleStats lat = SummarizeSample(&d.latencies);
  row.latency_count = lat.count;
  row.latency_mean_ns = lat.mean;
  row.latency_median_ns = lat.median;
  row.latency_p95_ns = Quantile(&d.latencies, 0.95);
  return row;
}

}  // namespace

std::vector<DeviceRow> ProcessDevices(const Process& process, const StringPool& strings) {
  std::vector<DeviceRow> rows;
  for (auto& [id, d] : Collect(process, strings)) {
    DeviceRow row = Summarize(id, std::move(d));
    row.pid = process.pid;
    row.host = process.host;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<DeviceRow> MergedDevices(const std::vector<const Process*>& processes, const StringPool& strings) {
  std::map<std::pair<std::string, uint32_t>, DeviceSamples> merged;
  for (const Process* p : processes) {
    for (auto& [id, d] : Collect(*p, strings)) {
      auto [it, inserted] = merged.try_emplace({p->host, id});
      if (inserted) {
        it->second = std::move(d);
      } else {
        MergeInto(&it->second, std::move(d));
      }
    }
  }
  std::vector<DeviceRow> rows;
  for (auto& [key, d] : merged) {
    DeviceRow row = Summarize(key.second, std::move(d));
    row.host = key.first;
    rows.push_back(std::move(row));
  }
  return rows;
}

IntervalSet ProcessGpuActivity(const Process& process) {
  std::vector<Interval> v;
  for (const TraceImage& img : process.images) {
    for (const GpuKernel& k : img.cuda.kernels) v.push_back({k.start_ns, k.end_ns});
    for (const GpuMemcpy& m : img.cuda.memcpys) v.push_back({m.start_ns, m.end_ns});
    for (const GpuMemset& m : img.cuda.memsets) v.push_back({m.start_ns, m.end_ns});
  }
  return Union(std::move(v));
}

}  // namespace trainprof::collector
