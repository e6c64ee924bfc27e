// A summary file: one process's summary (process_summary.h) as CBOR (RFC 8949), written and read
// with nlohmann/json (its to_cbor / from_cbor), the format docs/summary-format.md describes.
//
//   the file: 0xd9 0xd9 0xf7 (CBOR's self-described tag 55799, RFC 8949 §3.4.6: the magic)
//             then one map: {"trainprof_summary": kSummaryFormatVersion, "info": {...}, "losses": [...],
//                            "capture": {...}, "nvtx": {...}, "cuda": [...], ...} (every key:
//                            docs/summary-format.md, "Sections")
//
// Names are written as strings (a summary file has no string table of its own: the names of one
// process are few beside its statistics) and interned into the reader's pool; loss kinds by their
// catalogue key (model/losses.def), so that a counter added later does not renumber them.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "collector/base/string_pool.h"
#include "collector/summary/process_summary.h"

namespace trainprof::collector {

/// The version of the summary encoding; a reader takes its own version only (a summary is made
/// again from its trace, cheaply, by the trainprof that reads it).
inline constexpr uint32_t kSummaryFormatVersion = 1;

/// What is wrong with a summary file's bytes (what(): one line, without the file's name).
struct SummaryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The bytes of a summary file of `s`, whose names are in `strings`.
std::vector<uint8_t> EncodeSummary(const ProcessSummary& s, const StringPool& strings);

/// The summary in `bytes`, its names interned into `strings`. Throws SummaryError where the bytes
/// are not a summary file (no magic, not CBOR, cut short), are of another version, or hold a field
/// of the wrong type or a value no summary can have (a duration statistic that does not add up,
/// an unknown loss key).
ProcessSummary DecodeSummary(std::span<const uint8_t> bytes, StringPool* strings);

/// Whether `head` (the file's first bytes, 3 or more) starts as a summary file does.
bool LooksLikeSummary(std::span<const uint8_t> head);

}  // namespace trainprof::collector
