// One element of a Kineto trace as the SAX stage (kineto_sax.h) hands it to the mapping
// (kineto_mapping.h): the fields trainprof reads (docs/kineto.md, "Reading"), each with what the
// JSON held. Reused from one event to the next (strings keep their capacity): no allocation per
// event once the longest name has been seen.
#pragma once

#include <cstdint>
#include <string>

namespace trainprof::collector {

/// A JSON value of a field the reader reads.
struct KinetoValue {
  enum class Type : uint8_t { kAbsent, kNumber, kString, kOther };  ///< kOther: bool, null, object, array
  Type type = Type::kAbsent;
  bool integral = false;  ///< an integer (no fraction, no exponent) that fits int64
  int64_t i = 0;          ///< when integral
  bool ns_ok = false;     ///< the number read as microseconds gives whole ns in uint64 (>= 0)
  uint64_t ns = 0;        ///< the number × 1000, exactly from its text (rounded at the 4th decimal)
  uint64_t u = 0;         ///< when a whole number >= 0 that fits uint64 (`whole`), exactly
  bool whole = false;
  double value = 0;       ///< the number as a double, for messages about numbers that are not integers
  std::string s;          ///< when kString

  bool number() const { return type == Type::kNumber; }
  void Clear() {
    type = Type::kAbsent;
    integral = ns_ok = whole = false;
    i = 0;
    ns = u = 0;
    value = 0;
    s.clear();
  }
};

struct KinetoEvent {
  uint64_t index = 0;  ///< position in traceEvents (0-based), for messages
  KinetoValue ph, cat, name, pid, tid, ts, dur, id;
  // args
  KinetoValue device, stream, correlation, context, bytes, cbid, registers, shared_memory;
  KinetoValue arg_name, labels;  ///< args.name, args.labels (metadata events)
  uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  bool has_grid = false, has_block = false;
  bool dims_bad = false;  ///< a grid or block element that is not a whole number in 0..2^32-1

  void Clear() {
    for (KinetoValue* v : {&ph, &cat, &name, &pid, &tid, &ts, &dur, &id, &device, &stream, &correlation, &context,
                           &bytes, &cbid, &registers, &shared_memory, &arg_name, &labels})
      v->Clear();
    for (int k = 0; k < 3; ++k) grid[k] = block[k] = 0;
    has_grid = has_block = dims_bad = false;
  }
};

/// One entry of the top-level deviceProperties array.
struct KinetoDevice {
  KinetoValue id, name, total_global_mem, compute_major, compute_minor, num_sms;
  void Clear() {
    for (KinetoValue* v : {&id, &name, &total_global_mem, &compute_major, &compute_minor, &num_sms}) v->Clear();
  }
};

}  // namespace trainprof::collector
