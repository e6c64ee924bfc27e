// Step coverage of one training process: what share of its recorded wall time its training steps
// cover, and what the recorded phases say about the rest (docs/analysis.md, "Coverage").
//
//   recorded time of the process (its wall time, or its captured intervals)
//     − training steps (warm-up included)                         = uncovered
//     uncovered ∩ kDataLoaderIter ranges                           → "dataloader_start"
//     rest ∩ kCheckpoint                                           → "checkpoint"
//     rest ∩ kInitProcessGroup                                     → "init_process_group"
//     rest ∩ (evaluation steps ∪ kValidationStep)                  → "evaluation"
//     rest before the process's first phase range                  → "startup"
//     rest                                                         → "unattributed"
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/analysis/process_facts.h"
#include "collector/analysis/training_steps.h"
#include "collector/base/intervals.h"
#include "collector/model/model.h"

namespace trainprof::collector {

/// A share of the recorded time that no training step covers, by what covers it instead.
struct UncoveredPart {
  std::string kind;  ///< "dataloader_start", "checkpoint", "init_process_group", "evaluation", "startup", "unattributed"
  uint64_t ns = 0;
  double percent = 0;  ///< of Coverage::wall_ns
};

struct Coverage {
  uint64_t wall_ns = 0;   ///< recorded time of the process (capture_note.h's RecordedTime)
  uint64_t steps_ns = 0;  ///< union of its training steps within it
  double percent = 0;     ///< steps_ns / wall_ns × 100
  std::vector<UncoveredPart> uncovered;  ///< kinds with time, largest first; they add up to wall − steps
};

/// Coverage of the process of facts `p` by `train_steps` (union of its training step spans);
/// `eval_steps`: its evaluation steps; `phases`: its phase ranges.
Coverage ComputeCoverage(const ProcessFacts& p, const ProcessPhases& phases, const IntervalSet& train_steps,
                         const IntervalSet& eval_steps);

/// The text label of an uncovered kind: "DataLoader iterator start (workers starting)", ...
const char* UncoveredLabel(const std::string& kind);

}  // namespace trainprof::collector
