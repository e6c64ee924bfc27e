// `trainprof export --format folded`: the call-site stacks (`trainprof run --backtrace`) as folded
// stacks, the text FlameGraph's flamegraph.pl and speedscope read (Brendan Gregg's
// stackcollapse format): one line per distinct stack,
//
//   frame;frame;...;frame COUNT        root (outermost) first, the leaf last
//
// Each stacked range, mark or CUDA call gives the stack from its outermost frame to its call site
// (symbols/symbolizer.h: frames inside the call site — NVTX/CUDA entry points, trainprof's own —
// are left out), then the range or call name as the leaf ("main;train;load_batch (io.cc:20);io").
// A frame is "function (file:line)" or "function". COUNT: calls (default) or total time in ns
// (`--weight time`; marks weigh 0 and are left out then). Lines sorted by stack text. Semicolons
// in names are written as ':' (the format's separator).
#pragma once

#include <cstdint>

#include "collector/base/output_sink.h"
#include "collector/export/selection.h"
#include "collector/model/model.h"

namespace trainprof::collector {

enum class FoldedWeight : uint8_t { kCalls, kTime };

struct FoldedStats {
  uint64_t lines = 0;   ///< distinct stacks written
  uint64_t events = 0;  ///< stacked events they sum
};

/// Writes the folded stacks of the processes `selection` keeps into `out`.
FoldedStats ExportFolded(const Trace& trace, const Selection& selection, FoldedWeight weight, OutputSink* out);

}  // namespace trainprof::collector
