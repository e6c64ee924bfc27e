// CUPTI activity records built by field name, laid out as CUPTI (the struct versions the library
// reads, inject/cupti/activity_layout.h) hands them over: for the fake CUDA workload
// (cupti_fake_workload.cc) and the converter's unit tests (tests/unit/inject/cupti_convert_test.cc).
//   auto k = MakeKernel({.start = 1000, .end = 2000, .correlation = 7, .name = "_Z3foov"});
// Fields not given are zero (as in a record CUPTI filled), except kind.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <cstring>

namespace trainprof::testing {

/// A record of type T with every byte zero.
template <typename T>
T Zeroed() {
  T r;
  std::memset(static_cast<void*>(&r), 0, sizeof(r));
  return r;
}

struct KernelSpec {
  uint64_t start = 0, end = 0;
  uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  uint16_t registers = 0;
  int32_t static_shared = 0, dynamic_shared = 0;
  uint32_t graph = 0;
  uint8_t launch_type = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  const char* name = "";
  CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
};
inline CUpti_ActivityKernel10 MakeKernel(const KernelSpec& s) {
  auto k = Zeroed<CUpti_ActivityKernel10>();
  k.kind = s.kind;
  k.start = s.start, k.end = s.end;
  k.deviceId = s.device, k.contextId = s.context, k.streamId = s.stream, k.correlationId = s.correlation;
  k.gridX = s.grid[0], k.gridY = s.grid[1], k.gridZ = s.grid[2];
  k.blockX = s.block[0], k.blockY = s.block[1], k.blockZ = s.block[2];
  k.registersPerThread = s.registers;
  k.staticSharedMemory = s.static_shared, k.dynamicSharedMemory = s.dynamic_shared;
  k.graphId = s.graph;
  k.launchType = s.launch_type;
  k.name = s.name;
  return k;
}

/// A copy: CUpti_ActivityMemcpy6 (MEMCPY: one device, or it and the host) or
/// CUpti_ActivityMemcpyPtoP4 (MEMCPY2: between two devices, src_device and dst_device).
struct CopySpec {
  uint64_t start = 0, end = 0;
  uint8_t copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, src_kind = 0, dst_kind = 0;
  uint8_t flags = 0;
  uint64_t bytes = 0;
  uint32_t device = 0, context = 0, stream = 0, correlation = 0, runtime_correlation = 0, graph = 0;
  uint32_t src_device = 0, dst_device = 0;  ///< MEMCPY2 only
};
template <typename Record = CUpti_ActivityMemcpy6>
Record MakeCopy(const CopySpec& s) {
  auto m = Zeroed<Record>();
  m.copyKind = s.copy_kind, m.srcKind = s.src_kind, m.dstKind = s.dst_kind;
  m.flags = s.flags;
  m.bytes = s.bytes;
  m.start = s.start, m.end = s.end;
  m.deviceId = s.device, m.contextId = s.context, m.streamId = s.stream, m.correlationId = s.correlation;
  m.graphId = s.graph;
  if constexpr (requires { m.srcDeviceId; }) {
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    m.srcDeviceId = s.src_device, m.dstDeviceId = s.dst_device;
  } else {
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.runtimeCorrelationId = s.runtime_correlation;
  }
  return m;
}

struct MemsetSpec {
  uint64_t start = 0, end = 0;
  uint32_t value = 0;
  uint64_t bytes = 0;
  uint32_t device = 0, context = 0, stream = 0, correlation = 0, graph = 0;
  uint16_t flags = 0, memory = 0;
};
inline CUpti_ActivityMemset4 MakeMemset(const MemsetSpec& s) {
  auto m = Zeroed<CUpti_ActivityMemset4>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.value = s.value, m.bytes = s.bytes;
  m.start = s.start, m.end = s.end;
  m.deviceId = s.device, m.contextId = s.context, m.streamId = s.stream, m.correlationId = s.correlation;
  m.flags = s.flags, m.memoryKind = s.memory;
  m.graphId = s.graph;
  return m;
}

struct DeviceSpec {
  uint32_t id = 0;
  const char* name = "";
  uint32_t cc_major = 0, cc_minor = 0, sms = 0;
  uint64_t memory = 0;
};
inline CUpti_ActivityDevice5 MakeDevice(const DeviceSpec& s) {
  auto d = Zeroed<CUpti_ActivityDevice5>();
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = s.id, d.name = s.name;
  d.computeCapabilityMajor = s.cc_major, d.computeCapabilityMinor = s.cc_minor;
  d.numMultiprocessors = s.sms, d.globalMemorySize = s.memory;
  return d;
}

}  // namespace trainprof::testing
