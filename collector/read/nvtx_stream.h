// Every NVTX event of one process image, in file order, without holding them: the exporters'
// source (export/nvtx_walk.h). An image loaded with KeepNvtx::kAll (or from a Kineto file) has them
// in TraceImage::nvtx; one loaded with KeepNvtx::kStreamed kept only the phases', and its file is
// decoded again, a chunk at a time, into an NvtxSink (model/nvtx_sink.h): memory is one chunk and
// the reader's per-file tables, whatever the number of events (docs/performance.md, "Export").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "collector/model/model.h"

namespace trainprof::collector {

/// Calls on_event(e, stack) for each NVTX event of `img` (an image of `trace`) in file order, the
/// order TraceImage::nvtx has with KeepNvtx::kAll; `stack` is the Stack id of the EVENT_STACK that
/// followed it (0: none). Names and domains are pool ids of trace.strings.
/// Returns "" or, when the file had to be read again and that went wrong (it is gone, or it changed
/// since it was loaded: a run still writing it), what happened; the events read are delivered.
std::string ForEachNvtxEvent(const Trace& trace, const TraceImage& img,
                             const std::function<void(const NvtxEvent& e, uint64_t stack)>& on_event);

}  // namespace trainprof::collector
