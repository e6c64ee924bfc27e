#include "collector/read/cuda_records.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

#include "trainprof/records.h"

namespace trainprof::collector {
namespace {

using format::RecordTag;

uint32_t U32(uint64_t v) { return static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX)); }

// base_ns + a relative time (zs, ze) on the absolute axis; 0 ("no time") when it falls at or
// before 0 or beyond the axis.
uint64_t Absolute(uint64_t base_ns, int64_t relative) {
  const __int128 t = static_cast<__int128>(base_ns) + relative;
  if (t <= 0 || t > static_cast<__int128>(std::numeric_limits<uint64_t>::max())) return 0;
  return static_cast<uint64_t>(t);
}

// A GPU activity record's absolute start and end; false (counted in invalid_timestamps) for a zero
// time or end < start, so that no statistic ever sees it.
template <typename Record, typename Out>
bool Times(const Record& r, uint64_t base_ns, Out* out, uint64_t* invalid) {
  if (base_ns == CudaRecordDecoder::kLostBase) {
    ++*invalid;
    return false;
  }
  out->start_ns = Absolute(base_ns, r.zs);
  out->end_ns = Absolute(base_ns, r.ze);
  if (out->start_ns == 0 || out->end_ns == 0 || out->end_ns < out->start_ns) {
    ++*invalid;
    return false;
  }
  return true;
}

// Times, then the ids every record of work on a stream has (kernels, copies, memsets).
template <typename Record, typename Out>
bool OnStream(const Record& r, uint64_t base_ns, Out* out, uint64_t* invalid) {
  if (!Times(r, base_ns, out, invalid)) return false;
  out->device = U32(r.device);
  out->context = U32(r.context);
  out->stream = U32(r.stream);
  out->correlation = r.correlation;
  return true;
}

// Adds `x` to `list`, or replaces the entry with its id (a device or context described twice,
// on re-initialisation: the later description wins).
template <typename T>
void Define(std::vector<T>* list, const T& x) {
  auto it = std::find_if(list->begin(), list->end(), [&](const T& y) { return y.id == x.id; });
  if (it != list->end()) {
    *it = x;
  } else {
    list->push_back(x);
  }
}

}  // namespace

void CudaRecordDecoder::Add(uint8_t tag, const uint64_t* f, uint64_t now, uint64_t base_ns, uint32_t thread) {
  namespace fr = format::rec;
  using format::Decode;
  // An EVENT_STACK after an exit is its call's while the thread's last timed record is that exit
  // (the reader's rule): GPU activity and definitions between do not end that, and the last such
  // stack is the call's, as CudaData::calls gets it. The call waits for the next timed record.
  if (format::RecordInfoOf(static_cast<RecordTag>(tag)).cls == format::RecordClass::kTimed) FlushExited();
  switch (static_cast<RecordTag>(tag)) {
    case RecordTag::kCudaApiEnter: {
      const auto r = Decode<fr::CudaApiEnter>(f);
      CudaCall c;
      c.begin_ns = c.end_ns = now;
      c.api = static_cast<format::CudaApi>(U32(r.api));
      c.cbid = static_cast<uint16_t>(std::min<uint64_t>(r.cbid, UINT16_MAX));
      c.name = string_ref_(r.name);
      c.correlation = r.correlation;
      c.thread = thread;
      Enter(c);
      break;
    }
    case RecordTag::kCudaApiExit: {
      const auto r = Decode<fr::CudaApiExit>(f);
      if (!Exit(r.correlation, now, U32(r.status))) ++out_.unmatched_exits;
      break;
    }
    case RecordTag::kGpuKernel: Activity<fr::GpuKernel, GpuKernel>(f, base_ns); break;
    case RecordTag::kGpuMemcpy: Activity<fr::GpuMemcpy, GpuMemcpy>(f, base_ns); break;
    case RecordTag::kGpuMemset: Activity<fr::GpuMemset, GpuMemset>(f, base_ns); break;
    case RecordTag::kGpuSync: Activity<fr::GpuSync, GpuSync>(f, base_ns); break;
    case RecordTag::kGpuOverhead: Activity<fr::GpuOverhead, GpuOverhead>(f, base_ns); break;
    case RecordTag::kGpuDevice: {
      const auto r = Decode<fr::GpuDevice>(f);
      GpuDevice d;
      d.id = U32(r.device);
      d.name = string_ref_(r.name);
      d.cc_major = U32(r.cc_major);
      d.cc_minor = U32(r.cc_minor);
      d.sm_count = U32(r.sms);
      d.global_memory = r.memory;
      Define(&out_.devices, d);
      break;
    }
    case RecordTag::kGpuContext: {
      const auto r = Decode<fr::GpuContext>(f);
      Define(&out_.contexts, GpuContext{U32(r.context), U32(r.device)});
      break;
    }
    case RecordTag::kGpuDropped:
      out_.records_dropped += Decode<fr::GpuDropped>(f).count;
      break;
    case RecordTag::kGpuStatus: {
      const auto r = Decode<fr::GpuStatus>(f);
      GpuStatusEvent s;
      s.time_ns = now;
      s.raw_state = U32(r.state);
      s.state = static_cast<format::GpuState>(s.raw_state);
      s.cupti_result = r.result;
      s.cupti_version = r.cupti_version;
      s.driver_version = r.driver_version;
      s.message = string_ref_(r.message);
      out_.status.push_back(s);
      break;
    }
    case RecordTag::kCapture: {
      const auto r = Decode<fr::Capture>(f);
      out_.captures.push_back({now, r.on != 0, U32(r.reason)});
      break;
    }
    default: break;
  }
}

template <typename Record, typename T>
void CudaRecordDecoder::Activity(const uint64_t* f, uint64_t base_ns) {
  const auto r = format::Decode<Record>(f);
  T x;
  if constexpr (requires { r.stream; }) {  // work on a stream: kernels, copies, memsets
    if (!OnStream(r, base_ns, &x, &out_.invalid_timestamps)) return;
  } else {
    if (!Times(r, base_ns, &x, &out_.invalid_timestamps)) return;
  }
  Take(r, x);
}

void CudaRecordDecoder::Take(const format::rec::GpuKernel& r, GpuKernel& k) {
  k.name = string_ref_(r.name);
  KernelConfig config;
  const uint64_t grid[3] = {r.grid_x, r.grid_y, r.grid_z}, block[3] = {r.block_x, r.block_y, r.block_z};
  for (int i = 0; i < 3; ++i) config.grid[i] = U32(grid[i]), config.block[i] = U32(block[i]);
  config.registers = U32(r.registers);
  config.static_shared = U32(r.static_shared), config.dynamic_shared = U32(r.dynamic_shared);
  config.launch = static_cast<format::KernelLaunch>(U32(r.launch));
  k.graph = U32(r.graph);
  if (sink_ != nullptr) sink_->Kernel(k, config);
  if (digest_ != nullptr) digest_->Kernel(k, config);
  if (keep_) k.config = out_.kernel_configs.Intern(config);
  if (configs_ != nullptr) configs_->Intern(config);
  if (nccl_ends_ != nullptr) {
    if (k.name >= nccl_name_.size()) {
      const size_t n = std::max<size_t>(k.name + 1, 2 * nccl_name_.size());
      nccl_name_.resize(n, 0);
      nccl_noted_.resize(n, 0);
    }
    uint8_t& is = nccl_name_[k.name];
    if (is == 0) {
      const int answer = is_nccl_(k.name);
      if (answer != 2) is = answer == 1 ? 2 : 1;  // undefined yet: asked again next time
    }
    if (is != 1 && nccl_noted_[k.name] < kMaxNcclEndsPerName) {
      ++nccl_noted_[k.name];
      nccl_ends_->push_back({k.end_ns, k.name});
    }
  }
  Decoded(k, &out_.kernels);
}

void CudaRecordDecoder::Take(const format::rec::GpuMemcpy& r, GpuMemcpy& m) {
  m.kind = static_cast<format::MemcpyKind>(U32(r.copy_kind));
  m.src_memory = static_cast<format::MemoryKind>(U32(r.src_kind));
  m.dst_memory = static_cast<format::MemoryKind>(U32(r.dst_kind));
  m.bytes = r.bytes_copied;
  m.src_device = U32(r.src_device), m.dst_device = U32(r.dst_device);
  Memory(r, m, &CudaSink::Memcpy, &CudaDigest::Memcpy, &out_.memcpys);
}

void CudaRecordDecoder::Take(const format::rec::GpuMemset& r, GpuMemset& m) {
  m.bytes = r.bytes_set;
  m.value = U32(r.value);
  m.memory = static_cast<format::MemoryKind>(U32(r.memory));
  Memory(r, m, &CudaSink::Memset, &CudaDigest::Memset, &out_.memsets);
}

void CudaRecordDecoder::Take(const format::rec::GpuSync& r, GpuSync& s) {
  s.context = U32(r.context);
  s.has_stream = r.stream_plus_1 != 0;
  s.stream = s.has_stream ? U32(r.stream_plus_1 - 1) : 0;
  s.type = static_cast<format::SyncType>(U32(r.type));
  s.correlation = r.correlation;
  ++out_.decoded_other;
  if (sink_ != nullptr) sink_->Sync(s);
  if (keep_) out_.syncs.push_back(s);
}

void CudaRecordDecoder::Take(const format::rec::GpuOverhead& r, GpuOverhead& o) {
  o.kind = U32(r.kind);
  o.object_kind = U32(r.object_kind);
  o.object_id = r.object_id;
  ++out_.decoded_other;
  if (sink_ != nullptr) sink_->Overhead(o);
  if (digest_ != nullptr) digest_->Overhead(o);
  if (keep_) out_.overheads.push_back(o);
}

template <typename T>
void CudaRecordDecoder::Decoded(const T& x, std::vector<T>* kept) {
  if (keep_) kept->push_back(x);
  out_.Decoded(x.device);
  if (span_ != nullptr) span_->AddGpu(x.start_ns, x.end_ns, x.correlation);
}

template <typename Record, typename T>
void CudaRecordDecoder::Memory(const Record& r, T& x, void (CudaSink::*to_sink)(const T&),
                               void (CudaDigest::*to_digest)(const T&), std::vector<T>* kept) {
  x.async = (r.flags & 1) != 0;
  x.graph = U32(r.graph);
  if (sink_ != nullptr) (sink_->*to_sink)(x);
  if (digest_ != nullptr) (digest_->*to_digest)(x);
  Decoded(x, kept);
}

void CudaRecordDecoder::Enter(const CudaCall& c) {
  const uint64_t seq = enters_++;
  ++out_.decoded_calls;
  // A correlation id seen again while its first call is open: the first never returned.
  if (keep_) {
    size_t* index = open_calls_.InsertNew(c.correlation);
    if (index == nullptr) {
      index = open_calls_.Find(c.correlation);
      if (unreturned_ != nullptr) unreturned_->push_back({out_.calls[*index], *index});
    }
    *index = out_.calls.size();
    out_.calls.push_back(c);
  }
  if (whole_calls_) {
    SeqCall* open = sink_open_.InsertNew(c.correlation);
    if (open == nullptr) {
      open = sink_open_.Find(c.correlation);
      if (unreturned_ != nullptr && !keep_) unreturned_->push_back(*open);
      Whole(*open);  // never returned: its id is reused
    }
    *open = {c, seq};
  }
}

bool CudaRecordDecoder::Exit(uint64_t correlation, uint64_t now, uint32_t status) {
  auto close = [&](CudaCall& c) {
    c.end_ns = std::max(now, c.begin_ns);
    c.status = status;
    c.returned = true;
  };
  bool matched = false;
  if (keep_) {
    last_exit_ = SIZE_MAX;
    if (const size_t* index = open_calls_.Find(correlation)) {
      last_exit_ = *index;
      close(out_.calls[last_exit_]);
      if (span_ != nullptr) span_->AddCall(out_.calls[last_exit_]);
      open_calls_.Erase(correlation);
      matched = true;
    }
  }
  if (whole_calls_) {
    if (const SeqCall* open = sink_open_.Find(correlation)) {
      exited_ = *open;
      close(exited_.call);
      if (span_ != nullptr && !keep_) span_->AddCall(exited_.call);
      has_exited_ = true;
      sink_open_.Erase(correlation);
      matched = true;  // the same as above when both keep: the two maps open and close together
    }
  }
  return matched;
}

void CudaRecordDecoder::LoseOpenCalls(uint32_t thread) {
  open_calls_.ForEach([&](uint64_t, size_t index) {
    if (out_.calls[index].thread == thread) out_.calls[index].exit_lost = true;
  });
  sink_open_.ForEach([&](uint64_t, SeqCall& c) {
    if (c.call.thread == thread) c.call.exit_lost = true;
  });
}

void CudaRecordDecoder::OpenCalls(std::vector<SeqCall>* out) const {
  if (keep_) {
    open_calls_.ForEach([&](uint64_t, size_t index) { out->push_back({out_.calls[index], index}); });
  } else {
    sink_open_.ForEach([&](uint64_t, const SeqCall& c) { out->push_back(c); });
  }
}

void CudaRecordDecoder::CollectUnreturned() {
  FlushExited();
  if (unreturned_ != nullptr) OpenCalls(unreturned_);
}

void CudaRecordDecoder::Restart(const SeqCall* open, size_t n, uint64_t enters) {
  FlushExited();
  sink_open_.Clear();
  for (size_t i = 0; i < n; ++i) {
    if (SeqCall* c = sink_open_.InsertNew(open[i].call.correlation)) *c = open[i];
  }
  enters_ = enters;
}

void CudaRecordDecoder::Whole(const SeqCall& c) {
  if (sink_ != nullptr) sink_->CallAt(c.call, c.seq);
  if (digest_ != nullptr) digest_->Call(c.call);
  if (stacked_ && c.call.stack != 0) out_.calls.push_back(c.call);
}

void CudaRecordDecoder::FlushExited() {
  if (!has_exited_) return;
  has_exited_ = false;
  Whole(exited_);
}

bool CudaRecordDecoder::SetExitStack(uint64_t stack) {
  const auto id = static_cast<uint32_t>(std::min<uint64_t>(stack, UINT32_MAX));
  bool set = false;
  if (keep_ && last_exit_ < out_.calls.size()) {
    out_.calls[last_exit_].stack = id;
    set = true;
  }
  if (has_exited_) {
    exited_.call.stack = id;
    set = true;
  }
  return set;
}

void CudaRecordDecoder::Resolve(const std::vector<StringId>& pool_of_ref) {
  if (whole_calls_) {
    FlushExited();
    std::vector<SeqCall> open;  // never returned, by enter time (not the map's order)
    open.reserve(sink_open_.size());
    sink_open_.ForEach([&](uint64_t, const SeqCall& c) { open.push_back(c); });
    std::sort(open.begin(), open.end(), [](const SeqCall& a, const SeqCall& b) {
      return std::tie(a.call.begin_ns, a.call.correlation) < std::tie(b.call.begin_ns, b.call.correlation);
    });
    for (const SeqCall& c : open) Whole(c);
    sink_open_.Clear();
    if (sink_ != nullptr) sink_->Resolve(pool_of_ref);
    if (digest_ != nullptr) digest_->Remap(pool_of_ref);
  }
  auto map = [&](StringId& ref) { ref = ref < pool_of_ref.size() ? pool_of_ref[ref] : 0; };
  for (CudaCall& c : out_.calls) map(c.name);
  for (GpuKernel& k : out_.kernels) map(k.name);
  if (nccl_ends_ != nullptr) {
    for (KernelEnd& e : *nccl_ends_) map(e.name);
  }
  for (GpuDevice& d : out_.devices) map(d.name);
  for (GpuStatusEvent& s : out_.status) map(s.message);
  // The chunks of a thread are read in order, those of several threads one after the other: put
  // calls in time order (ties: enter order) for every consumer.
  SortByEnterTime(&out_.calls);
}

void SortByEnterTime(std::vector<CudaCall>* calls) {
  auto by_enter = [](const CudaCall& a, const CudaCall& b) { return a.begin_ns < b.begin_ns; };
  if (std::is_sorted(calls->begin(), calls->end(), by_enter)) return;  // one thread's calls
  const size_t n = calls->size();
  if (n >= UINT32_MAX) {
    std::stable_sort(calls->begin(), calls->end(), by_enter);
    return;
  }
  // The order sorted as 4-byte indices, then applied in place cycle by cycle: std::stable_sort of
  // the calls themselves would take a buffer of half of them (24 bytes a call).
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  const std::vector<CudaCall>& c = *calls;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return c[a].begin_ns < c[b].begin_ns; });
  std::vector<CudaCall>& v = *calls;
  for (size_t i = 0; i < n; ++i) {
    if (order[i] == UINT32_MAX || order[i] == i) continue;  // placed, or in place
    const CudaCall first = v[i];
    size_t j = i;
    for (;;) {  // position j takes the call that sorts there: order[j]
      const size_t k = order[j];
      order[j] = UINT32_MAX;
      if (k == i) {
        v[j] = first;
        break;
      }
      v[j] = v[k];
      j = k;
    }
  }
}

}  // namespace trainprof::collector
