// A tiny decoder of the CUDA records (docs/trace-format.md, tags 48..59) for the CUPTI layer's
// unit tests: the schema's field counts and names (format/trainprof/records.h), independent of
// the collector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trainprof/records.h"

namespace trainprof::testing {

/// Number of varint fields after the tag byte (dt included for timed records), from the schema
/// (format/trainprof/records.def); -1 for a tag that is not a CUDA record (tags 48..59).
inline int FieldCount(format::RecordTag tag) {
  const format::RecordInfo* r = format::FindRecord(static_cast<uint8_t>(tag));
  return r != nullptr && r->since >= 2 ? r->varints : -1;
}

struct Decoded {
  format::RecordTag tag = format::RecordTag::kInvalid;
  std::vector<uint64_t> f;  ///< the fields after the tag, in format order
  size_t size = 0;          ///< bytes of the record

  /// The record read back by name (format::rec::*; its tag must be this one's).
  template <typename R>
  R As() const {
    const size_t dt = R::kClass == format::RecordClass::kTimed ? 1 : 0;
    if (tag != R::kTag || f.size() < dt) return R{};
    return format::Decode<R>(f.data() + dt);
  }
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
/// A decoded zs / ze (format::rec::*) back to nanoseconds, given the chunk's base.
inline uint64_t Time(int64_t relative, uint64_t base_ns) { return base_ns + static_cast<uint64_t>(relative); }

}  // namespace trainprof::testing
