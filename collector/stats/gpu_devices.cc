#include "collector/stats/gpu_devices.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "collector/base/sample_stats.h"
#include "collector/model/cuda_calls.h"

namespace trainprof::collector {

DeviceSweep::DeviceSweep(std::vector<const Process*> processes, const StringPool& strings, bool merged,
                         const std::vector<std::set<uint32_t>>& devices)
    : processes_(std::move(processes)), merged_(merged), target_(processes_.size()) {
  std::map<std::pair<std::string, uint32_t>, size_t> merged_index;  // (host, device) → index into rows_
  for (size_t p = 0; p < processes_.size(); ++p) {
    const Process& proc = *processes_[p];
    for (uint32_t device : devices[p]) {
      size_t index = rows_.size();
      if (merged) {
        auto [it, fresh] = merged_index.try_emplace({proc.host, device}, index);
        index = it->second;
        if (fresh) {
          rows_.emplace_back();
          keys_.push_back({proc.host, device});
          pids_.push_back(std::nullopt);
        }
      } else {
        rows_.emplace_back();
        keys_.push_back({proc.host, device});
        pids_.push_back(proc.pid);
      }
      target_[p][device] = index;
      Device& d = rows_[index];
      ++d.processes;
      d.life.push_back({proc.start_ns, proc.end_ns});
      for (const TraceImage& img : proc.images) {
        for (const GpuDevice& dev : img.cuda.devices) {
          if (dev.id == device && d.name.empty()) d.name = std::string(strings.Get(dev.name));
        }
      }
    }
  }
  for (Device& d : rows_) d.life = Union(std::move(d.life));
}

void DeviceSweep::Add(const TimeWindow& w, const std::vector<std::vector<const CudaData*>>& records,
                      const std::vector<std::vector<const IdMap<uint64_t>*>>& enter) {
  // Each row's interval vector sized once (one entry per GPU record).
  std::vector<size_t> sizes(rows_.size());
  for (size_t p = 0; p < processes_.size(); ++p) {
    for (const CudaData* c : records[p]) {
      auto count = [&](uint32_t device) {
        auto it = target_[p].find(device);
        if (it != target_[p].end()) ++sizes[it->second];
      };
      for (const GpuKernel& k : c->kernels) count(k.device);
      for (const GpuMemcpy& m : c->memcpys) count(m.device);
      for (const GpuMemset& m : c->memsets) count(m.device);
    }
  }
  for (size_t r = 0; r < rows_.size(); ++r) rows_[r].window.reserve(sizes[r]);
  for (size_t p = 0; p < processes_.size(); ++p) {
    const std::map<uint32_t, size_t>& target = target_[p];
    auto row = [&](uint32_t device) -> Device* {
      auto it = target.find(device);
      return it == target.end() ? nullptr : &rows_[it->second];
    };
    for (size_t i = 0; i < records[p].size(); ++i) {
      const CudaData& c = *records[p][i];
      IdMap<uint64_t> own;  // no look-up given: made for this window from the image (one window)
      if (enter[p][i] == nullptr) own = EnterByCorrelation(processes_[p]->images[i].cuda);
      const IdMap<uint64_t>& enter_of = enter[p][i] == nullptr ? own : *enter[p][i];
      for (const GpuKernel& k : c.kernels) {
        Device* d = row(k.device);
        if (d == nullptr) continue;
        if (w.Overlaps(k.start_ns, k.end_ns)) d->window.push_back(w.Clip(k.start_ns, k.end_ns));
        if (!w.Owns(k.start_ns)) continue;
        ++d->kernels;
        d->kernel_ns += k.duration();
        const uint64_t* enter = enter_of.Find(k.correlation);
        if (enter != nullptr && k.start_ns >= *enter) d->latency.Add(k.start_ns - *enter);
      }
      auto memory = [&](const auto& records, uint64_t Device::*count) {
        for (const auto& m : records) {
          Device* d = row(m.device);
          if (d == nullptr) continue;
          if (w.Overlaps(m.start_ns, m.end_ns)) d->window.push_back(w.Clip(m.start_ns, m.end_ns));
          if (!w.Owns(m.start_ns)) continue;
          ++(d->*count);
          d->memory_ns += m.duration();
        }
      };
      memory(c.memcpys, &Device::memcpys);
      memory(c.memsets, &Device::memsets);
    }
  }
  for (Device& d : rows_) {
    if (d.window.empty()) continue;
    const IntervalSet busy = Union(std::move(d.window));
    d.window = {};
    d.busy_ns += Length(Intersect(busy, d.life));
    d.active_ns += Length(busy);
    if (!busy.empty()) {
      d.active_begin = std::min(d.active_begin, busy.front().begin);
      d.active_end = std::max(d.active_end, busy.back().end);
    }
  }
}

std::vector<DeviceRow> DeviceSweep::Rows() && {
  std::vector<size_t> order(rows_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (merged_) {  // by host, then device
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys_[a] < keys_[b]; });
  }
  std::vector<DeviceRow> out;
  out.reserve(rows_.size());
  for (size_t i : order) {
    Device& d = rows_[i];
    DeviceRow row;
    row.pid = pids_[i];
    row.host = keys_[i].first;
    row.device = keys_[i].second;
    row.name = std::move(d.name);
    row.processes = d.processes;
    row.kernels = d.kernels;
    row.kernel_ns = d.kernel_ns;
    row.memcpys = d.memcpys;
    row.memsets = d.memsets;
    row.memory_ns = d.memory_ns;
    row.lifetime_ns = Length(d.life);
    row.busy_ns = d.busy_ns;
    if (row.lifetime_ns > 0) row.busy_percent = Percent(row.busy_ns, row.lifetime_ns);
    if (d.active_begin != UINT64_MAX) {
      row.active_begin_ns = d.active_begin;
      row.active_end_ns = d.active_end;
      if (row.active_end_ns > row.active_begin_ns) {
        row.active_busy_percent = Percent(d.active_ns, row.active_end_ns - row.active_begin_ns);
      }
    }
    const SampleStats lat = d.latency.Stats();
    row.latency_count = lat.count;
    row.latency_mean_ns = lat.mean;
    row.latency_median_ns = lat.median;
    row.latency_p95_ns = d.latency.Quantile(0.95);
    row.latency_exact = lat.exact;
    out.push_back(std::move(row));
  }
  return out;
}

std::set<uint32_t> DevicesUsed(const Process& process) {
  std::set<uint32_t> out;
  for (const TraceImage& img : process.images) {
    out.insert(img.cuda.activity_devices.begin(), img.cuda.activity_devices.end());
    for (const GpuKernel& k : img.cuda.kernels) out.insert(k.device);
    for (const GpuMemcpy& m : img.cuda.memcpys) out.insert(m.device);
    for (const GpuMemset& m : img.cuda.memsets) out.insert(m.device);
  }
  return out;
}

bool DevicesShared(const std::vector<const Process*>& processes) {
  std::set<std::pair<std::string, uint32_t>> used;
  for (const Process* p : processes) {
    for (uint32_t device : DevicesUsed(*p)) {
      if (!used.emplace(p->host, device).second) return true;
    }
  }
  return false;
}

std::vector<DeviceRow> MergedFromProcessRows(std::vector<DeviceRow> rows) {
  for (DeviceRow& row : rows) row.pid = std::nullopt;
  std::sort(rows.begin(), rows.end(),
            [](const DeviceRow& a, const DeviceRow& b) { return std::tie(a.host, a.device) < std::tie(b.host, b.device); });
  return rows;
}

DeviceWindowSweep::DeviceWindowSweep(const std::vector<const Process*>& processes, const StringPool& strings,
                                     bool merged, bool whole)
    : whole_(whole) {
  std::vector<std::set<uint32_t>> devices;
  for (const Process* p : processes) devices.push_back(DevicesUsed(*p));
  sweep_.emplace(processes, strings, merged, devices);
}

void DeviceWindowSweep::Add(const TimeWindow& window, const std::vector<const CudaWindowData*>& data) {
  std::vector<std::vector<const CudaData*>> records;
  std::vector<std::vector<const IdMap<uint64_t>*>> enter(data.size());
  records.reserve(data.size());
  for (size_t p = 0; p < data.size(); ++p) {
    records.push_back(data[p]->records());
    enter[p].assign(data[p]->records().size(), nullptr);
    if (whole_) continue;
    for (size_t i = 0; i < enter[p].size(); ++i) enter[p][i] = &data[p]->Enter(i);
  }
  sweep_->Add(window, records, enter);
}

std::vector<DeviceRow> DeviceWindowSweep::Rows() && { return std::move(*sweep_).Rows(); }

namespace {

// The rows of `processes` from their whole records, as one window.
std::vector<DeviceRow> OneWindow(const std::vector<const Process*>& processes, const StringPool& strings, bool merged) {
  DeviceWindowSweep sweep(processes, strings, merged, /*whole=*/true);
  std::vector<CudaWindowData> data;
  for (const Process* p : processes) {
    std::vector<const CudaData*> records;
    for (const TraceImage& img : p->images) records.push_back(&img.cuda);
    data.emplace_back(records, records);
  }
  std::vector<const CudaWindowData*> of;
  for (const CudaWindowData& d : data) of.push_back(&d);
  sweep.Add(TimeWindow{}, of);
  return std::move(sweep).Rows();
}

}  // namespace

std::vector<DeviceRow> ProcessDevices(const Process& process, const StringPool& strings) {
  return OneWindow({&process}, strings, /*merged=*/false);
}

std::vector<DeviceRow> MergedDevices(const std::vector<const Process*>& processes, const StringPool& strings) {
  return OneWindow(processes, strings, /*merged=*/true);
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
