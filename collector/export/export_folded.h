// `trainprof export --format folded`: the CPU samples (`trainprof run --sample`) or the call-site
// stacks (`trainprof run --backtrace`) as folded stacks, the text FlameGraph's flamegraph.pl and
// speedscope read (Brendan Gregg's stackcollapse format): one line per distinct stack,
//
//   frame;frame;...;frame COUNT        root (outermost) first, the leaf last
//
// Samples (the default when the selected processes have any: `--from auto`, as perf script |
// stackcollapse and py-spy's folded output): each sample's frames as the function table counts
// them (symbols/sample_frames.h: Python frames where the stack has them, else native), the
// innermost frame the leaf; COUNT: samples (`--weight time` is refused: a sample has no duration).
//
// Call sites (`--from callsites`, or when there are no samples): each stacked range, mark or CUDA call gives the stack from its outermost frame to its call site
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
/// What the stacks come from: samples when the selected processes have any, else call sites (kAuto).
enum class FoldedSource : uint8_t { kAuto, kSamples, kCallSites };

struct FoldedStats {
  uint64_t lines = 0;   ///< distinct stacks written
  uint64_t events = 0;  ///< samples or stacked events they sum
  bool samples = false; ///< the stacks are the CPU samples' (else the call sites')
};

/// Whether the processes `selection` keeps have CPU samples.
bool HasSamples(const Trace& trace, const Selection& selection);

/// Writes the folded stacks of the processes `selection` keeps into `out`. With samples, `weight`
/// must be kCalls (each line counts samples).
FoldedStats ExportFolded(const Trace& trace, const Selection& selection, FoldedWeight weight, OutputSink* out,
                         FoldedSource source = FoldedSource::kAuto);

}  // namespace trainprof::collector
