#include "collector/read/cuda_records.h"

#include <algorithm>
#include <limits>

namespace trainprof::collector {
namespace {

using format::RecordTag;

uint32_t U32(uint64_t v) { return static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX)); }

// base_ns + zigzag offset on the absolute axis; 0 ("no time") when it falls at or before 0 or
// beyond the axis.
uint64_t Absolute(uint64_t base_ns, uint64_t zigzag) {
  const __int128 t = static_cast<__int128>(base_ns) + format::UnZigZag(zigzag);
  if (t <= 0 || t > static_cast<__int128>(std::numeric_limits<uint64_t>::max())) return 0;
  return static_cast<uint64_t>(t);
}

}  // namespace

CudaTagLayout CudaLayout(uint8_t tag, uint32_t version) {
  if (version < 2) return {};
  switch (static_cast<RecordTag>(tag)) {
    case RecordTag::kCudaApiEnter: return {5, true};
    case RecordTag::kCudaApiExit: return {3, true};
    case RecordTag::kGpuKernel: return {18, false};
    case RecordTag::kGpuMemcpy: return {14, false};
    case RecordTag::kGpuMemset: return {11, false};
    case RecordTag::kGpuSync: return {6, false};
    case RecordTag::kGpuOverhead: return {5, false};
    case RecordTag::kGpuDevice: return {6, false};
    case RecordTag::kGpuContext: return {2, false};
    case RecordTag::kGpuDropped: return {2, true};
    case RecordTag::kGpuStatus: return {6, true};
    case RecordTag::kCapture: return {3, true};
    default: return {};
  }
}

void CudaRecordDecoder::Add(uint8_t tag, const uint64_t* f, uint64_t now, uint64_t base_ns, uint32_t thread) {
  // GPU activity: times first; an invalid one drops the record (counted).
  uint64_t start = 0, end = 0;
  switch (static_cast<RecordTag>(tag)) {
    case RecordTag::kGpuKernel:
    case RecordTag::kGpuMemcpy:
    case RecordTag::kGpuMemset:
    case RecordTag::kGpuSync:
    case RecordTag::kGpuOverhead:
      start = Absolute(base_ns, f[0]);
      end = Absolute(base_ns, f[1]);
      if (start == 0 || end == 0 || end < start) {
        ++out_.invalid_timestamps;
        return;
      }
      break;
    default: break;
  }

  switch (static_cast<RecordTag>(tag)) {
    case RecordTag::kCudaApiEnter: {
      CudaCall c;
      c.begin_ns = c.end_ns = now;
      c.api = static_cast<format::CudaApi>(U32(f[1]));
      c.cbid = U32(f[2]);
      c.name = string_ref_(f[3]);
      c.correlation = f[4];
      c.thread = thread;
      // A correlation id seen again while its first call is open: the first never returned.
      open_calls_[c.correlation] = out_.calls.size();
      out_.calls.push_back(c);
      break;
    }
    case RecordTag::kCudaApiExit: {
      auto it = open_calls_.find(f[1]);
      if (it == open_calls_.end()) {
        ++out_.unmatched_exits;
        break;
      }
      CudaCall& c = out_.calls[it->second];
      c.end_ns = std::max(now, c.begin_ns);
      c.status = U32(f[2]);
      c.returned = true;
      open_calls_.erase(it);
      break;
    }
    case RecordTag::kGpuKernel: {
      GpuKernel k;
      k.start_ns = start;
      k.end_ns = end;
      k.device = U32(f[2]);
      k.context = U32(f[3]);
      k.stream = U32(f[4]);
      k.correlation = f[5];
      k.name = string_ref_(f[6]);
      for (int i = 0; i < 3; ++i) {
        k.grid[i] = U32(f[7 + i]);
        k.block[i] = U32(f[10 + i]);
      }
      k.registers = U32(f[13]);
      k.static_shared = U32(f[14]);
      k.dynamic_shared = U32(f[15]);
      k.graph = U32(f[16]);
      k.launch = static_cast<format::KernelLaunch>(U32(f[17]));
      out_.kernels.push_back(k);
      break;
    }
    case RecordTag::kGpuMemcpy: {
      GpuMemcpy m;
      m.start_ns = start;
      m.end_ns = end;
      m.device = U32(f[2]);
      m.context = U32(f[3]);
      m.stream = U32(f[4]);
      m.correlation = f[5];
      m.kind = static_cast<format::MemcpyKind>(U32(f[6]));
      m.src_memory = static_cast<format::MemoryKind>(U32(f[7]));
      m.dst_memory = static_cast<format::MemoryKind>(U32(f[8]));
      m.bytes = f[9];
      m.src_device = U32(f[10]);
      m.dst_device = U32(f[11]);
      m.async = (f[12] & 1) != 0;
      m.graph = U32(f[13]);
      out_.memcpys.push_back(m);
      break;
    }
    case RecordTag::kGpuMemset: {
      GpuMemset m;
      m.start_ns = start;
      m.end_ns = end;
      m.device = U32(f[2]);
      m.context = U32(f[3]);
      m.stream = U32(f[4]);
      m.correlation = f[5];
      m.bytes = f[6];
      m.value = U32(f[7]);
      m.memory = static_cast<format::MemoryKind>(U32(f[8]));
      m.async = (f[9] & 1) != 0;
      m.graph = U32(f[10]);
      out_.memsets.push_back(m);
      break;
    }
    case RecordTag::kGpuSync: {
      GpuSync s;
      s.start_ns = start;
      s.end_ns = end;
      s.context = U32(f[2]);
      s.has_stream = f[3] != 0;
      s.stream = s.has_stream ? U32(f[3] - 1) : 0;
      s.type = static_cast<format::SyncType>(U32(f[4]));
      s.correlation = f[5];
      out_.syncs.push_back(s);
      break;
    }
    case RecordTag::kGpuOverhead: {
      GpuOverhead o;
      o.start_ns = start;
      o.end_ns = end;
      o.kind = U32(f[2]);
      o.object_kind = U32(f[3]);
      o.object_id = f[4];
      out_.overheads.push_back(o);
      break;
    }
    case RecordTag::kGpuDevice: {
      GpuDevice d;
      d.id = U32(f[0]);
      d.name = string_ref_(f[1]);
      d.cc_major = U32(f[2]);
      d.cc_minor = U32(f[3]);
      d.sm_count = U32(f[4]);
      d.global_memory = f[5];
      // A device described twice (re-initialisation): the later description wins.
      auto it = std::find_if(out_.devices.begin(), out_.devices.end(), [&](const GpuDevice& x) { return x.id == d.id; });
      if (it != out_.devices.end()) {
        *it = d;
      } else {
        out_.devices.push_back(d);
      }
      break;
    }
    case RecordTag::kGpuContext: {
      GpuContext c{U32(f[0]), U32(f[1])};
      auto it =
          std::find_if(out_.contexts.begin(), out_.contexts.end(), [&](const GpuContext& x) { return x.id == c.id; });
      if (it != out_.contexts.end()) {
        *it = c;
      } else {
        out_.contexts.push_back(c);
      }
      break;
    }
    case RecordTag::kGpuDropped:
      out_.records_dropped += f[1];
      break;
    case RecordTag::kGpuStatus: {
      GpuStatusEvent s;
      s.time_ns = now;
      s.raw_state = U32(f[1]);
      s.state = static_cast<format::GpuState>(s.raw_state);
      s.cupti_result = f[2];
      s.cupti_version = f[3];
      s.driver_version = f[4];
      s.message = string_ref_(f[5]);
      out_.status.push_back(s);
      break;
    }
    case RecordTag::kCapture:
      out_.captures.push_back({now, f[1] != 0, U32(f[2])});
      break;
    default: break;
  }
}

void CudaRecordDecoder::Resolve(const std::vector<StringId>& pool_of_ref) {
  auto map = [&](StringId& ref) { ref = ref < pool_of_ref.size() ? pool_of_ref[ref] : 0; };
  for (CudaCall& c : out_.calls) map(c.name);
  for (GpuKernel& k : out_.kernels) map(k.name);
  for (GpuDevice& d : out_.devices) map(d.name);
  for (GpuStatusEvent& s : out_.status) map(s.message);
  // The chunks of a thread are read in order, those of several threads one after the other: put
  // calls in time order (ties: enter order) for every consumer.
  std::stable_sort(out_.calls.begin(), out_.calls.end(),
                   [](const CudaCall& a, const CudaCall& b) { return a.begin_ns < b.begin_ns; });
}

}  // namespace trainprof::collector
