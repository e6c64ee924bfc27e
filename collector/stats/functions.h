// The function table of CPU samples (`trainprof run --sample`; docs/report.md, "Functions"): per
// function, the samples in which it was the innermost frame (self) and those in which it was on
// the stack at all (total; a recursive function counted once per sample), as perf report's
// Self/Children and cProfile's tottime/cumtime split them, and their share of the samples (%).
//
//   SAMPLE {stack} ──► frames (symbols/sample_frames.h): the stack's Python frames where it has
//                      any, else its native frames symbolized, innermost first
//                  ──► self: frames[0]; total: each distinct function of frames
//   function   (name, file, module): "step" of train.py; "LoadBatch()" of libfoo.so
//   line       the line most of the function's samples were at (ties: the lowest); null if none
//   share      percent of the samples of the row's scope: all processes (merged), its process
//              (by_process), its phase (by_phase)
//
// Distinct stacks are symbolized once per image; samples are counted per (stack, phase) first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/model/model.h"
#include "collector/symbols/sample_frames.h"

namespace trainprof::collector {

/// One function of the table, in one scope (all processes, a process, a phase).
struct FunctionRow {
  std::string function;             ///< Python co_qualname, or the demangled native symbol
  std::optional<std::string> file;  ///< the code's file (Python) or source file (native, with -g)
  std::optional<uint32_t> line;
  std::optional<std::string> module;  ///< native: the module's basename; null for Python
  bool python = false;
  int process = -1;    ///< by_process rows: index into Trace::processes; -1 otherwise
  std::string phase;   ///< by_phase rows: "forward", ..., "other"; "" otherwise
  uint64_t self_samples = 0;
  uint64_t total_samples = 0;
  double self_share = 0;   ///< self_samples / the scope's samples, percent
  double total_share = 0;  ///< total_samples / the scope's samples, percent
  /// The text report's "File:Line": "train.py:42" (ShortSourcePath: "torch/nn/modules/module.py:1501" in site-packages), "train.py", the module, or "".
  std::string Location() const;
};

/// The phase a sample fell in, by (process index, image index, thread index, time ns): a name
/// with static storage ("forward") or "" for none ("other" then).
using SamplePhaseOf = std::function<std::string_view(size_t, size_t, uint32_t, uint64_t)>;

struct FunctionTables {
  std::vector<FunctionRow> merged;      ///< all processes; by self, then total, function, file
  std::vector<FunctionRow> by_process;  ///< per process (process order), each sorted as merged
  std::vector<FunctionRow> by_phase;    ///< all processes per phase (phases by samples, then name)
  uint64_t samples = 0;                 ///< SAMPLE records of the trace
  uint64_t python_missed_samples = 0;   ///< of them, with Python frames the sampler could not read
  bool any() const { return samples > 0; }
};

/// The function tables of every SAMPLE of `trace`; by_phase only with `phase_of`.
FunctionTables BuildFunctionTables(const Trace& trace, Symbolizer* symbols, const SamplePhaseOf& phase_of = {});

}  // namespace trainprof::collector
