// A summary file: the summaries of the processes of one trace file (process_summary.h) with that
// file's status, as CBOR (RFC 8949), written and read with nlohmann/json (to_cbor / from_cbor),
// the format docs/summary-format.md describes. `trainprof summarize` writes one per trace file;
// `trainprof report` merges them as it merges the summaries it makes of traces.
//
//   the file: 0xd9 0xd9 0xf7 (CBOR's self-described tag 55799, RFC 8949 §3.4.6: the magic)
//             then one map: {"trainprof_summary": kSummaryFormatVersion,
//                            "files": [status, ...], "not_recorded_omitted": n,
//                            "processes": [summary, ...]}
//             then the CRC-32 (zlib's, little-endian) of that map's bytes: a flipped bit is
//             found, not read as another number
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "collector/base/string_pool.h"
#include "collector/model/model.h"
#include "collector/summary/process_summary.h"

namespace trainprof::collector {

/// What is wrong with a summary file's bytes (what(): one line, without the file's name).
struct SummaryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The magic of a summary file: CBOR's self-described tag 55799 (RFC 8949 §3.4.6).
inline constexpr uint8_t kSummaryMagic[] = {0xd9, 0xd9, 0xf7};

/// A summary file's largest size and nesting: a forged file past either is refused before it costs
/// memory (reading one costs up to about 32 bytes per byte of it, nlohmann/json's values).
inline constexpr size_t kMaxSummaryBytes = size_t{256} << 20;
inline constexpr size_t kMaxSummaryDepth = 32;

/// The version of the summary encoding; a reader takes its own version only (a summary is made
/// again from its trace, cheaply, by the trainprof that reads it).
inline constexpr uint32_t kSummaryFormatVersion = 2;

/// What a summary file holds.
struct SummaryFile {
  /// The trace files it stands for, as they were read (their damage, losses, bytes): one for a file
  /// `trainprof summarize` wrote, none for a process's summary alone.
  std::vector<FileStatus> files;
  /// Children known from fork records only that the summarised trace left out (read/process_tree.h
  /// kMaxNotRecorded).
  size_t not_recorded_omitted = 0;
  /// The processes whose first image is in those files, with the children that left no trace file
  /// that they started, in the order of the process tree they were summarised in.
  std::vector<ProcessSummary> processes;
};

/// The bytes of a summary file of `files`, `not_recorded_omitted` and `processes`, whose names are
/// in `strings`.
std::vector<uint8_t> EncodeSummaryFile(const std::vector<FileStatus>& files, size_t not_recorded_omitted,
                                       const std::vector<const ProcessSummary*>& processes,
                                       const StringPool& strings);

/// The summary file in `bytes`, its names interned into `strings`. Throws SummaryError where the
/// bytes are not a summary file (no magic, not CBOR, cut short), are of another version, or hold a
/// field of the wrong type or a value no summary can have; the error names the field's path
/// ("processes[2].nvtx.ranges[3].durations: ...", "files[0]: field \"path\" is missing").
SummaryFile DecodeSummaryFile(std::span<const uint8_t> bytes, StringPool* strings);

/// One process's summary alone as a summary file's bytes, and back (the file must hold exactly one
/// process): what the report's own check (TRAINPROF_SUMMARY_ROUNDTRIP) and the tests write.
std::vector<uint8_t> EncodeSummary(const ProcessSummary& s, const StringPool& strings);
ProcessSummary DecodeSummary(std::span<const uint8_t> bytes, StringPool* strings);

/// A summary file's bytes around `cbor`, the CBOR of its map: the magic before, the CRC-32 after.
std::vector<uint8_t> SealSummary(std::span<const uint8_t> cbor);

/// Whether `head` (the file's first bytes, 3 or more) starts as a summary file does.
bool LooksLikeSummary(std::span<const uint8_t> head);

/// Whether the file at `path` is a regular file that starts as a summary file does.
bool IsSummaryFile(const std::string& path);

/// The summary file at `path`, its names interned into `strings`. A file that cannot be read or is
/// no summary of this version is not an error here: it comes back as one unusable file whose status
/// says why ("PATH: ..."), as a damaged trace file is reported, and the others are merged.
SummaryFile ReadSummaryFile(const std::string& path, StringPool* strings);

}  // namespace trainprof::collector
