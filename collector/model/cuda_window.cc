#include "collector/model/cuda_window.h"

#include <algorithm>
#include <deque>
#include <future>
#include <system_error>

#include "collector/model/cuda_calls.h"

namespace trainprof::collector {
namespace {

template <typename T>
void SliceActivity(const std::vector<T>& all, const TimeWindow& w, std::vector<T>* out) {
  for (const T& r : all) {
    if (w.Owns(r.start_ns) || w.Overlaps(r.start_ns, r.end_ns)) out->push_back(r);
  }
}

}  // namespace

CudaData SliceWindow(const CudaData& all, const TimeWindow& w, uint64_t process_end_ns) {
  CudaData out;
  for (const CudaCall& c : all.calls) {
    if (w.Owns(c.begin_ns) || w.Overlaps(c.begin_ns, CallEnd(c, process_end_ns))) out.calls.push_back(c);
  }
  SliceActivity(all.kernels, w, &out.kernels);
  SliceActivity(all.memcpys, w, &out.memcpys);
  SliceActivity(all.memsets, w, &out.memsets);
  return out;
}

std::vector<TimeWindow> CutWindows(std::vector<uint64_t> starts, size_t max_records) {
  std::vector<StartCount> counted;
  counted.reserve(starts.size());
  for (uint64_t t : starts) counted.push_back({t, 1});
  starts = {};
  return CutWindows(std::move(counted), max_records);
}

std::vector<TimeWindow> CutWindows(std::vector<StartCount> starts, size_t max_records) {
  std::vector<TimeWindow> out(1);
  if (max_records == 0) return out;
  uint64_t total = 0;
  for (const StartCount& s : starts) total += s.count;
  if (total <= max_records) return out;
  std::sort(starts.begin(), starts.end(), [](const StartCount& a, const StartCount& b) { return a.time_ns < b.time_ns; });
  // Greedy, over the starts merged by time: a window takes times while their counts fit; the time
  // that would overflow it begins the next one, unless the window is still empty: then it takes
  // that time whole.
  uint64_t in_window = 0;
  for (size_t i = 0; i < starts.size();) {
    const uint64_t t = starts[i].time_ns;
    uint64_t n = 0;
    for (; i < starts.size() && starts[i].time_ns == t; ++i) n += starts[i].count;
    if (n == 0) continue;  // no record starts there
    if (in_window > 0 && in_window + n > max_records) {
      out.back().end_ns = t;
      out.push_back({t, UINT64_MAX});
      in_window = 0;
    }
    in_window += n;
  }
  return out;
}

uint64_t ChunkReads(const std::vector<StartCount>& starts, const std::vector<TimeWindow>& windows) {
  uint64_t reads = 0;
  auto window_of = [&](uint64_t t) {  // the window holding t (they cover all time, in order)
    auto it = std::upper_bound(windows.begin(), windows.end(), t,
                               [](uint64_t v, const TimeWindow& w) { return v < w.end_ns; });
    return static_cast<uint64_t>(it == windows.end() ? windows.size() - 1 : it - windows.begin());
  };
  for (const StartCount& c : starts) {
    if (c.end_ns != 0) reads += window_of(std::max(c.end_ns, c.time_ns)) - window_of(c.time_ns) + 1;
  }
  return reads;
}

void AppendStarts(const CudaData& data, std::vector<uint64_t>* out) {
  out->reserve(out->size() + data.calls.size() + data.kernels.size() + data.memcpys.size() + data.memsets.size());
  for (const CudaCall& c : data.calls) out->push_back(c.begin_ns);
  for (const GpuKernel& k : data.kernels) out->push_back(k.start_ns);
  for (const GpuMemcpy& m : data.memcpys) out->push_back(m.start_ns);
  for (const GpuMemset& m : data.memsets) out->push_back(m.start_ns);
}

CudaWindows::CudaWindows(const std::vector<Process>& processes) : CudaWindows(processes, 0) {}

CudaWindows::CudaWindows(const std::vector<Process>& processes, size_t max_records, CudaWindowReader read,
                         const CudaStartCounter& count)
    : read_records_(std::move(read)) {
  if (max_records == 0) {
    windows_.push_back({});
    return;
  }
  whole_ = false;
  std::vector<StartCount> starts;
  for (const Process& p : processes) {
    for (const TraceImage& img : p.images) {
      if (count && count(img, &starts)) continue;
      std::vector<uint64_t> each;
      AppendStarts(img.cuda, &each);
      for (uint64_t t : each) starts.push_back({t, 1});
    }
  }
  // Chunks decoded again per window: a chunk whose span crosses many windows (a long kernel, a
  // buffer flushed at exit) is read for each. Larger windows where that passes the bound.
  uint64_t chunks = 0;
  for (const StartCount& c : starts) chunks += c.end_ns != 0 ? 1 : 0;
  windows_ = CutWindows(starts, max_records);
  while (windows_.size() > 1 && ChunkReads(starts, windows_) > kMaxChunkReads * chunks + windows_.size()) {
    max_records = max_records > SIZE_MAX / 2 ? SIZE_MAX : max_records * 2;
    windows_ = CutWindows(starts, max_records);
  }
}

CudaWindowData CudaWindows::Read(size_t k, const Process& p) const {
  CudaWindowData out;
  if (whole_) {
    for (const TraceImage& img : p.images) out.records_.push_back(&img.cuda);
    out.partners_ = out.records_;
    out.partners_extra_.assign(out.records_.size(), 0);
    return out;
  }
  const TimeWindow& w = windows_[k];
  for (const TraceImage& img : p.images) {
    auto data = std::make_unique<CudaData>();
    auto correlated = std::make_unique<CudaData>();
    std::string error;
    bool extra = false;
    const bool reread =
        read_records_ && read_records_(img, w, p.end_ns, data.get(), correlated.get(), &extra, &error);
    if (!error.empty()) Said(error);
    if (!reread) *data = SliceWindow(img.cuda, w, p.end_ns);
    ++(reread ? read_ : sliced_);
    out.records_.push_back(data.get());
    out.owned_.push_back(std::move(data));
    if (reread) {
      out.partners_.push_back(correlated.get());
      out.owned_.push_back(std::move(correlated));
    } else {
      out.partners_.push_back(&img.cuda);
    }
    out.partners_extra_.push_back(reread && extra ? 1 : 0);
  }
  // The look-ups every analysis of the window asks, made here: on the thread that reads the
  // window (ForEachCudaWindow's read-ahead), not on the one that visits it.
  for (size_t i = 0; i < out.partners_.size(); ++i) out.Enter(i);
  return out;
}

std::vector<const CudaData*> CudaWindowData::PartnerSources(size_t image) const {
  if (partners_extra_[image] != 0) return {records_[image], partners_[image]};
  return {partners_[image]};
}

const IdMap<uint64_t>& CudaWindowData::Enter(size_t image) const {
  if (enter_.size() < partners_.size()) enter_.resize(partners_.size());
  if (enter_[image] == nullptr) {
    enter_[image] =
        std::make_unique<const IdMap<uint64_t>>(EnterByCorrelation(PartnerSources(image), /*skip_zero=*/false));
  }
  return *enter_[image];
}

void CudaWindows::Said(const std::string& error) const {
  std::lock_guard<std::mutex> lock(errors_mutex_);
  if (std::find(errors_.begin(), errors_.end(), error) == errors_.end()) errors_.push_back(error);
}

std::vector<std::string> CudaWindows::Errors() const {
  std::lock_guard<std::mutex> lock(errors_mutex_);
  return errors_;
}

void ForEachCudaWindow(const CudaWindows& windows, const std::vector<const Process*>& processes, size_t read_ahead,
                       const CudaWindowVisit& visit) {
  auto read = [&](size_t k) {
    std::vector<CudaWindowData> data;
    data.reserve(processes.size());
    for (const Process* p : processes) data.push_back(windows.Read(k, *p));
    return data;
  };
  if (windows.whole() || windows.size() < 2) read_ahead = 0;
  read_ahead = std::min(read_ahead, kMaxReadAhead);
  // Windows k .. k + read_ahead are being read (or are read) when window k is waited for: while
  // the visit of k runs, the next read_ahead are read on threads of their own.
  std::deque<std::future<std::vector<CudaWindowData>>> reading;
  size_t next = 0;  // the first window not yet being read
  for (size_t k = 0; k < windows.size(); ++k) {
    next = std::max(next, k);
    while (read_ahead > 0 && next < windows.size() && next <= k + read_ahead) {
      try {
        reading.push_back(std::async(std::launch::async, read, next));
        ++next;
      } catch (const std::system_error&) {  // no thread to be had: the rest read in turn
        read_ahead = 0;
      }
    }
    std::vector<CudaWindowData> data;
    if (reading.empty()) {
      data = read(k);
    } else {
      data = reading.front().get();
      reading.pop_front();
    }
    std::vector<const CudaWindowData*> of;
    of.reserve(data.size());
    for (const CudaWindowData& d : data) of.push_back(&d);
    visit(k, of);
  }
}

void ForEachCudaWindow(const CudaWindows& windows, const std::vector<Process>& processes, size_t read_ahead,
                       const CudaWindowVisit& visit) {
  std::vector<const Process*> all;
  all.reserve(processes.size());
  for (const Process& p : processes) all.push_back(&p);
  ForEachCudaWindow(windows, all, read_ahead, visit);
}

}  // namespace trainprof::collector
