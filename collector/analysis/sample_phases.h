// The training phase each CPU sample (`trainprof run --sample`) fell in, for the function table's
// --by-phase split (stats/functions.h; docs/report.md, "Functions"): the innermost phase range
// (training_steps.h, the shim's ranges in domain "trainprof") of the sample's own thread that
// holds its time. Innermost, so that a DataLoader worker's sample inside `__getitem__` inside a
// batch fetch is "getitem", and one in the main process's data wait with num_workers=0 is the
// fetch, item or collate it was in; a sample outside every phase range is "other".
//
//   per thread: ranges by (begin, -end) ──sweep with a stack──► disjoint segments [b, e) → phase
//   a sample at t ──binary search──► the segment holding t
//
// Phase names: data_wait, fetch, getitem, collate, worker_init, forward, backward, optimizer
// (Optimizer.step and zero_grad), collective, training_step, validation_step, dataloader_iter,
// checkpoint, init_process_group. Ranges that overlap without nesting (the shim's are nested) are
// cut at their parent's end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

#include "collector/model/model.h"
#include "trainprof/phases.h"

namespace trainprof::collector {

/// The name a sample's phase is shown with ("forward"), "" for a phase that is no span of work
/// (marks, kProfilerStep, kNone).
std::string_view SamplePhaseName(format::Phase phase);

class SamplePhases {
 public:
  /// The phase segments of every thread with phase ranges in `trace` (its NVTX events must have
  /// been kept: KeepNvtx::kPhases).
  explicit SamplePhases(const Trace& trace);
  /// The phase of a sample of process `process`, image `image`, thread index `thread` at `t_ns`:
  /// a static name, "" outside every phase range.
  std::string_view At(size_t process, size_t image, uint32_t thread, uint64_t t_ns) const;

 private:
  struct Segment {
    uint64_t begin_ns = 0;
    uint64_t end_ns = 0;
    std::string_view phase;
  };
  std::map<std::tuple<size_t, size_t, uint32_t>, std::vector<Segment>> threads_;
};

}  // namespace trainprof::collector
