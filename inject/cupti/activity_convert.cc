#include "cupti/activity_convert.h"

#include <cstring>

namespace trainprof::inject::cupti {
namespace {

using format::PutVarint;
using format::RecordTag;
using format::ZigZag;

inline uint8_t* Tag(uint8_t* p, RecordTag tag) {
  *p = static_cast<uint8_t>(tag);
  return p + 1;
}

// A time relative to the chunk's base, zigzag encoded: zero and reversed times are kept as they are.
inline uint8_t* PutTime(uint8_t* p, uint64_t t, uint64_t base_ns) {
  return PutVarint(p, ZigZag(static_cast<int64_t>(t - base_ns)));
}

// CUPTI's 32-bit signed sizes (grid, block, shared memory) as the format's unsigned varints.
inline uint8_t* PutU32(uint8_t* p, int32_t v) { return PutVarint(p, static_cast<uint32_t>(v)); }

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
  uint8_t* p = Tag(out, RecordTag::kGpuKernel);
  p = PutTime(p, k.start, base_ns);
  p = PutTime(p, k.end, base_ns);
  p = PutVarint(p, k.deviceId);
  p = PutVarint(p, k.contextId);
  p = PutVarint(p, k.streamId);
  p = PutVarint(p, k.correlationId);
  p = PutVarint(p, name);
  p = PutU32(p, k.gridX);
  p = PutU32(p, k.gridY);
  p = PutU32(p, k.gridZ);
  p = PutU32(p, k.blockX);
  p = PutU32(p, k.blockY);
  p = PutU32(p, k.blockZ);
  p = PutVarint(p, k.registersPerThread);
  p = PutU32(p, k.staticSharedMemory);
  p = PutU32(p, k.dynamicSharedMemory);
  p = PutVarint(p, k.graphId);
  p = PutVarint(p, static_cast<uint64_t>(KernelLaunchOf(k.launchType, k.graphId)));
  return Done(p, out);
}

namespace {
// GPU_MEMCPY from either copy record: a plain copy (one device, or it and the host) or a peer copy.
template <typename Record>
size_t EncodeCopy(const Record& m, uint64_t correlation, uint32_t src_device, uint32_t dst_device, uint64_t base_ns,
                  uint8_t* out) {
  uint8_t* p = Tag(out, RecordTag::kGpuMemcpy);
  p = PutTime(p, m.start, base_ns);
  p = PutTime(p, m.end, base_ns);
  p = PutVarint(p, m.deviceId);
  p = PutVarint(p, m.contextId);
  p = PutVarint(p, m.streamId);
  p = PutVarint(p, correlation);
  p = PutVarint(p, m.copyKind);
  p = PutVarint(p, m.srcKind);
  p = PutVarint(p, m.dstKind);
  p = PutVarint(p, m.bytes);
  p = PutVarint(p, src_device);
  p = PutVarint(p, dst_device);
  p = PutVarint(p, (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0);
  p = PutVarint(p, m.graphId);
  return Done(p, out);
}
}  // namespace

size_t EncodeMemcpy(const MemcpyRecord& m, uint64_t base_ns, uint8_t* out) {
  return EncodeCopy(m, MemcpyCorrelation(m), m.deviceId, m.deviceId, base_ns, out);
}

size_t EncodePeerMemcpy(const PeerMemcpyRecord& m, uint64_t base_ns, uint8_t* out) {
  return EncodeCopy(m, m.correlationId, m.srcDeviceId, m.dstDeviceId, base_ns, out);
}

size_t EncodeMemset(const MemsetRecord& m, uint64_t base_ns, uint8_t* out) {
  uint8_t* p = Tag(out, RecordTag::kGpuMemset);
  p = PutTime(p, m.start, base_ns);
  p = PutTime(p, m.end, base_ns);
  p = PutVarint(p, m.deviceId);
  p = PutVarint(p, m.contextId);
  p = PutVarint(p, m.streamId);
  p = PutVarint(p, m.correlationId);
  p = PutVarint(p, m.bytes);
  p = PutVarint(p, m.value);
  p = PutVarint(p, m.memoryKind);
  p = PutVarint(p, (m.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1 : 0);
  p = PutVarint(p, m.graphId);
  return Done(p, out);
}

size_t EncodeSync(const SyncRecord& s, uint64_t base_ns, uint8_t* out) {
  uint8_t* p = Tag(out, RecordTag::kGpuSync);
  p = PutTime(p, s.start, base_ns);
  p = PutTime(p, s.end, base_ns);
  p = PutVarint(p, s.contextId);
  // stream + 1, 0 = none (a context or event synchronisation has no stream).
  p = PutVarint(p, s.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : uint64_t{s.streamId} + 1);
  p = PutVarint(p, static_cast<uint32_t>(s.type));
  p = PutVarint(p, s.correlationId);
  return Done(p, out);
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
  uint8_t* p = Tag(out, RecordTag::kGpuOverhead);
  p = PutTime(p, o.start, base_ns);
  p = PutTime(p, o.end, base_ns);
  p = PutVarint(p, static_cast<uint32_t>(o.overheadKind));
  p = PutVarint(p, static_cast<uint32_t>(o.objectKind));
  p = PutVarint(p, object_id);
  return Done(p, out);
}

size_t EncodeDevice(const DeviceRecord& d, uint32_t name, uint8_t* out) {
  uint8_t* p = Tag(out, RecordTag::kGpuDevice);
  p = PutVarint(p, d.id);
  p = PutVarint(p, name);
  p = PutVarint(p, d.computeCapabilityMajor);
  p = PutVarint(p, d.computeCapabilityMinor);
  p = PutVarint(p, d.numMultiprocessors);
  p = PutVarint(p, d.globalMemorySize);
  return Done(p, out);
}

size_t EncodeContext(const ContextRecord& c, uint8_t* out) {
  uint8_t* p = Tag(out, RecordTag::kGpuContext);
  p = PutVarint(p, c.contextId);
  p = PutVarint(p, c.deviceId);
  return Done(p, out);
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

bool ActivityStart(const CUpti_Activity* rec, uint64_t* start_ns) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      *start_ns = reinterpret_cast<const KernelRecord*>(rec)->start;
      return true;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      *start_ns = reinterpret_cast<const MemcpyRecord*>(rec)->start;
      return true;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      *start_ns = reinterpret_cast<const PeerMemcpyRecord*>(rec)->start;
      return true;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      *start_ns = reinterpret_cast<const MemsetRecord*>(rec)->start;
      return true;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      *start_ns = reinterpret_cast<const SyncRecord*>(rec)->start;
      return true;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      *start_ns = reinterpret_cast<const OverheadRecord*>(rec)->start;
      return true;
    default:
      return false;  // devices, contexts: definitions, not timed
  }
}

}  // namespace trainprof::inject::cupti
