// Which CUPTI activity record structs the converter reads, and why one reader fits every CUPTI
// version it accepts.
//
// CUPTI hands over records laid out as the struct version of the libcupti that is loaded, not of
// the headers we were built with: CUDA 13's libcupti writes CUpti_ActivityKernel10, CUDA 12.x's
// Kernel9 (or 8, 7), CUDA 12.8 moved memcpy to Memcpy6, and so on. Each newer version appends
// fields or reuses padding; the fields we read sit at the same offsets in all of them. The
// static_asserts below hold that against the older structs in the headers
// (cupti_activity_deprecated.h), and check that each field we read lies inside the oldest,
// smallest version, so no read goes past a record. cupti_api.cc accepts the CUPTI versions these
// cover (CUDA 11.8 onwards) up to the major version of these headers.
#pragma once

#include <cupti.h>

#include <cstddef>

namespace trainprof::inject::cupti {

using KernelRecord = CUpti_ActivityKernel10;          // CONCURRENT_KERNEL, KERNEL
using MemcpyRecord = CUpti_ActivityMemcpy6;           // MEMCPY
using PeerMemcpyRecord = CUpti_ActivityMemcpyPtoP4;   // MEMCPY2
using MemsetRecord = CUpti_ActivityMemset4;           // MEMSET
using SyncRecord = CUpti_ActivitySynchronization2;    // SYNCHRONIZATION
using OverheadRecord = CUpti_ActivityOverhead3;       // OVERHEAD
using DeviceRecord = CUpti_ActivityDevice5;           // DEVICE
using ContextRecord = CUpti_ActivityContext3;         // CONTEXT

namespace layout {

// Each field of New is where Old has it, and inside Old: TRAINPROF_SAME_FIELDS(New, Old, f, ...).
#define TRAINPROF_SAME_FIELD(New, Old, field)                                       \
  static_assert(offsetof(New, field) == offsetof(Old, field) &&                     \
                    sizeof(New::field) == sizeof(Old::field) &&                     \
                    offsetof(Old, field) + sizeof(Old::field) <= sizeof(Old),       \
                #New "::" #field " moved since " #Old);
// A macro for each field of a list (C++20 __VA_OPT__; up to 256 fields).
#define TRAINPROF_PARENS ()
#define TRAINPROF_EXPAND(...) TRAINPROF_EXPAND4(TRAINPROF_EXPAND4(TRAINPROF_EXPAND4(TRAINPROF_EXPAND4(__VA_ARGS__))))
#define TRAINPROF_EXPAND4(...) TRAINPROF_EXPAND3(TRAINPROF_EXPAND3(TRAINPROF_EXPAND3(TRAINPROF_EXPAND3(__VA_ARGS__))))
#define TRAINPROF_EXPAND3(...) TRAINPROF_EXPAND2(TRAINPROF_EXPAND2(TRAINPROF_EXPAND2(TRAINPROF_EXPAND2(__VA_ARGS__))))
#define TRAINPROF_EXPAND2(...) __VA_ARGS__
#define TRAINPROF_SAME_FIELDS(New, Old, ...) __VA_OPT__(TRAINPROF_EXPAND(TRAINPROF_SAME_FIELDS_1(New, Old, __VA_ARGS__)))
#define TRAINPROF_SAME_FIELDS_1(New, Old, field, ...) \
  TRAINPROF_SAME_FIELD(New, Old, field) __VA_OPT__(TRAINPROF_SAME_FIELDS_AGAIN TRAINPROF_PARENS(New, Old, __VA_ARGS__))
#define TRAINPROF_SAME_FIELDS_AGAIN() TRAINPROF_SAME_FIELDS_1

// The fields the converter reads, per record, and the older structs that must have them in place.
#define TRAINPROF_KERNEL_FIELDS \
  kind, registersPerThread, start, end, deviceId, contextId, streamId, gridX, gridY, gridZ, \
  blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, correlationId, name, \
  launchType, graphId
TRAINPROF_SAME_FIELDS(KernelRecord, CUpti_ActivityKernel7, TRAINPROF_KERNEL_FIELDS)
TRAINPROF_SAME_FIELDS(KernelRecord, CUpti_ActivityKernel8, TRAINPROF_KERNEL_FIELDS)
TRAINPROF_SAME_FIELDS(KernelRecord, CUpti_ActivityKernel9, TRAINPROF_KERNEL_FIELDS)
#define TRAINPROF_MEMCPY_FIELDS \
  kind, copyKind, srcKind, dstKind, flags, bytes, start, end, deviceId, contextId, streamId, \
  correlationId, runtimeCorrelationId, graphId
TRAINPROF_SAME_FIELDS(MemcpyRecord, CUpti_ActivityMemcpy4, TRAINPROF_MEMCPY_FIELDS)
TRAINPROF_SAME_FIELDS(MemcpyRecord, CUpti_ActivityMemcpy5, TRAINPROF_MEMCPY_FIELDS)
#define TRAINPROF_OVERHEAD_FIELDS \
  kind, overheadKind, objectKind, objectId, start, end
TRAINPROF_SAME_FIELDS(OverheadRecord, CUpti_ActivityOverhead, TRAINPROF_OVERHEAD_FIELDS)
TRAINPROF_SAME_FIELDS(OverheadRecord, CUpti_ActivityOverhead2, TRAINPROF_OVERHEAD_FIELDS)
#define TRAINPROF_DEVICE_FIELDS \
  kind, globalMemorySize, numMultiprocessors, computeCapabilityMajor, computeCapabilityMinor, id, \
  name
TRAINPROF_SAME_FIELDS(DeviceRecord, CUpti_ActivityDevice2, TRAINPROF_DEVICE_FIELDS)
TRAINPROF_SAME_FIELDS(DeviceRecord, CUpti_ActivityDevice3, TRAINPROF_DEVICE_FIELDS)
TRAINPROF_SAME_FIELDS(DeviceRecord, CUpti_ActivityDevice4, TRAINPROF_DEVICE_FIELDS)
#define TRAINPROF_CONTEXT_FIELDS \
  kind, contextId, deviceId
TRAINPROF_SAME_FIELDS(ContextRecord, CUpti_ActivityContext, TRAINPROF_CONTEXT_FIELDS)
TRAINPROF_SAME_FIELDS(ContextRecord, CUpti_ActivityContext2, TRAINPROF_CONTEXT_FIELDS)
#define TRAINPROF_PEERMEMCPY_FIELDS \
  kind, copyKind, srcKind, dstKind, flags, bytes, start, end, deviceId, contextId, streamId, \
  srcDeviceId, dstDeviceId, correlationId, graphId
TRAINPROF_SAME_FIELDS(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, TRAINPROF_PEERMEMCPY_FIELDS)
#define TRAINPROF_MEMSET_FIELDS \
  kind, value, bytes, start, end, deviceId, contextId, streamId, correlationId, flags, memoryKind, \
  graphId
TRAINPROF_SAME_FIELDS(MemsetRecord, CUpti_ActivityMemset3, TRAINPROF_MEMSET_FIELDS)
#define TRAINPROF_SYNC_FIELDS \
  kind, type, start, end, correlationId, contextId, streamId
TRAINPROF_SAME_FIELDS(SyncRecord, CUpti_ActivitySynchronization, TRAINPROF_SYNC_FIELDS)

#undef TRAINPROF_KERNEL_FIELDS
#undef TRAINPROF_MEMCPY_FIELDS
#undef TRAINPROF_OVERHEAD_FIELDS
#undef TRAINPROF_DEVICE_FIELDS
#undef TRAINPROF_CONTEXT_FIELDS
#undef TRAINPROF_PEERMEMCPY_FIELDS
#undef TRAINPROF_MEMSET_FIELDS
#undef TRAINPROF_SYNC_FIELDS
#undef TRAINPROF_SAME_FIELDS_AGAIN
#undef TRAINPROF_SAME_FIELDS_1
#undef TRAINPROF_SAME_FIELDS
#undef TRAINPROF_EXPAND2
#undef TRAINPROF_EXPAND3
#undef TRAINPROF_EXPAND4
#undef TRAINPROF_EXPAND
#undef TRAINPROF_PARENS
#undef TRAINPROF_SAME_FIELD

}  // namespace layout
}  // namespace trainprof::inject::cupti
