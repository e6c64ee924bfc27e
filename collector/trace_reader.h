// Tolerant reader of one trace file (the layout is format/trainprof/trace_format.h).
//
// Contract: any byte sequence is safe input. Every offset and length read from the file is
// checked against the file before use, string lengths are capped at kMaxStringBytes, and every
// loop advances through the file, so the reader neither crashes, allocates absurdly nor hangs.
// It keeps what it can: a chunk cut short (crash, copy in progress) or damaged in the middle is
// decoded up to its last whole record; one damaged chunk does not lose the others. Each problem
// becomes one line in FileStatus::errors, naming the byte offset where it was found.
//
//   header (+ metadata TLVs) ──► chunk slots: skip magic 0, check magic/committed/EOF
//        └─► group chunks by thread_index, order by thread_seq
//             └─► records, each chunk from its own base_ns ──► TraceImage (string ids pooled)
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "collector/model.h"

namespace trainprof::collector {

struct ReadResult {
  FileStatus status;
  std::optional<TraceImage> image;  ///< set iff status.usable
};

/// Decodes a whole trace held in memory; `path` only names it in messages.
ReadResult ReadTraceBytes(std::span<const uint8_t> data, const std::string& path, StringPool* strings);

/// Reads the file at `path` into memory and decodes it. A file that cannot be opened or read is
/// reported in the status (usable == false), never thrown.
ReadResult ReadTraceFile(const std::string& path, StringPool* strings);

/// "what is wrong; what else (read N of M bytes)": the damage of one file on one line.
std::string DescribeDamage(const FileStatus& status);

}  // namespace trainprof::collector
