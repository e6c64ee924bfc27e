#include "collector/model/cuda_window.h"

#include <algorithm>

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
  std::vector<TimeWindow> out(1);
  if (max_records == 0 || starts.size() <= max_records) return out;
  std::sort(starts.begin(), starts.end());
  size_t first = 0;  // the first start of the window being cut
  while (starts.size() - first > max_records) {
    // The window ends at the start `max_records` on; the starts equal to it go to the next one,
    // unless they all are equal to the window's first start: then the window takes that run whole.
    size_t cut = first + max_records;
    const uint64_t t = starts[cut];
    if (t == starts[first]) {
      cut = static_cast<size_t>(std::upper_bound(starts.begin() + static_cast<std::ptrdiff_t>(cut), starts.end(), t) -
                                starts.begin());
      if (cut == starts.size()) break;
    } else {
      cut = static_cast<size_t>(std::lower_bound(starts.begin() + static_cast<std::ptrdiff_t>(first), starts.end(), t) -
                                starts.begin());
    }
    out.back().end_ns = starts[cut];
    out.push_back({starts[cut], UINT64_MAX});
    first = cut;
  }
  return out;
}

void AppendStarts(const CudaData& data, std::vector<uint64_t>* out) {
  out->reserve(out->size() + data.calls.size() + data.kernels.size() + data.memcpys.size() + data.memsets.size());
  for (const CudaCall& c : data.calls) out->push_back(c.begin_ns);
  for (const GpuKernel& k : data.kernels) out->push_back(k.start_ns);
  for (const GpuMemcpy& m : data.memcpys) out->push_back(m.start_ns);
  for (const GpuMemset& m : data.memsets) out->push_back(m.start_ns);
}

CudaWindows::CudaWindows(const std::vector<Process>& processes) : CudaWindows(processes, 0) {}

CudaWindows::CudaWindows(const std::vector<Process>& processes, size_t max_records) {
  for (size_t p = 0; p < processes.size(); ++p) index_.emplace(&processes[p], p);
  if (max_records == 0) {
    windows_.push_back({});
    records_.emplace_back();
    for (const Process& p : processes) {
      records_.back().emplace_back();
      for (const TraceImage& img : p.images) records_.back().back().push_back(&img.cuda);
    }
    return;
  }
  std::vector<uint64_t> starts;
  for (const Process& p : processes) {
    for (const TraceImage& img : p.images) AppendStarts(img.cuda, &starts);
  }
  windows_ = CutWindows(std::move(starts), max_records);
  for (const TimeWindow& w : windows_) {
    records_.emplace_back();
    for (const Process& p : processes) {
      records_.back().emplace_back();
      for (const TraceImage& img : p.images) {
        slices_.push_back(std::make_unique<CudaData>(SliceWindow(img.cuda, w, p.end_ns)));
        records_.back().back().push_back(slices_.back().get());
      }
    }
  }
}

}  // namespace trainprof::collector
