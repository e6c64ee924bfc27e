// Progress of a long export, for the launcher's progress bar (launcher/progress_bar.h): the
// exporters report how many events they have written so far, at each flush of their buffer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/export/selection.h"
#include "collector/model/model.h"

namespace trainprof::collector {

class ExportProgress {
 public:
  virtual ~ExportProgress() = default;
  /// `written` events of the export so far (all files), of about ExportEventCount().
  virtual void Update(uint64_t written) = 0;
};

/// The number of timed events of the selected processes (NVTX, CUDA calls and GPU work, host
/// operators): what an export writes at most, before the window and without metadata. The total
/// of the progress bar.
uint64_t ExportEventCount(const Trace& trace, const Selection& selection);

}  // namespace trainprof::collector
