// CUPTI activity records → trace records (GPU_KERNEL, GPU_MEMCPY, GPU_MEMSET, GPU_SYNC,
// GPU_OVERHEAD, GPU_DEVICE, GPU_CONTEXT; docs/trace-format.md). Pure functions: a record in,
// encoded bytes out; no state, no allocation, unit-tested with records built by hand.
//
// Times are written as CUPTI reported them (zigzag ns relative to the chunk's base_ns): a zero
// or reversed timestamp stays visible to the reader, which counts and skips it. The one name a
// record carries (a kernel's mangled name, a device's name) is interned by the caller first —
// interning writes a STRING record, which must precede the record that uses its id.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cupti/activity_layout.h"
#include "trainprof/records.h"

namespace trainprof::inject::cupti {

/// Room one encoded activity record may need: the largest record without a string, from the
/// schema (GPU_KERNEL: tag, zs, ze and 16 more varints, 181 bytes).
inline constexpr size_t kMaxGpuRecordBytes = format::kMaxFixedRecordBytes;
static_assert(format::RecordInfoOf(format::RecordTag::kGpuKernel).max_bytes == kMaxGpuRecordBytes &&
                  format::RecordInfoOf(format::RecordTag::kGpuMemcpy).max_bytes <= kMaxGpuRecordBytes &&
                  format::RecordInfoOf(format::RecordTag::kGpuDevice).max_bytes <= kMaxGpuRecordBytes,
              "every record EncodeActivity writes fits kMaxGpuRecordBytes");

/// Whether EncodeActivity converts records of this kind (the others are skipped and counted).
bool IsConvertedKind(CUpti_ActivityKind kind);

/// The string a record names — a kernel's mangled name, a device's name — or nullptr.
const char* ActivityName(const CUpti_Activity* rec);

/// How many bytes of `s` a name keeps: all of them up to format::kMaxStringBytes, else cut there
/// at a UTF-8 character boundary (a kernel's template name can be several KB).
uint32_t NameLength(const char* s);

/// The start time of a timed activity record (CUPTI's timestamp, our clock); false for a
/// definition (device, context) or an unconverted kind.
bool ActivityStart(const CUpti_Activity* rec, uint64_t* start_ns);

/// Encodes `rec` into `out` (room: kMaxGpuRecordBytes). `base_ns`: ChunkHeader::base_ns of the
/// chunk the record goes into; `name`: the string id of ActivityName(rec) (0: none). Returns the
/// bytes written, or 0 for a kind that is not converted.
size_t EncodeActivity(const CUpti_Activity* rec, uint64_t base_ns, uint32_t name, uint8_t* out);

// One per kind (EncodeActivity dispatches on rec->kind).
size_t EncodeKernel(const KernelRecord& k, uint64_t base_ns, uint32_t name, uint8_t* out);
size_t EncodeMemcpy(const MemcpyRecord& m, uint64_t base_ns, uint8_t* out);
size_t EncodePeerMemcpy(const PeerMemcpyRecord& m, uint64_t base_ns, uint8_t* out);
size_t EncodeMemset(const MemsetRecord& m, uint64_t base_ns, uint8_t* out);
size_t EncodeSync(const SyncRecord& s, uint64_t base_ns, uint8_t* out);
size_t EncodeOverhead(const OverheadRecord& o, uint64_t base_ns, uint8_t* out);
size_t EncodeDevice(const DeviceRecord& d, uint32_t name, uint8_t* out);
size_t EncodeContext(const ContextRecord& c, uint8_t* out);

/// Goes through one buffer of activity records: `next(&rec)` yields the records in turn (CUPTI's
/// cuptiActivityGetNextRecord) and returns false after the last; `write(rec)` gets each record of a
/// kind EncodeActivity converts. Returns how many records were skipped (kinds not converted: the
/// caller counts them as dropped).
template <typename Next, typename Write>
uint64_t ForEachConverted(Next next, Write write) {
  uint64_t skipped = 0;
  CUpti_Activity* rec = nullptr;
  while (next(&rec)) {
    if (IsConvertedKind(rec->kind)) {
      write(rec);
    } else {
      ++skipped;
    }
  }
  return skipped;
}

/// A kernel's launch (format::KernelLaunch) from CUPTI's launchType and graph id: cooperative
/// launches by their type, then any kernel of a graph, else regular.
format::KernelLaunch KernelLaunchOf(uint8_t launch_type, uint32_t graph_id);

/// The correlation id that links a memcpy to the API call that made it: the runtime call's when
/// CUPTI gives it (a runtime call and its driver calls are recorded as one call), else CUPTI's.
uint32_t MemcpyCorrelation(const MemcpyRecord& m);

}  // namespace trainprof::inject::cupti
