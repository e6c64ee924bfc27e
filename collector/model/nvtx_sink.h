// Where the reader hands an image's NVTX events one at a time, as it decodes them, instead of
// keeping them in TraceImage::nvtx: the way to an export whose memory does not grow with the
// trace (read/nvtx_stream.h; docs/performance.md, "Export"). Set it in ReadOptions
// (read/trace_reader.h).
//
// What a sink sees, per image, in file order (a thread's chunks in order, threads one after the
// other), which is the order TraceImage::nvtx has with KeepNvtx::kAll: every push, pop, mark, start
// and end (the operators' domain, format::kTorchOpsDomain, is not NVTX: never), each once the record
// after it is known, with the EVENT_STACK that followed it.
#pragma once

#include <cstdint>

#include "collector/model/model.h"

namespace trainprof::collector {

class NvtxSink {
 public:
  virtual ~NvtxSink() = default;
  /// `e.name`, `e.domain`: pool ids (ReadOptions::nvtx_names); `stack`: the Stack id of the
  /// image that the event's EVENT_STACK named (0: none).
  virtual void Event(const NvtxEvent& e, uint64_t stack) = 0;
};

}  // namespace trainprof::collector
