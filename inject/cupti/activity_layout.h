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

// `field` of New is where Old has it, and inside Old.
#define TRAINPROF_SAME_FIELD(New, Old, field)                                       \
  static_assert(offsetof(New, field) == offsetof(Old, field) &&                     \
                    sizeof(New::field) == sizeof(Old::field) &&                     \
                    offsetof(Old, field) + sizeof(Old::field) <= sizeof(Old),       \
                #New "::" #field " moved since " #Old)

#define TRAINPROF_KERNEL_FIELDS(Old)                                                 \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, kind);                                     \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, registersPerThread);                       \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, start);                                    \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, end);                                      \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, deviceId);                                 \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, contextId);                                \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, streamId);                                 \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, gridX);                                    \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, gridY);                                    \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, gridZ);                                    \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, blockX);                                   \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, blockY);                                   \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, blockZ);                                   \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, staticSharedMemory);                       \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, dynamicSharedMemory);                      \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, correlationId);                            \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, name);                                     \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, launchType);                               \
  TRAINPROF_SAME_FIELD(KernelRecord, Old, graphId)
TRAINPROF_KERNEL_FIELDS(CUpti_ActivityKernel7);
TRAINPROF_KERNEL_FIELDS(CUpti_ActivityKernel8);
TRAINPROF_KERNEL_FIELDS(CUpti_ActivityKernel9);

#define TRAINPROF_MEMCPY_FIELDS(Old)                                                 \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, kind);                                     \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, copyKind);                                 \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, srcKind);                                  \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, dstKind);                                  \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, flags);                                    \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, bytes);                                    \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, start);                                    \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, end);                                      \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, deviceId);                                 \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, contextId);                                \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, streamId);                                 \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, correlationId);                            \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, runtimeCorrelationId);                     \
  TRAINPROF_SAME_FIELD(MemcpyRecord, Old, graphId)
TRAINPROF_MEMCPY_FIELDS(CUpti_ActivityMemcpy4);
TRAINPROF_MEMCPY_FIELDS(CUpti_ActivityMemcpy5);

TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, kind);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, copyKind);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, srcKind);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, dstKind);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, flags);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, bytes);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, start);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, end);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, deviceId);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, contextId);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, streamId);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, srcDeviceId);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, dstDeviceId);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, correlationId);
TRAINPROF_SAME_FIELD(PeerMemcpyRecord, CUpti_ActivityMemcpyPtoP3, graphId);

TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, kind);
TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, value);
TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, bytes);
TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, start);
TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, end);
TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, deviceId);
TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, contextId);
TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, streamId);
TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, correlationId);
TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, flags);
TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, memoryKind);
TRAINPROF_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset3, graphId);

TRAINPROF_SAME_FIELD(SyncRecord, CUpti_ActivitySynchronization, kind);
TRAINPROF_SAME_FIELD(SyncRecord, CUpti_ActivitySynchronization, type);
TRAINPROF_SAME_FIELD(SyncRecord, CUpti_ActivitySynchronization, start);
TRAINPROF_SAME_FIELD(SyncRecord, CUpti_ActivitySynchronization, end);
TRAINPROF_SAME_FIELD(SyncRecord, CUpti_ActivitySynchronization, correlationId);
TRAINPROF_SAME_FIELD(SyncRecord, CUpti_ActivitySynchronization, contextId);
TRAINPROF_SAME_FIELD(SyncRecord, CUpti_ActivitySynchronization, streamId);

#define TRAINPROF_OVERHEAD_FIELDS(Old)                                               \
  TRAINPROF_SAME_FIELD(OverheadRecord, Old, kind);                                   \
  TRAINPROF_SAME_FIELD(OverheadRecord, Old, overheadKind);                           \
  TRAINPROF_SAME_FIELD(OverheadRecord, Old, objectKind);                             \
  TRAINPROF_SAME_FIELD(OverheadRecord, Old, objectId);                               \
  TRAINPROF_SAME_FIELD(OverheadRecord, Old, start);                                  \
  TRAINPROF_SAME_FIELD(OverheadRecord, Old, end)
TRAINPROF_OVERHEAD_FIELDS(CUpti_ActivityOverhead);
TRAINPROF_OVERHEAD_FIELDS(CUpti_ActivityOverhead2);

#define TRAINPROF_DEVICE_FIELDS(Old)                                                 \
  TRAINPROF_SAME_FIELD(DeviceRecord, Old, kind);                                     \
  TRAINPROF_SAME_FIELD(DeviceRecord, Old, globalMemorySize);                         \
  TRAINPROF_SAME_FIELD(DeviceRecord, Old, numMultiprocessors);                       \
  TRAINPROF_SAME_FIELD(DeviceRecord, Old, computeCapabilityMajor);                   \
  TRAINPROF_SAME_FIELD(DeviceRecord, Old, computeCapabilityMinor);                   \
  TRAINPROF_SAME_FIELD(DeviceRecord, Old, id);                                       \
  TRAINPROF_SAME_FIELD(DeviceRecord, Old, name)
TRAINPROF_DEVICE_FIELDS(CUpti_ActivityDevice2);
TRAINPROF_DEVICE_FIELDS(CUpti_ActivityDevice3);
TRAINPROF_DEVICE_FIELDS(CUpti_ActivityDevice4);

#define TRAINPROF_CONTEXT_FIELDS(Old)                                                \
  TRAINPROF_SAME_FIELD(ContextRecord, Old, kind);                                    \
  TRAINPROF_SAME_FIELD(ContextRecord, Old, contextId);                               \
  TRAINPROF_SAME_FIELD(ContextRecord, Old, deviceId)
TRAINPROF_CONTEXT_FIELDS(CUpti_ActivityContext);
TRAINPROF_CONTEXT_FIELDS(CUpti_ActivityContext2);

#undef TRAINPROF_KERNEL_FIELDS
#undef TRAINPROF_MEMCPY_FIELDS
#undef TRAINPROF_OVERHEAD_FIELDS
#undef TRAINPROF_DEVICE_FIELDS
#undef TRAINPROF_CONTEXT_FIELDS
#undef TRAINPROF_SAME_FIELD

}  // namespace layout
}  // namespace trainprof::inject::cupti
