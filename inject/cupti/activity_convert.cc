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

}  // namespace

bool IsConvertedKind(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
    case CUPTI_ACTIVITY_KIND_MEMSET:
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
    case CUPTI_ACTIVITY_KIND_DEVICE:
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return true;
    default:
      return false;
  }
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
  const rec::GpuKernel r{.zs = Rel(k.start, base_ns),
                         .ze = Rel(k.end, base_ns),
                         .device = k.deviceId,
                         .context = k.contextId,
                         .stream = k.streamId,
                         .correlation = k.correlationId,
                         .name = name,
                         .grid_x = U32(k.gridX),
                         .grid_y = U32(k.gridY),
                         .grid_z = U32(k.gridZ),
                         .block_x = U32(k.blockX),
                         .block_y = U32(k.blockY),
                         .block_z = U32(k.blockZ),
                         .registers = k.registersPerThread,
                         .static_shared = U32(k.staticSharedMemory),
                         .dynamic_shared = U32(k.dynamicSharedMemory),
                         .graph = k.graphId,
                         .launch = static_cast<uint64_t>(KernelLaunchOf(k.launchType, k.graphId))};
  return Done(EncodeUntimed(out, r), out);
}

namespace {
// GPU_MEMCPY from either copy record: a plain copy (one device, or it and the host) or a peer copy.
template <typename Record>
size_t EncodeCopy(const Record& m, uint64_t correlation, uint32_t src_device, uint32_t dst_device, uint64_t base_ns,
                  uint8_t* out) {
  const rec::GpuMemcpy r{.zs = Rel(m.start, base_ns),
                         .ze = Rel(m.end, base_ns),
                         .device = m.deviceId,
                         .context = m.contextId,
                         .stream = m.streamId,
                         .correlation = correlation,
                         .copy_kind = m.copyKind,
                         .src_kind = m.srcKind,
                         .dst_kind = m.dstKind,
                         .bytes_copied = m.bytes,
                         .src_device = src_device,
                         .dst_device = dst_device,
                         .flags = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1u : 0u,
                         .graph = m.graphId};
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
  const rec::GpuMemset r{.zs = Rel(m.start, base_ns),
                         .ze = Rel(m.end, base_ns),
                         .device = m.deviceId,
                         .context = m.contextId,
                         .stream = m.streamId,
                         .correlation = m.correlationId,
                         .bytes_set = m.bytes,
                         .value = m.value,
                         .memory = m.memoryKind,
                         .flags = (m.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1u : 0u,
                         .graph = m.graphId};
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
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return EncodeKernel(*reinterpret_cast<const KernelRecord*>(rec), base_ns, name, out);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return EncodeMemcpy(*reinterpret_cast<const MemcpyRecord*>(rec), base_ns, out);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return EncodePeerMemcpy(*reinterpret_cast<const PeerMemcpyRecord*>(rec), base_ns, out);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return EncodeMemset(*reinterpret_cast<const MemsetRecord*>(rec), base_ns, out);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return EncodeSync(*reinterpret_cast<const SyncRecord*>(rec), base_ns, out);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return EncodeOverhead(*reinterpret_cast<const OverheadRecord*>(rec), base_ns, out);
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return EncodeDevice(*reinterpret_cast<const DeviceRecord*>(rec), name, out);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return EncodeContext(*reinterpret_cast<const ContextRecord*>(rec), out);
    default:
      return 0;
  }
}

namespace {
template <typename Record>
bool StartOf(const CUpti_Activity* rec, uint64_t* start_ns) {
  *start_ns = reinterpret_cast<const Record*>(rec)->start;
  return true;
}
}  // namespace

bool ActivityStart(const CUpti_Activity* rec, uint64_t* start_ns) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return StartOf<KernelRecord>(rec, start_ns);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return StartOf<MemcpyRecord>(rec, start_ns);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return StartOf<PeerMemcpyRecord>(rec, start_ns);
    case CUPTI_ACTIVITY_KIND_MEMSET: return StartOf<MemsetRecord>(rec, start_ns);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return StartOf<SyncRecord>(rec, start_ns);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return StartOf<OverheadRecord>(rec, start_ns);
    default: return false;  // devices, contexts: definitions, not timed
  }
}

}  // namespace trainprof::inject::cupti
