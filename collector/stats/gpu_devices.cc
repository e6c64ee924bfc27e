#include "collector/stats/gpu_devices.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "collector/base/sample_stats.h"
#include "collector/model/cuda_calls.h"

namespace trainprof::collector {

DeviceSweep::DeviceSweep(std::vector<const Process*> processes, const StringPool& strings, bool merged,
                         const std::vector<std::set<uint32_t>>& devices, const std::vector<std::set<uint32_t>>* kept)
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
      d.use.device = device;
      d.keep_activity = !merged && (kept == nullptr || (*kept)[p].count(device) > 0);
      ++d.processes;
      d.life.push_back({proc.start_ns, proc.end_ns});
      for (const TraceImage& img : proc.images) {
        for (const GpuDevice& dev : img.cuda.devices) {
          if (dev.id == device && d.use.name.empty()) d.use.name = std::string(strings.Get(dev.name));
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
        ++d->use.kernels;
        d->use.kernel_ns += k.duration();
        const uint64_t* enter = enter_of.Find(k.correlation);
        if (enter != nullptr && k.start_ns >= *enter) d->use.latency.Add(k.start_ns - *enter);
      }
      auto memory = [&](const auto& records, uint64_t DeviceUse::*count) {
        for (const auto& m : records) {
          Device* d = row(m.device);
          if (d == nullptr) continue;
          if (w.Overlaps(m.start_ns, m.end_ns)) d->window.push_back(w.Clip(m.start_ns, m.end_ns));
          if (!w.Owns(m.start_ns)) continue;
          ++(d->use.*count);
          d->use.memory_ns += m.duration();
        }
      };
      memory(c.memcpys, &DeviceUse::memcpys);
      memory(c.memsets, &DeviceUse::memsets);
    }
  }
  for (Device& d : rows_) {
    if (d.window.empty()) continue;
    IntervalSet busy = Union(std::move(d.window));
    d.window = {};
    DeviceUse& u = d.use;
    u.busy_ns += Length(Intersect(busy, d.life));
    u.active_ns += Length(busy);
    if (!busy.empty()) {
      u.active_begin = std::min(u.active_begin, busy.front().begin);
      u.active_end = std::max(u.active_end, busy.back().end);
    }
    if (!d.keep_activity) continue;
    // Windows come in time order: this one's activity goes after the last one's, bounded at twice
    // the bound meanwhile (then to it), so that a long run holds at most that.
    u.activity.insert(u.activity.end(), busy.begin(), busy.end());
    if (u.activity.size() > 2 * kMaxActivityIntervals) BoundActivity(&u.activity, kMaxActivityIntervals, &u.filled_ns);
  }
}

namespace {

// The row of `u` over `processes` processes whose lifetimes (union) last `lifetime_ns`.
DeviceRow RowOf(const DeviceUse& u, std::optional<int32_t> pid, const std::string& host, uint32_t processes,
                uint64_t lifetime_ns) {
  DeviceRow row;
  row.pid = pid;
  row.host = host;
  row.device = u.device;
  row.name = u.name;
  row.processes = processes;
  row.kernels = u.kernels;
  row.kernel_ns = u.kernel_ns;
  row.memcpys = u.memcpys;
  row.memsets = u.memsets;
  row.memory_ns = u.memory_ns;
  row.lifetime_ns = lifetime_ns;
  row.busy_ns = u.busy_ns;
  if (row.lifetime_ns > 0) row.busy_percent = Percent(row.busy_ns, row.lifetime_ns);
  if (u.active_begin != UINT64_MAX) {
    row.active_begin_ns = u.active_begin;
    row.active_end_ns = u.active_end;
    if (row.active_end_ns > row.active_begin_ns) {
      row.active_busy_percent = Percent(u.active_ns, row.active_end_ns - row.active_begin_ns);
    }
  }
  const SampleStats lat = u.latency.Stats();
  row.latency_count = lat.count;
  row.latency_mean_ns = lat.mean;
  row.latency_median_ns = lat.median;
  row.latency_p95_ns = u.latency.Quantile(0.95);
  row.latency_exact = lat.exact;
  return row;
}

}  // namespace

std::vector<DeviceRow> DeviceSweep::Rows() && {
  std::vector<size_t> order(rows_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (merged_) {  // by host, then device
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys_[a] < keys_[b]; });
  }
  std::vector<DeviceRow> out;
  out.reserve(rows_.size());
  for (size_t i : order) {
    const Device& d = rows_[i];
    out.push_back(RowOf(d.use, pids_[i], keys_[i].first, d.processes, Length(d.life)));
  }
  return out;
}

std::vector<DeviceUse> DeviceSweep::Uses() && {
  std::vector<DeviceUse> out;
  out.reserve(rows_.size());
  for (Device& d : rows_) {
    DeviceUse& u = d.use;
    if (d.keep_activity) {
      BoundActivity(&u.activity, kMaxActivityIntervals, &u.filled_ns);
    } else if (u.active_begin != UINT64_MAX) {  // its span: the bound at one interval
      u.activity = {{u.active_begin, u.active_end}};
      u.filled_ns = (u.active_end - u.active_begin) - u.active_ns;
    }
    out.push_back(std::move(u));
  }
  return out;
}

void BoundActivity(IntervalSet* activity, size_t max, uint64_t* filled) {
  IntervalSet& a = *activity;
  // Join the intervals that touch (a window's cut) or overlap.
  size_t kept = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (kept > 0 && a[i].begin <= a[kept - 1].end) {
      a[kept - 1].end = std::max(a[kept - 1].end, a[i].end);
    } else {
      a[kept++] = a[i];
    }
  }
  a.resize(kept);
  if (max == 0 || a.size() <= max) return;
  // The gaps to fill: all those shorter than the (size - max)-th shortest, and of that length as
  // many as needed, the earliest first.
  std::vector<uint64_t> gaps;
  gaps.reserve(a.size() - 1);
  for (size_t i = 1; i < a.size(); ++i) gaps.push_back(a[i].begin - a[i - 1].end);
  const size_t fill = a.size() - max;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(fill - 1), gaps.end());
  const uint64_t threshold = gaps[fill - 1];
  size_t below = 0;
  for (size_t g = 0; g < gaps.size(); ++g) below += gaps[g] < threshold ? 1 : 0;
  size_t at_threshold = fill - below;  // gaps of the threshold's length to fill, the earliest first
  kept = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (kept > 0) {
      const uint64_t gap = a[i].begin - a[kept - 1].end;
      const bool close = gap < threshold || (gap == threshold && at_threshold > 0);
      if (close) {
        if (gap == threshold) --at_threshold;
        *filled += gap;
        a[kept - 1].end = a[i].end;
        continue;
      }
    }
    a[kept++] = a[i];
  }
  a.resize(kept);
}

std::vector<DeviceRow> ProcessDeviceRows(const ProcessDeviceUses& p) {
  std::vector<DeviceRow> out;
  const uint64_t life = p.life.end > p.life.begin ? p.life.end - p.life.begin : 0;
  for (const DeviceUse& u : *p.uses) out.push_back(RowOf(u, p.pid, p.host, 1, life));
  return out;
}

std::vector<DeviceRow> MergedDeviceRows(const std::vector<ProcessDeviceUses>& processes) {
  struct Shared {
    std::vector<std::pair<const ProcessDeviceUses*, const DeviceUse*>> uses;  // in process order
  };
  std::map<std::pair<std::string, uint32_t>, Shared> by_device;  // (host, device): by host, then device
  for (const ProcessDeviceUses& p : processes) {
    for (const DeviceUse& u : *p.uses) by_device[{p.host, u.device}].uses.push_back({&p, &u});
  }
  std::vector<DeviceRow> out;
  out.reserve(by_device.size());
  for (const auto& [key, shared] : by_device) {
    if (shared.uses.size() == 1) {
      const auto [p, u] = shared.uses.front();
      out.push_back(RowOf(*u, std::nullopt, p->host, 1, p->life.end > p->life.begin ? p->life.end - p->life.begin : 0));
      continue;
    }
    DeviceUse sum;
    sum.device = key.second;
    std::vector<Interval> lives, activity;
    for (const auto& [p, u] : shared.uses) {
      if (sum.name.empty()) sum.name = u->name;
      sum.kernels += u->kernels;
      sum.kernel_ns += u->kernel_ns;
      sum.memcpys += u->memcpys;
      sum.memsets += u->memsets;
      sum.memory_ns += u->memory_ns;
      sum.latency.Merge(u->latency);
      sum.active_begin = std::min(sum.active_begin, u->active_begin);
      sum.active_end = std::max(sum.active_end, u->active_end);
      sum.filled_ns += u->filled_ns;
      lives.push_back(p->life);
      activity.insert(activity.end(), u->activity.begin(), u->activity.end());
    }
    const IntervalSet life = Union(std::move(lives));
    const IntervalSet busy = Union(std::move(activity));
    sum.busy_ns = Length(Intersect(busy, life));
    sum.active_ns = Length(busy);
    DeviceRow row = RowOf(sum, std::nullopt, key.first, static_cast<uint32_t>(shared.uses.size()), Length(life));
    row.busy_error_ns = sum.filled_ns;
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

std::vector<std::set<uint32_t>> SharedDevices(const std::vector<const Process*>& processes) {
  std::vector<std::set<uint32_t>> used;
  std::map<std::pair<std::string, uint32_t>, size_t> users;  // (host, device) → processes
  for (const Process* p : processes) {
    used.push_back(DevicesUsed(*p));
    for (uint32_t d : used.back()) ++users[{p->host, d}];
  }
  std::vector<std::set<uint32_t>> out(processes.size());
  for (size_t i = 0; i < processes.size(); ++i) {
    for (uint32_t d : used[i]) {
      if (users[{processes[i]->host, d}] > 1) out[i].insert(d);
    }
  }
  return out;
}

DeviceWindowSweep::DeviceWindowSweep(const std::vector<const Process*>& processes, const StringPool& strings,
                                     bool merged, bool whole, const std::vector<std::set<uint32_t>>* kept)
    : whole_(whole) {
  std::vector<std::set<uint32_t>> devices;
  for (const Process* p : processes) devices.push_back(DevicesUsed(*p));
  sweep_.emplace(processes, strings, merged, devices, kept);
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
std::vector<DeviceUse> DeviceWindowSweep::Uses() && { return std::move(*sweep_).Uses(); }

namespace {

// The sweep of `processes` fed their whole records, as one window.
DeviceWindowSweep OneWindow(const std::vector<const Process*>& processes, const StringPool& strings, bool merged,
                            const std::vector<std::set<uint32_t>>* kept = nullptr) {
  DeviceWindowSweep sweep(processes, strings, merged, /*whole=*/true, kept);
  std::vector<CudaWindowData> data;
  for (const Process* p : processes) {
    std::vector<const CudaData*> records;
    for (const TraceImage& img : p->images) records.push_back(&img.cuda);
    data.emplace_back(records, records);
  }
  std::vector<const CudaWindowData*> of;
  for (const CudaWindowData& d : data) of.push_back(&d);
  sweep.Add(TimeWindow{}, of);
  return sweep;
}

}  // namespace

std::vector<DeviceRow> ProcessDevices(const Process& process, const StringPool& strings) {
  return OneWindow({&process}, strings, /*merged=*/false).Rows();
}

std::vector<DeviceUse> DeviceUsesOf(const Process& process, const StringPool& strings, const std::set<uint32_t>* kept) {
  if (kept == nullptr) return OneWindow({&process}, strings, /*merged=*/false).Uses();
  const std::vector<std::set<uint32_t>> of{*kept};
  return OneWindow({&process}, strings, /*merged=*/false, &of).Uses();
}

std::vector<DeviceRow> MergedDevices(const std::vector<const Process*>& processes, const StringPool& strings) {
  return OneWindow(processes, strings, /*merged=*/true).Rows();
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
