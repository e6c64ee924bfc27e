#include "collector/model/cuda_window.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

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
  // The look-ups every analysis of the window asks, made here: by the task that reads the window
  // (ForEachCudaWindow), mostly on a reading thread, not in the visit.
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
        std::make_unique<const IdMap<uint64_t>>(EnterByCorrelation(PartnerSources(image)));
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

namespace {

// The reads of ForEachCudaWindow as tasks, one per (window, process) in window order, taken in
// turn by the reading threads and by the visiting thread while it waits for a window: the cores
// stay busy whether the reads or the visits are the larger part, without more threads than cores.
class WindowReads {
 public:
  WindowReads(const CudaWindows& windows, const std::vector<const Process*>& processes, size_t ahead)
      : windows_(windows), processes_(processes), ahead_(ahead), slots_(ahead + 2) {}

  /// A reading thread: takes tasks until Stop.
  void Work() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || Ready(); });
      if (stop_) return;
      RunOne(&lock);
    }
  }

  /// Window k's data, once every read of it is done (helping with the reads meanwhile); rethrows
  /// what one of them threw. Windows past k + ahead are not started before this is asked for k.
  std::vector<CudaWindowData> Take(size_t k) {
    if (processes_.empty()) return {};
    std::unique_lock<std::mutex> lock(mutex_);
    visiting_ = k;
    cv_.notify_all();
    Slot& slot = slots_[k % slots_.size()];
    while (!(slot.window == k && slot.left == 0)) {
      if (Ready()) {
        RunOne(&lock);
      } else {
        cv_.wait(lock);
      }
    }
    if (slot.error) std::rethrow_exception(slot.error);
    slot.window = SIZE_MAX;
    return std::move(slot.data);
  }

  void Stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    cv_.notify_all();
  }

 private:
  struct Slot {
    size_t window = SIZE_MAX;
    size_t left = 0;  // reads not done
    std::vector<CudaWindowData> data;
    std::exception_ptr error;
  };

  // A task may start: its window is at most `ahead_` past the one visited (its slot is free).
  bool Ready() const {
    if (next_ >= windows_.size() * processes_.size()) return false;
    return next_ / processes_.size() <= visiting_ + ahead_;
  }

  // Runs the next task, the lock released while it reads.
  void RunOne(std::unique_lock<std::mutex>* lock) {
    const size_t task = next_++;
    const size_t k = task / processes_.size(), p = task % processes_.size();
    Slot& slot = slots_[k % slots_.size()];
    if (slot.window != k) {  // the window's first task: its slot made ready (no allocation may escape)
      slot.error = nullptr;
      try {
        slot.data.clear();
        slot.data.resize(processes_.size());
      } catch (...) {
        slot.error = std::current_exception();
        slot.data.clear();
      }
      slot.window = k;
      slot.left = processes_.size();
    }
    CudaWindowData data;
    std::exception_ptr error;
    if (slot.data.size() == processes_.size()) {  // else the slot could not be made: nothing to read into
      lock->unlock();
      try {
        data = windows_.Read(k, *processes_[p]);
      } catch (...) {
        error = std::current_exception();
      }
      lock->lock();
      slot.data[p] = std::move(data);
    }
    if (error && !slot.error) slot.error = error;
    if (--slot.left == 0) cv_.notify_all();
  }

  const CudaWindows& windows_;
  const std::vector<const Process*>& processes_;
  const size_t ahead_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Slot> slots_;  // window k's in slots_[k % size]
  size_t next_ = 0;          // the next task: window next_ / processes, process next_ % processes
  size_t visiting_ = 0;      // the window the visitor asked for last
  bool stop_ = false;
};

}  // namespace

void ForEachCudaWindow(const CudaWindows& windows, const std::vector<const Process*>& processes, size_t threads,
                       const CudaWindowVisit& visit) {
  if (windows.whole() || windows.size() < 2 || processes.empty()) threads = 0;
  threads = std::min(threads, kMaxReadThreads);
  // Windows up to threads + 3 past the one visited may be read: slack for the visitor, which
  // reads too while it waits (measured at 100M records on 2 cores: 1 window ahead 10.3 s, 2 8.8 s,
  // 3 8.4 s, 4 8.1-8.6 s; docs/performance.md, "Reads shared by every core").
  WindowReads reads(windows, processes, threads + 3);
  std::vector<std::thread> readers;
  readers.reserve(threads);
  struct Join {  // the readers stopped and joined however the pass ends
    WindowReads& reads;
    std::vector<std::thread>& readers;
    ~Join() {
      reads.Stop();
      for (std::thread& t : readers) t.join();
    }
  } join{reads, readers};
  for (size_t i = 0; i < threads; ++i) {
    try {
      readers.emplace_back([&reads] { reads.Work(); });
    } catch (const std::exception&) {  // no thread to be had (system_error, bad_alloc): the visitor reads the rest
      break;
    }
  }
  for (size_t k = 0; k < windows.size(); ++k) {
    const std::vector<CudaWindowData> data = reads.Take(k);
    std::vector<const CudaWindowData*> of;
    of.reserve(data.size());
    for (const CudaWindowData& d : data) of.push_back(&d);
    visit(k, of);
  }
}

void ForEachCudaWindow(const CudaWindows& windows, const std::vector<Process>& processes, size_t threads,
                       const CudaWindowVisit& visit) {
  std::vector<const Process*> all;
  all.reserve(processes.size());
  for (const Process& p : processes) all.push_back(&p);
  ForEachCudaWindow(windows, all, threads, visit);
}

}  // namespace trainprof::collector
