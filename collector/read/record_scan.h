// How the trace reader steps over records (internal to collector/read): a record's varints, and the
// NVTX records' fast path. Shared by the whole read (decode_records.cc) and the windowed CUDA read
// (cuda_chunk_index.cc), which must accept and reject exactly the same bytes.
#pragma once

#include <cstdint>

#include "trainprof/records.h"

namespace trainprof::collector::scan {

using format::RecordTag;

// A record's varints after its tag (dt first when timed, then its fields in schema order) into
// *dt and f; *p moves past them. False where one runs past `end` or is malformed (more than 10
// bytes, or a 10th byte above 1; *p is then anywhere in the record). Where the record's longest
// encoding fits before `end` (10 bytes a varint: every NVTX record but the last few of a chunk),
// no bounds check per byte (format::GetVarintFast); otherwise format::GetVarint.
[[gnu::always_inline]] inline bool ReadVarints(const format::RecordInfo& layout, const uint8_t** p, const uint8_t* end,
                                               uint64_t* dt, uint64_t* f) {
  const bool timed = layout.cls == format::RecordClass::kTimed;
  const int fields = layout.field_count;
  if (static_cast<uint64_t>(end - *p) >= uint64_t{format::kVarintReadAhead} * layout.varints) {
    if (timed && !format::GetVarintFast(p, dt)) return false;
    for (int i = 0; i < fields; ++i) {
      if (!format::GetVarintFast(p, &f[i])) return false;
    }
    return true;
  }
  if (timed && !format::GetVarint(p, end, dt)) return false;
  for (int i = 0; i < fields; ++i) {
    if (!format::GetVarint(p, end, &f[i])) return false;
  }
  return true;
}

// The push/pop fast path of Decoder::ReadRecord (decode_records.cc): their layouts, and the bytes
// their longest encodings need (ReadVarints' condition for GetVarintFast).
inline constexpr uint8_t kPushTag = static_cast<uint8_t>(RecordTag::kRangePush);
inline constexpr uint8_t kPopTag = static_cast<uint8_t>(RecordTag::kRangePop);
inline constexpr const format::RecordInfo& kPushLayout = format::RecordInfoOf(RecordTag::kRangePush);
inline constexpr const format::RecordInfo& kPopLayout = format::RecordInfoOf(RecordTag::kRangePop);
static_assert(kPushLayout.cls == format::RecordClass::kTimed && kPushLayout.field_count == 3 &&
              !kPushLayout.has_bytes && kPushLayout.since == 1);
static_assert(kPopLayout.cls == format::RecordClass::kTimed && kPopLayout.field_count == 1 &&
              !kPopLayout.has_bytes && kPopLayout.since == 1);
inline constexpr uint64_t kPushReadAhead = uint64_t{format::kVarintReadAhead} * kPushLayout.varints;
inline constexpr uint64_t kPopReadAhead = uint64_t{format::kVarintReadAhead} * kPopLayout.varints;
// The five NVTX records (tags kPushTag..kEndTag, in this order) for the report's fast path.
inline constexpr uint8_t kMarkTag = static_cast<uint8_t>(RecordTag::kMark);
inline constexpr uint8_t kStartTag = static_cast<uint8_t>(RecordTag::kRangeStart);
inline constexpr uint8_t kEndTag = static_cast<uint8_t>(RecordTag::kRangeEnd);
static_assert(kPopTag == kPushTag + 1 && kMarkTag == kPushTag + 2 && kStartTag == kPushTag + 3 &&
              kEndTag == kPushTag + 4);
static_assert(format::RecordInfoOf(RecordTag::kMark).field_count == 3 &&
                  format::RecordInfoOf(RecordTag::kRangeStart).field_count == 4 &&
                  format::RecordInfoOf(RecordTag::kRangeEnd).field_count == 1,
              "the fast path reads fields by position: domain, name, category, range_id");
inline constexpr uint64_t kStartReadAhead =
    uint64_t{format::kVarintReadAhead} * format::RecordInfoOf(RecordTag::kRangeStart).varints;
static_assert([] {
  for (uint8_t t = kPushTag; t <= kEndTag; ++t) {
    const format::RecordInfo& r = format::RecordInfoOf(static_cast<RecordTag>(t));
    if (r.cls != format::RecordClass::kTimed || r.has_bytes || r.since != 1) return false;
  }
  return true;
}());

}  // namespace trainprof::collector::scan
