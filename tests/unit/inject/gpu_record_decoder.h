// A tiny decoder of the CUDA records (docs/trace-format.md, tags 48..59) for the CUPTI layer's
// unit tests: written from the format, independent of the collector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trainprof/trace_format.h"

namespace trainprof::testing {

/// Number of varint fields after the tag byte (dt included for timed records).
inline int FieldCount(format::RecordTag tag) {
  using format::RecordTag;
  switch (tag) {
    case RecordTag::kCudaApiEnter: return 5;  // dt, api, cbid, name, correlation
    case RecordTag::kCudaApiExit: return 3;   // dt, correlation, status
    case RecordTag::kGpuKernel: return 18;
    case RecordTag::kGpuMemcpy: return 14;
    case RecordTag::kGpuMemset: return 11;
    case RecordTag::kGpuSync: return 6;
    case RecordTag::kGpuOverhead: return 5;
    case RecordTag::kGpuDevice: return 6;
    case RecordTag::kGpuContext: return 2;
    case RecordTag::kGpuDropped: return 2;    // dt, count
    case RecordTag::kGpuStatus: return 6;     // dt, state, result, cupti, driver, message
    case RecordTag::kCapture: return 3;       // dt, on, reason
    default: return -1;
  }
}

struct Decoded {
  format::RecordTag tag = format::RecordTag::kInvalid;
  std::vector<uint64_t> f;  ///< the fields after the tag, in format order
  size_t size = 0;          ///< bytes of the record
};

/// Decodes the record at [p, end); tag kInvalid if it is not a whole known CUDA record.
inline Decoded DecodeOne(const uint8_t* p, const uint8_t* end) {
  Decoded d;
  if (p >= end) return d;
  const uint8_t* start = p;
  auto tag = static_cast<format::RecordTag>(*p++);
  int n = FieldCount(tag);
  if (n < 0) return d;
  for (int i = 0; i < n; ++i) {
    uint64_t v;
    if (!format::GetVarint(&p, end, &v)) return Decoded{};
    d.f.push_back(v);
  }
  d.tag = tag;
  d.size = static_cast<size_t>(p - start);
  return d;
}

/// A zigzag time field back to nanoseconds, given the chunk's base.
inline uint64_t Time(uint64_t z, uint64_t base_ns) { return base_ns + static_cast<uint64_t>(format::UnZigZag(z)); }

}  // namespace trainprof::testing
