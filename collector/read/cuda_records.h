// The trace reader's part for CUDA records (format version 2, tags 48..59): field layouts, and
// decoding of whole records into the image's CudaData (cuda_model.h). The reader
// (trace_reader.cc) checks bounds and varints and hands over complete records only.
//
//   CUDA_API_ENTER ──► CudaCall (returned = false), open by correlation id
//   CUDA_API_EXIT  ──► the open call with that correlation: end, status, returned = true
//                      (none open: counted in unmatched_exits)
//   GPU_KERNEL/MEMCPY/MEMSET/SYNC/OVERHEAD
//                  ──► absolute time = chunk base_ns + zs / ze; a zero time (0 on the absolute
//                      axis, or before it), or end < start, is counted in invalid_timestamps and
//                      the record left out, so that no statistic ever sees it
//   GPU_DEVICE/CONTEXT/DROPPED/STATUS, CAPTURE ──► definitions, counters, events
//
// Numeric fields wider than the model's 32-bit ones (ids, grid sizes) saturate at UINT32_MAX:
// a damaged varint must not wrap into a plausible value.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>

#include "collector/model/cuda_model.h"

namespace trainprof::collector {

/// Fields after the tag byte of a CUDA record, and whether the first is a dt. {0, false} for a
/// tag that is not a CUDA record (or not in this format version: version 1 has none).
struct CudaTagLayout {
  uint8_t fields = 0;
  bool timed = false;
};
CudaTagLayout CudaLayout(uint8_t tag, uint32_t version);

/// The most fields any record has (GPU_KERNEL: 18); the reader's field buffer size.
inline constexpr int kMaxRecordFields = 18;

class CudaRecordDecoder {
 public:
  /// `string_ref` maps a raw string id of the file to the reader's string ref (resolved later).
  CudaRecordDecoder(CudaData* out, std::function<uint32_t(uint64_t)> string_ref)
      : out_(*out), string_ref_(std::move(string_ref)) {}

  /// One whole record. `f` holds CudaLayout(tag).fields values; `now` is the record's time when it
  /// is timed (dt chain), `base_ns` the chunk's base (for zs/ze), `thread` the image's thread index.
  void Add(uint8_t tag, const uint64_t* f, uint64_t now, uint64_t base_ns, uint32_t thread);

  /// Replaces string refs by pool ids (`pool_of_ref[ref]`) once every STRING record was read.
  void Resolve(const std::vector<StringId>& pool_of_ref);

 private:
  CudaData& out_;
  std::function<uint32_t(uint64_t)> string_ref_;
  std::unordered_map<uint64_t, size_t> open_calls_;  // correlation → index into out_.calls
};

}  // namespace trainprof::collector
