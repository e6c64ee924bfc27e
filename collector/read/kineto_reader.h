// Reading torch.profiler (Kineto) JSON traces: `export_chrome_trace` and
// `tensorboard_trace_handler` output, plain or gzip, recognised by content (LooksLikeKineto), not
// by name. trace_reader.cc hands such a file here; the result is the same DecodedTrace a trainprof
// trace gives, so everything after the reader (merging, the report, exports) treats both alike.
//
//   bytes ──► KinetoInput (gunzip while read) ──► ParseKinetoJson (SAX, kineto_sax.h)
//         ──► KinetoMapper (kineto_mapping.h: events → TraceImage) ──► FinishKineto (strings → pool)
//
// Memory: the image being built (what the report keeps) and two 256 KiB buffers; never a DOM of
// the file. Damage (a JSON that is not a Kineto trace, truncated gzip or JSON, fields of the wrong
// type, events missing fields) is said in FileStatus::errors naming what was wrong, and everything
// read before it is kept. Field mapping: docs/kineto.md, "Reading".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "collector/model/model.h"
#include "collector/read/kineto_input.h"
#include "collector/read/trace_reader.h"

namespace trainprof::collector {

/// Bytes that start a Kineto trace as trainprof reads it: gzip's magic (1f 8b), or a JSON object
/// ('{') or array ('['; read, and said to be no Kineto trace), after any white space and a UTF-8 byte order mark. `head`: the first bytes of the file
/// (64 are plenty).
bool LooksLikeKineto(std::span<const uint8_t> head);

/// A Kineto trace decoded, its strings in a pool of its own until FinishKineto.
struct KinetoDecoded {
  FileStatus status;
  std::optional<TraceImage> image;  ///< set iff status.usable
  StringPool strings;
};

/// Decodes the `size` bytes that `read` gives (a file read a piece at a time, or memory); `path`
/// names it in messages and gives the host (tensorboard_trace_handler's names). `source_error`,
/// called after the parse, says what went wrong reading the bytes themselves ("" if nothing).
KinetoDecoded DecodeKineto(const ReadAt& read, uint64_t size, const std::string& path, const ReadOptions& options,
                           const std::function<std::string()>& source_error = {});

/// The decoded file with its strings interned into `pool` (ids remapped; file order, so pool ids
/// do not depend on timing).
ReadResult FinishKineto(KinetoDecoded&& decoded, StringPool* pool);

}  // namespace trainprof::collector
