#include "collector/export/export_progress.h"

#include <algorithm>

namespace trainprof::collector {

uint64_t ExportEventCount(const Trace& trace, const Selection& selection) {
  uint64_t n = 0;
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    if (!selection.Process(i)) continue;
    for (const TraceImage& img : trace.processes[i].images) {
      const CudaData& c = img.cuda;
      n += std::max<uint64_t>(img.nvtx.size(), img.nvtx_events) + img.host_ops.size() + img.process_events.size() + c.calls.size() + c.kernels.size() +
           c.memcpys.size() + c.memsets.size() + c.syncs.size();
    }
  }
  return n;
}

}  // namespace trainprof::collector
