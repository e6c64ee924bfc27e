// JSON text of a Kineto trace → KinetoEvents, streamed: a handler for nlohmann's `sax_parse`
// (no DOM: each element of traceEvents is assembled into one reused KinetoEvent, handed on, and
// forgotten). The top-level fields the reader uses (schemaVersion, baseTimeNanoseconds,
// distributedInfo, deviceProperties, host_name) are collected in a KinetoHeader; any other field,
// and any event field or arg not read (docs/kineto.md, "Reading"), is skipped without being kept.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/read/kineto_event.h"

namespace trainprof::collector {

/// Kineto's time text (microseconds, as `ts` and `dur` are written: "1712195495505543.2",
/// "63.813", "12", "1.5e3") → integer nanoseconds, exactly from the decimal digits (no binary
/// floating point in between); digits past the third decimal round half up. nullopt for a
/// negative value, something that is not a number, or more than UINT64_MAX ns.
std::optional<uint64_t> MicrosTextToNs(std::string_view text);

/// Nesting of JSON containers the reader follows (the top-level object is 1). torch.profiler's
/// traces nest 5 or 6 deep (top, traceEvents, event, args, "Input Dims", its lists); deeper input
/// ends the read there (its state would grow with the nesting: 10^8 '[' are 97 KB of gzip).
inline constexpr size_t kMaxKinetoDepth = 64;
/// deviceProperties entries kept (one per GPU of the machine); more are said and left out.
inline constexpr size_t kMaxKinetoDevices = 1024;
/// Times past this (ns since the epoch: 2^62, the year 2116) no clock gives: trainprof's own
/// headers refuse them too (losses.def, header_errors).
inline constexpr uint64_t kMaxKinetoNs = uint64_t{1} << 62;

/// A number of the JSON as a message shows it: exactly when whole, else to 17 digits.
std::string NumberText(const KinetoValue& v);

struct KinetoHeader {
  bool top_object = false;   ///< the JSON text is an object
  bool trace_events = false; ///< it has a traceEvents array
  uint64_t events = 0;       ///< elements of traceEvents seen (objects or not)
  std::optional<int64_t> schema_version;
  std::optional<uint64_t> base_time_ns;  ///< baseTimeNanoseconds
  std::optional<int64_t> rank, world_size, local_rank;  ///< distributedInfo
  std::string host_name;                 ///< top-level "host_name" (some Kineto builds), "" if none
  std::vector<KinetoDevice> devices;     ///< deviceProperties, in file order (at most kMaxKinetoDevices)
  uint64_t devices_dropped = 0;          ///< entries past kMaxKinetoDevices
  bool stopped = false;                  ///< the parse ended early by a limit (depth, or `event` refused)
  uint64_t error_at = 0;                 ///< character offset of a syntax error (ParseKinetoJson)
};

/// Parses the JSON from `in`, calling `event` for each object of traceEvents and `problem` for
/// each thing wrong that is not a syntax error (a traceEvents element that is not an object, a
/// top-level field of the wrong type or out of its range). Returns "" when the text parsed to its
/// end, else nlohmann's description of the syntax error ("parse error at line L, column C: ..."),
/// or, with `header->stopped`, the limit that ended it (nesting past kMaxKinetoDepth; "" when
/// `event` returned false, the caller's own limit: it says why); `at_end` says whether a syntax
/// error is at the end of the input (truncated JSON).
std::string ParseKinetoJson(std::istream& in, KinetoHeader* header, const std::function<bool(const KinetoEvent&)>& event,
                            const std::function<void(const std::string&)>& problem, bool* at_end);

}  // namespace trainprof::collector
