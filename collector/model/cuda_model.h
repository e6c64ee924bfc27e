// Decoded CUDA records of one process image (trace format v2, tags 48..59): what the reader
// produces for CUPTI's callback and activity data, and what the CUDA tables and the GPU part of
// the bottleneck analysis consume. Record layouts: format/trainprof/trace_format.h.
//
//   CudaData             one per TraceImage
//     ├─ calls           CudaCall: a CUDA API call, enter and exit matched by correlation id
//     ├─ kernels         GpuKernel   ┐
//     ├─ memcpys         GpuMemcpy   │ GPU activity, absolute CLOCK_MONOTONIC ns (chunk base_ns + zs/ze);
//     ├─ memsets         GpuMemset   │ records with a zero or reversed timestamp are not here:
//     ├─ syncs           GpuSync     │ they are counted in invalid_timestamps
//     ├─ overheads       GpuOverhead ┘
//     ├─ kernel_configs              kernels' launch configurations, one entry per distinct one
//     ├─ devices, contexts           definitions (untimed)
//     ├─ status, captures            GPU_STATUS / CAPTURE events, in record order
//     └─ records_dropped, invalid_timestamps, unmatched_exits   counters
//
// Ids (device, context, stream, correlation) are CUPTI's, per process: a correlation id links an
// API call to the GPU work it started. Plain structs in vectors, as for NVTX events: a long run
// has millions of kernels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "collector/base/string_pool.h"
#include "collector/model/kernel_configs.h"
#include "trainprof/trace_format.h"

namespace trainprof::collector {

/// One CUDA runtime or driver API call (CUDA_API_ENTER, and its CUDA_API_EXIT if it returned).
/// 48 bytes (a long run keeps millions).
struct CudaCall {
  uint64_t begin_ns = 0;     ///< CLOCK_MONOTONIC, at enter
  uint64_t end_ns = 0;       ///< at exit; == begin_ns when !returned
  uint64_t correlation = 0;  ///< CUPTI correlation id
  StringId name = 0;         ///< CUPTI's function name as recorded (e.g. "cudaLaunchKernel_v7000")
  uint32_t thread = 0;       ///< index into TraceImage::threads
  uint32_t status = 0;       ///< cudaError_t / CUresult returned (0 = success); 0 when !returned
  format::CudaApi api = format::CudaApi::kRuntime;
  uint32_t stack = 0;  ///< the EVENT_STACK after its exit: a Stack id of the image (0 = none; stacks.h)
  /// CUPTI callback id (CUpti_runtime_api_trace_cbid / CUpti_driver_api_trace_cbid: below 2^16;
  /// a larger recorded value saturates)
  uint16_t cbid = 0;
  bool returned = false;  ///< false: no exit record, the call never returned (process ended in it)
  /// !returned, and the reader skipped damaged bytes of its thread after its enter: its exit may
  /// have been there, so it is not a call the process ended inside (counted apart, never timed)
  bool exit_lost = false;
  uint64_t duration() const { return end_ns - begin_ns; }
  bool operator==(const CudaCall&) const = default;
};

/// What every GPU activity record but an overhead has: its times (absolute CLOCK_MONOTONIC ns)
/// and the CUPTI correlation id that links it to the API call that started it. 24 bytes.
struct GpuWork {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t correlation = 0;
  uint64_t duration() const { return end_ns - start_ns; }
  bool operator==(const GpuWork&) const = default;
};

/// One kernel execution (GPU_KERNEL). 48 bytes: its launch configuration is an index into the
/// image's CudaData::kernel_configs (kernel_configs.h).
struct GpuKernel : GpuWork {
  StringId name = 0;  ///< as recorded: the mangled name (key of the kernel table)
  uint32_t device = 0, context = 0, stream = 0;
  uint32_t graph = 0;   ///< CUDA graph id, 0 = none
  uint32_t config = 0;  ///< grid, block, registers, shared memory, launch type: CudaData::kernel_configs[config]
  bool operator==(const GpuKernel&) const = default;
};
static_assert(sizeof(GpuWork) == 24 && sizeof(GpuKernel) == 48, "a long run keeps millions of kernels");

/// One memory copy (GPU_MEMCPY).
struct GpuMemcpy : GpuWork {
  uint64_t bytes = 0;
  uint32_t device = 0, context = 0, stream = 0;
  uint32_t src_device = 0, dst_device = 0;
  uint32_t graph = 0;
  format::MemcpyKind kind = format::MemcpyKind::kUnknown;
  format::MemoryKind src_memory = format::MemoryKind::kUnknown;
  format::MemoryKind dst_memory = format::MemoryKind::kUnknown;
  bool async = false;  ///< flags bit 0: issued by an asynchronous API call
  /// A side of the copy is pageable (not pinned) host memory: the copy is staged by the driver
  /// and cannot overlap with the host or with compute.
  bool pageable() const {
    return src_memory == format::MemoryKind::kPageable || dst_memory == format::MemoryKind::kPageable;
  }
  bool operator==(const GpuMemcpy&) const = default;
};

/// One memset (GPU_MEMSET).
struct GpuMemset : GpuWork {
  uint64_t bytes = 0;
  uint32_t device = 0, context = 0, stream = 0;
  uint32_t value = 0;
  uint32_t graph = 0;
  format::MemoryKind memory = format::MemoryKind::kUnknown;
  bool async = false;
  bool operator==(const GpuMemset&) const = default;
};

/// A synchronisation CUPTI saw (GPU_SYNC): the host waiting on a stream, event or context.
struct GpuSync : GpuWork {
  uint32_t context = 0;
  uint32_t stream = 0;      ///< valid when has_stream
  bool has_stream = false;  ///< the record's "stream + 1" was not 0
  format::SyncType type = format::SyncType::kUnknown;
};

/// Time CUPTI or the driver spent on itself (GPU_OVERHEAD), e.g. flushing buffers.
struct GpuOverhead {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t object_id = 0;
  uint32_t kind = 0;         ///< CUpti_ActivityOverheadKind
  uint32_t object_kind = 0;  ///< CUpti_ActivityObjectKind
};

struct GpuDevice {
  uint32_t id = 0;
  StringId name = 0;
  uint32_t cc_major = 0, cc_minor = 0;
  uint32_t sm_count = 0;
  uint64_t global_memory = 0;  ///< bytes
};

struct GpuContext {
  uint32_t id = 0;
  uint32_t device = 0;
};

/// A GPU_STATUS record: how GPU tracing stood at that time.
struct GpuStatusEvent {
  uint64_t time_ns = 0;
  format::GpuState state = format::GpuState::kOn;
  uint32_t raw_state = 0;  ///< as recorded (a state this trainprof does not know keeps its number)
  uint64_t cupti_result = 0;
  uint64_t cupti_version = 0;
  uint64_t driver_version = 0;
  StringId message = 0;
};

/// A CAPTURE record: recording switched on or off.
struct CaptureEvent {
  uint64_t time_ns = 0;
  bool on = true;
  uint32_t reason = 0;  ///< format::CaptureReason
};

/// The end of one GPU kernel on the host's CLOCK_MONOTONIC (ns), and its name.
struct KernelEnd {
  uint64_t end_ns = 0;
  StringId name = 0;
};
/// TraceImage::nccl_kernel_ends keeps the first this many ends of each NCCL kernel name (in the
/// order decoded: per thread, in time): instants enough for a median offset (host_clocks.h), and
/// 4 KB a name whatever the run's length.
inline constexpr uint32_t kMaxNcclEndsPerName = 256;

/// Every CUDA record of one process image. Empty for a version 1 file.
struct CudaData {
  std::vector<CudaCall> calls;  ///< by enter time (ties: record order)
  std::vector<GpuKernel> kernels;
  KernelConfigs kernel_configs;  ///< the launch configurations `kernels` index
  std::vector<GpuMemcpy> memcpys;
  std::vector<GpuMemset> memsets;
  std::vector<GpuSync> syncs;
  std::vector<GpuOverhead> overheads;
  std::vector<GpuDevice> devices;
  std::vector<GpuContext> contexts;
  std::vector<GpuStatusEvent> status;
  std::vector<CaptureEvent> captures;
  uint64_t records_dropped = 0;     ///< Σ GPU_DROPPED counts: activity records CUPTI lost
  uint64_t invalid_timestamps = 0;  ///< GPU activity records (tags 50..54) with a zero or reversed time
  uint64_t unmatched_exits = 0;     ///< CUDA_API_EXIT records whose correlation no open enter has
  // What the trace reader decoded, whatever it kept (ReadOptions::keep_cuda): calls entered, valid
  // kernels, copies and memsets, valid syncs and overheads; the devices of those kernels, copies
  // and memsets (ascending). Zero and empty where the records came another way (Kineto).
  uint64_t decoded_calls = 0, decoded_activity = 0, decoded_other = 0;
  std::vector<uint32_t> activity_devices;

  /// Any CUDA record at all (a process that used CUDA with tracing on, or said why it could not).
  bool any() const {
    return !calls.empty() || !kernels.empty() || !memcpys.empty() || !memsets.empty() || !syncs.empty() ||
           !overheads.empty() || !devices.empty() || !status.empty() || records_dropped > 0 ||
           invalid_timestamps > 0 || decoded_calls > 0 || decoded_activity > 0 || decoded_other > 0;
  }
  /// Any GPU activity with valid times (kernel, memcpy, memset).
  bool any_activity() const { return !kernels.empty() || !memcpys.empty() || !memsets.empty() || decoded_activity > 0; }
  /// Notes a decoded kernel, copy or memset on `device`.
  void Decoded(uint32_t device) {
    ++decoded_activity;
    if (!activity_devices.empty() && activity_devices.back() == device) return;
    auto it = std::lower_bound(activity_devices.begin(), activity_devices.end(), device);
    if (it == activity_devices.end() || *it != device) activity_devices.insert(it, device);
  }
};

}  // namespace trainprof::collector
