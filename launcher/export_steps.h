// The training steps of each process as `ProfilerStep#N` spans for `trainprof export --format
// kineto` (collector/export/export_kineto.h): the step analysis (collector/analysis/
// training_steps.h) is the report's; the export stage may not use it, so the launcher hands the
// spans over.
#pragma once

#include <vector>

#include "collector/export/export_kineto.h"
#include "collector/model/model.h"

namespace trainprof::launcher {

/// By index of Trace::processes: every step (training and evaluation) of the selected processes,
/// numbered from 0 by start; none for a process that has ProfilerStep ranges of its own (phase
/// kProfilerStep: an imported torch.profiler trace), which the export writes as they are.
std::vector<std::vector<collector::StepSpan>> ExportSteps(const collector::Trace& trace,
                                                          const collector::Selection& selection);

}  // namespace trainprof::launcher
