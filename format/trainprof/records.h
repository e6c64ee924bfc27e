// The record schema (records.def) made into code, for the writer (inject/), the reader
// (collector/read/) and the tests, so that a record's fields are named in one place:
//
//   format::rec::GpuKernel k{.zs = ..., .ze = ..., .device = 1, ...};   // one struct per kind
//   uint8_t* end = EncodeUntimed(p, k);           // tag + fields (GPU activity, definitions)
//   uint8_t* end = EncodeTimed(p, dt, push);      // tag + dt + fields (timed records)
//   rec::GpuKernel k = Decode<rec::GpuKernel>(values, bytes);   // the reader, by name
//
// Sizes come from the schema: RecordInfoOf(tag).max_bytes, kMaxFixedRecordBytes (the largest
// record without a string: GPU_KERNEL, 181 bytes), kMaxRecordBytes (STRING of kMaxStringBytes),
// kMaxRecordFields (the reader's field buffer). Header-only, allocation-free: the writer's hot
// path uses it. kRecords is the table docs/trace-format.md and `trainprof_record_schema` print.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "trainprof/trace_format.h"

namespace trainprof::format {

/// Where a record's time comes from.
enum class RecordClass : uint8_t {
  kTimed,        ///< first field dt: ns since the previous timed record of the chunk
  kGpuActivity,  ///< first fields zs, ze: zigzag ns relative to the chunk's base_ns (no dt)
  kDefinition,   ///< untimed
};

/// How a field is written (records.def: V, Z, S; kDt is the implied first field of kTimed).
enum class FieldEncoding : uint8_t { kDt, kV, kZ, kS };

/// One field of a record kind, in the order written.
struct FieldInfo {
  const char* name;
  FieldEncoding encoding;
  const char* doc;  ///< "" when the name says it all
};

/// One record kind, with the numbers derived from its fields.
struct RecordInfo {
  RecordTag tag;
  const char* name;  ///< as docs/trace-format.md spells it, e.g. "RANGE_PUSH"
  RecordClass cls;
  uint32_t since;    ///< format version that introduced it
  const char* doc;
  const FieldInfo* fields;  ///< the listed fields (dt not included)
  uint8_t field_count;      ///< how many
  uint8_t varints;          ///< varints after the tag: dt (if timed) + fields (an S field's length counts one)
  bool has_bytes;           ///< the last field is S: `length` bytes follow the last varint
  uint32_t max_bytes;       ///< the longest encoding (tag, 10 bytes a varint, kMaxStringBytes a string)
};

inline constexpr uint32_t kMaxVarintBytes = 10;

namespace schema_detail {
constexpr bool HasBar(const char* s) {
  for (; *s != '\0'; ++s) {
    if (*s == '|') return true;
  }
  return false;
}
constexpr bool Same(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}
template <size_t N>
constexpr RecordInfo Make(RecordTag tag, const char* name, RecordClass cls, uint32_t since, const char* doc,
                          const FieldInfo (&f)[N]) {
  const bool has_bytes = f[N - 1].encoding == FieldEncoding::kS;
  const uint32_t varints = (cls == RecordClass::kTimed ? 1 : 0) + static_cast<uint32_t>(N);
  return {tag, name, cls, since, doc, f, static_cast<uint8_t>(N), static_cast<uint8_t>(varints), has_bytes,
          1 + kMaxVarintBytes * varints + (has_bytes ? kMaxStringBytes : 0)};
}
// The listed fields of each kind: kFieldsOfType.
#define TRAINPROF_FIELD(name, enc, doc) FieldInfo{#name, FieldEncoding::k##enc, doc},
#define TRAINPROF_RECORD(Type, tag, name, cls, since, doc, fields) inline constexpr FieldInfo kFieldsOf##Type[] = {fields};
#include "trainprof/records.def"
#undef TRAINPROF_RECORD
#undef TRAINPROF_FIELD
}  // namespace schema_detail

/// Every record kind, in tag order.
inline constexpr RecordInfo kRecords[] = {
#define TRAINPROF_FIELD(name, enc, doc)
#define TRAINPROF_RECORD(Type, tag, name, cls, since, doc, fields) \
  schema_detail::Make(RecordTag::k##Type, name, RecordClass::cls, since, doc, schema_detail::kFieldsOf##Type),
#include "trainprof/records.def"
#undef TRAINPROF_RECORD
#undef TRAINPROF_FIELD
};

namespace schema_detail {
constexpr std::array<int16_t, 256> MakeIndex() {
  std::array<int16_t, 256> index{};
  for (auto& i : index) i = -1;
  for (size_t i = 0; i < std::size(kRecords); ++i) index[static_cast<uint8_t>(kRecords[i].tag)] = static_cast<int16_t>(i);
  return index;
}
inline constexpr std::array<int16_t, 256> kIndex = MakeIndex();
constexpr uint32_t MaxOf(bool strings, bool bytes) {
  uint32_t m = 0;
  for (const RecordInfo& r : kRecords) {
    if (r.has_bytes && !strings) continue;
    const uint32_t v = bytes ? r.max_bytes : r.varints;
    if (v > m) m = v;
  }
  return m;
}
constexpr bool Valid() {
  for (size_t i = 0; i < std::size(kRecords); ++i) {
    const RecordInfo& r = kRecords[i];
    if (r.tag == RecordTag::kInvalid || kIndex[static_cast<uint8_t>(r.tag)] != static_cast<int16_t>(i)) return false;
    if (i > 0 && static_cast<uint8_t>(kRecords[i - 1].tag) >= static_cast<uint8_t>(r.tag)) return false;
    if (HasBar(r.doc)) return false;  // the texts become cells of a Markdown table
    for (uint8_t k = 0; k < r.field_count; ++k) {
      if (k + 1 < r.field_count && r.fields[k].encoding == FieldEncoding::kS) return false;  // a string only last
      if (HasBar(r.fields[k].doc)) return false;
    }
    if (r.cls == RecordClass::kGpuActivity &&
        (r.field_count < 2 || !Same(r.fields[0].name, "zs") || !Same(r.fields[1].name, "ze") ||
         r.fields[0].encoding != FieldEncoding::kZ || r.fields[1].encoding != FieldEncoding::kZ)) {
      return false;
    }
    if (r.since < 1 || r.since > kFormatVersion) return false;
  }
  return true;
}
}  // namespace schema_detail

static_assert(schema_detail::Valid(),
              "records.def: tags unique, ascending and nonzero; S only last; GPU activity starts with zs, ze (Z); "
              "since in 1..kFormatVersion; no '|' in the texts");

/// The schema entry of `tag`, or nullptr for a tag no record kind has.
constexpr const RecordInfo* FindRecord(uint8_t tag) {
  const int16_t i = schema_detail::kIndex[tag];
  return i < 0 ? nullptr : &kRecords[i];
}
constexpr const RecordInfo& RecordInfoOf(RecordTag tag) { return *FindRecord(static_cast<uint8_t>(tag)); }

/// The most varints a record has after its tag (GPU_KERNEL: 18): the reader's field buffer.
inline constexpr int kMaxRecordFields = static_cast<int>(schema_detail::MaxOf(true, false));
/// The largest record without a string (GPU_KERNEL: tag, zs, ze, 16 fields = 181 bytes).
inline constexpr uint32_t kMaxFixedRecordBytes = schema_detail::MaxOf(false, true);
/// The largest record of all (a STRING of kMaxStringBytes).
inline constexpr uint32_t kMaxRecordBytes = schema_detail::MaxOf(true, true);
static_assert(kMaxRecordFields == 18 && kMaxFixedRecordBytes == 181,
              "GPU_KERNEL is the widest record; docs/trace-format.md says so (\"Sizes\")");
static_assert(kMaxRecordBytes <= kDefaultChunkSize - sizeof(ChunkHeader), "every record fits an empty chunk");

// ----- one struct per record kind ---------------------------------------------------------------

namespace rec {
using V = uint64_t;
using Z = int64_t;
using S = std::string_view;
#define TRAINPROF_FIELD(name, enc, doc) enc name{};
#define TRAINPROF_RECORD(Type, tag, name, cls, since, doc, fields)        \
  struct Type {                                                           \
    static constexpr RecordTag kTag = RecordTag::k##Type;                 \
    static constexpr RecordClass kClass = RecordClass::cls;               \
    fields                                                                \
    friend bool operator==(const Type&, const Type&) = default;          \
  };
#include "trainprof/records.def"
#undef TRAINPROF_RECORD
#undef TRAINPROF_FIELD
}  // namespace rec

// ----- encoding ---------------------------------------------------------------------------------

inline uint8_t* PutField(uint8_t* p, uint64_t v) { return PutVarint(p, v); }
inline uint8_t* PutField(uint8_t* p, int64_t v) { return PutVarint(p, ZigZag(v)); }
inline uint8_t* PutField(uint8_t* p, std::string_view s) {
  p = PutVarint(p, s.size());
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p + s.size();
}
inline constexpr uint32_t FieldBound(uint64_t) { return kMaxVarintBytes; }
inline constexpr uint32_t FieldBound(int64_t) { return kMaxVarintBytes; }
inline constexpr uint32_t FieldBound(std::string_view s) { return kMaxVarintBytes + static_cast<uint32_t>(s.size()); }

/// Writes the fields of `r` (not the tag, not dt) at `p`; returns the byte after them.
/// EncodedBound(r): the most bytes tag, dt and these can take (a string counts its own length).
#define TRAINPROF_FIELD(name, enc, doc) p = PutField(p, r.name);
#define TRAINPROF_RECORD(Type, tag, name, cls, since, doc, fields) \
  inline uint8_t* PutFields(uint8_t* p, const rec::Type& r) {      \
    fields return p;                                               \
  }
#include "trainprof/records.def"
#undef TRAINPROF_RECORD
#undef TRAINPROF_FIELD
#define TRAINPROF_FIELD(name, enc, doc) +FieldBound(r.name)
#define TRAINPROF_RECORD(Type, tag, name, cls, since, doc, fields)                           \
  constexpr uint32_t EncodedBound(const rec::Type& r) {                                      \
    return 1 + (rec::Type::kClass == RecordClass::kTimed ? kMaxVarintBytes : 0) fields;      \
  }
#include "trainprof/records.def"
#undef TRAINPROF_RECORD
#undef TRAINPROF_FIELD

/// A timed record: tag, `dt`, fields. `p` has room for EncodedBound(r).
template <typename R>
inline uint8_t* EncodeTimed(uint8_t* p, uint64_t dt, const R& r) {
  static_assert(R::kClass == RecordClass::kTimed, "EncodeTimed takes timed records");
  *p++ = static_cast<uint8_t>(R::kTag);
  return PutFields(PutVarint(p, dt), r);
}

/// A GPU activity or definition record: tag, fields. `p` has room for EncodedBound(r).
template <typename R>
inline uint8_t* EncodeUntimed(uint8_t* p, const R& r) {
  static_assert(R::kClass != RecordClass::kTimed, "a timed record needs its dt: EncodeTimed");
  *p++ = static_cast<uint8_t>(R::kTag);
  return PutFields(p, r);
}

// ----- decoding ---------------------------------------------------------------------------------

inline void GetField(const uint64_t*& v, std::string_view, uint64_t* out) { *out = *v++; }
inline void GetField(const uint64_t*& v, std::string_view, int64_t* out) { *out = UnZigZag(*v++); }
inline void GetField(const uint64_t*& v, std::string_view bytes, std::string_view* out) {
  ++v;  // the length, which `bytes` has
  *out = bytes;
}
#define TRAINPROF_FIELD(name, enc, doc) GetField(v, bytes, &r->name);
#define TRAINPROF_RECORD(Type, tag, name, cls, since, doc, fields)                          \
  inline void GetFields(const uint64_t* v, std::string_view bytes, rec::Type* r) {          \
    (void)bytes;                                                                            \
    fields                                                                                  \
  }
#include "trainprof/records.def"
#undef TRAINPROF_RECORD
#undef TRAINPROF_FIELD

/// A record read back by name from its varints after the tag, dt excluded (`values`: the
/// record's RecordInfo::field_count values, an S field's length among them), and its string
/// bytes (records with an S field).
template <typename R>
inline R Decode(const uint64_t* values, std::string_view bytes = {}) {
  R r;
  GetFields(values, bytes, &r);
  return r;
}

}  // namespace trainprof::format
