#include "cupti/activity_convert.h"

#include <cstring>

namespace trainprof::inject::cupti {
namespace {

using format::EncodeUntimed;
namespace rec = format::rec;

// A time relative to the chunk's base (zs, ze): zero and reversed times are kept as they are.
inline int64_t Rel(uint64_t t, uint64_t base_ns) { return static_cast<int64_t>(t - base_ns); }

// CUPTI's 32-bit signed sizes (grid, block, shared memory) as the format's unsigned varints.
inline uint64_t U32(int32_t v) { return static_cast<uint32_t>(v); }

inline size_t Done(const uint8_t* end, const uint8_t* out) { return static_cast<size_t>(end - out); }

// A record of work on a stream (kernel, copy, memset) with what every such record has: its times
// relative to the chunk's base, device, context, stream and correlation id.
template <typename Out, typename Record>
Out OnStream(const Record& m, uint64_t correlation, uint64_t base_ns) {
  Out r{};
  r.zs = Rel(m.start, base_ns);
  r.ze = Rel(m.end, base_ns);
  r.device = m.deviceId;
  r.context = m.contextId;
  r.stream = m.streamId;
  r.correlation = correlation;
  return r;
}

// The one list of the kinds converted and the record each is: `visit(rec as that record type)`
// for a converted `kind`, `otherwise` for the others (`rec` may be null when `visit` does not
// read it).
template <typename Result, typename Visit>
Result ByKind(CUpti_ActivityKind kind, const CUpti_Activity* rec, Result otherwise, Visit&& visit) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return visit(reinterpret_cast<const KernelRecord*>(rec));
    case CUPTI_ACTIVITY_KIND_MEMCPY: return visit(reinterpret_cast<const MemcpyRecord*>(rec));
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return visit(reinterpret_cast<const PeerMemcpyRecord*>(rec));
    case CUPTI_ACTIVITY_KIND_MEMSET: return visit(reinterpret_cast<const MemsetRecord*>(rec));
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return visit(reinterpret_cast<const SyncRecord*>(rec));
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return visit(reinterpret_cast<const OverheadRecord*>(rec));
    case CUPTI_ACTIVITY_KIND_DEVICE: return visit(reinterpret_cast<const DeviceRecord*>(rec));
    case CUPTI_ACTIVITY_KIND_CONTEXT: return visit(reinterpret_cast<const ContextRecord*>(rec));
    default: return otherwise;
  }
}

// One callable out of several lambdas, each taking one record type (for ByKind).
template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};

}  // namespace

bool IsConvertedKind(CUpti_ActivityKind kind) {
  return ByKind(kind, nullptr, false, [](const auto*) { return true; });
}

const char* ActivityName(const CUpti_Activity* rec) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return reinterpret_cast<const KernelRecord*>(rec)->name;
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return reinterpret_cast<const DeviceRecord*>(rec)->name;
    default:
      return nullptr;
  }
}

uint32_t NameLength(const char* s) {
  size_t n = strnlen(s, format::kMaxStringBytes + 1);
  if (n <= format::kMaxStringBytes) return static_cast<uint32_t>(n);
  n = format::kMaxStringBytes;
  // s[n] is the first byte left out: back up while it continues a multi-byte character.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return static_cast<uint32_t>(n);
}

format::KernelLaunch KernelLaunchOf(uint8_t launch_type, uint32_t graph_id) {
  if (launch_type == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE) return format::KernelLaunch::kCooperative;
  if (launch_type == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE) {
    return format::KernelLaunch::kCooperativeMultiDevice;
  }
  if (graph_id != 0) return format::KernelLaunch::kGraph;
  return format::KernelLaunch::kRegular;
}

uint32_t MemcpyCorrelation(const MemcpyRecord& m) {
  return m.runtimeCorrelationId != 0 ? m.runtimeCorrelationId : m.correlationId;
}

size_t EncodeKernel(const KernelRecord& k, uint64_t base_ns, uint32_t name, uint8_t* out) {
  auto r = OnStream<rec::GpuKernel>(k, k.correlationId, base_ns);
  r.name = name;
  r.grid_x = U32(k.gridX), r.grid_y = U32(k.gridY), r.grid_z = U32(k.gridZ);
  r.block_x = U32(k.blockX), r.block_y = U32(k.blockY), r.block_z = U32(k.blockZ);
  r.registers = k.registersPerThread;
  r.static_shared = U32(k.staticSharedMemory), r.dynamic_shared = U32(k.dynamicSharedMemory);
  r.graph = k.graphId;
  r.launch = static_cast<uint64_t>(KernelLaunchOf(k.launchType, k.graphId));
  return Done(EncodeUntimed(out, r), out);
}

namespace {
// GPU_MEMCPY from either copy record: a plain copy (one device, or it and the host) or a peer copy.
template <typename Record>
size_t EncodeCopy(const Record& m, uint64_t correlation, uint32_t src_device, uint32_t dst_device, uint64_t base_ns,
                  uint8_t* out) {
  auto r = OnStream<rec::GpuMemcpy>(m, correlation, base_ns);
  r.copy_kind = m.copyKind, r.src_kind = m.srcKind, r.dst_kind = m.dstKind;
  r.bytes_copied = m.bytes;
  r.src_device = src_device, r.dst_device = dst_device;
  r.flags = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1u : 0u;
  r.graph = m.graphId;
  return Done(EncodeUntimed(out, r), out);
}
}  // namespace

size_t EncodeMemcpy(const MemcpyRecord& m, uint64_t base_ns, uint8_t* out) {
  return EncodeCopy(m, MemcpyCorrelation(m), m.deviceId, m.deviceId, base_ns, out);
}

size_t EncodePeerMemcpy(const PeerMemcpyRecord& m, uint64_t base_ns, uint8_t* out) {
  return EncodeCopy(m, m.correlationId, m.srcDeviceId, m.dstDeviceId, base_ns, out);
}

size_t EncodeMemset(const MemsetRecord& m, uint64_t base_ns, uint8_t* out) {
  auto r = OnStream<rec::GpuMemset>(m, m.correlationId, base_ns);
  r.bytes_set = m.bytes;
  r.value = m.value;
  r.memory = m.memoryKind;
  r.flags = (m.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1u : 0u;
  r.graph = m.graphId;
  return Done(EncodeUntimed(out, r), out);
}

size_t EncodeSync(const SyncRecord& s, uint64_t base_ns, uint8_t* out) {
  // stream + 1, 0 = none (a context or event synchronisation has no stream).
  const uint64_t stream = s.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : uint64_t{s.streamId} + 1;
  const rec::GpuSync r{.zs = Rel(s.start, base_ns),
                       .ze = Rel(s.end, base_ns),
                       .context = s.contextId,
                       .stream_plus_1 = stream,
                       .type = static_cast<uint32_t>(s.type),
                       .correlation = s.correlationId};
  return Done(EncodeUntimed(out, r), out);
}

size_t EncodeOverhead(const OverheadRecord& o, uint64_t base_ns, uint8_t* out) {
  uint64_t object_id = 0;
  switch (o.objectKind) {
    case CUPTI_ACTIVITY_OBJECT_PROCESS: object_id = o.objectId.pt.processId; break;
    case CUPTI_ACTIVITY_OBJECT_THREAD: object_id = o.objectId.pt.threadId; break;
    case CUPTI_ACTIVITY_OBJECT_DEVICE: object_id = o.objectId.dcs.deviceId; break;
    case CUPTI_ACTIVITY_OBJECT_CONTEXT: object_id = o.objectId.dcs.contextId; break;
    case CUPTI_ACTIVITY_OBJECT_STREAM: object_id = o.objectId.dcs.streamId; break;
    default: break;
  }
  const rec::GpuOverhead r{.zs = Rel(o.start, base_ns),
                           .ze = Rel(o.end, base_ns),
                           .kind = static_cast<uint32_t>(o.overheadKind),
                           .object_kind = static_cast<uint32_t>(o.objectKind),
                           .object_id = object_id};
  return Done(EncodeUntimed(out, r), out);
}

size_t EncodeDevice(const DeviceRecord& d, uint32_t name, uint8_t* out) {
  const rec::GpuDevice r{.device = d.id,
                         .name = name,
                         .cc_major = d.computeCapabilityMajor,
                         .cc_minor = d.computeCapabilityMinor,
                         .sms = d.numMultiprocessors,
                         .memory = d.globalMemorySize};
  return Done(EncodeUntimed(out, r), out);
}

size_t EncodeContext(const ContextRecord& c, uint8_t* out) {
  return Done(EncodeUntimed(out, rec::GpuContext{.context = c.contextId, .device = c.deviceId}), out);
}

size_t EncodeActivity(const CUpti_Activity* rec, uint64_t base_ns, uint32_t name, uint8_t* out) {
  return ByKind(rec->kind, rec, size_t{0},
                Overloaded{[&](const KernelRecord* k) { return EncodeKernel(*k, base_ns, name, out); },
                           [&](const MemcpyRecord* m) { return EncodeMemcpy(*m, base_ns, out); },
                           [&](const PeerMemcpyRecord* m) { return EncodePeerMemcpy(*m, base_ns, out); },
                           [&](const MemsetRecord* m) { return EncodeMemset(*m, base_ns, out); },
                           [&](const SyncRecord* s) { return EncodeSync(*s, base_ns, out); },
                           [&](const OverheadRecord* o) { return EncodeOverhead(*o, base_ns, out); },
                           [&](const DeviceRecord* d) { return EncodeDevice(*d, name, out); },
                           [&](const ContextRecord* c) { return EncodeContext(*c, out); }});
}

bool ActivityStart(const CUpti_Activity* rec, uint64_t* start_ns) {
  return ByKind(rec->kind, rec, false, [&](const auto* r) {
    if constexpr (requires { r->start; }) {
      *start_ns = r->start;
      return true;
    } else {
      return false;  // devices, contexts: definitions, not timed
    }
  });
}

}  // namespace trainprof::inject::cupti
