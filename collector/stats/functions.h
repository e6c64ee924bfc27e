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
#include <map>
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

/// One function's samples in one scope of one process.
struct FunctionCount {
  uint32_t function = 0;  ///< index into FunctionCounts::functions
  uint64_t self = 0;
  uint64_t total = 0;
  std::map<uint32_t, uint64_t> lines;  ///< line (0: unknown) → samples
  bool operator==(const FunctionCount&) const = default;
};

/// One scope's samples, and each function's in it (by function index).
struct FunctionScope {
  uint64_t samples = 0;
  std::vector<FunctionCount> functions;
  bool operator==(const FunctionScope&) const = default;
};

/// The CPU samples of one process counted per function: what the function tables merge (its share
/// of a report's summaries, collector/summary/).
struct FunctionCounts {
  /// Its distinct functions: function, file, module and python set; line unset (a row's line is
  /// the one most of its samples were at, from FunctionCount::lines).
  std::vector<SymbolFrame> functions;
  FunctionScope process;                        ///< every sample of the process
  std::map<std::string, FunctionScope> phases;  ///< per phase label ("other": outside every phase)
  uint64_t samples = 0;                         ///< SAMPLE records of the process
  uint64_t python_missed_samples = 0;           ///< of them, with Python frames the sampler could not read
};

/// The phase a sample of one process fell in, by (image index, thread index, time ns): as SamplePhaseOf.
using ProcessSamplePhaseOf = std::function<std::string_view(size_t, uint32_t, uint64_t)>;

/// Symbolizes `p`'s sampled stacks (each distinct stack of an image once) and counts its samples per
/// function, per phase too with `phase_of`.
FunctionCounts CountFunctions(const Process& p, Symbolizer* symbols, const ProcessSamplePhaseOf& phase_of = {});

/// The function tables of processes of these counts, in report order (`per_process[i]`: process
/// i's, FunctionRow::process = i); by_phase where the counts have phases.
FunctionTables MergeFunctionCounts(const std::vector<const FunctionCounts*>& per_process);

/// The function tables of every SAMPLE of `trace` (CountFunctions of each process, merged); by_phase
/// only with `phase_of`.
FunctionTables BuildFunctionTables(const Trace& trace, Symbolizer* symbols, const SamplePhaseOf& phase_of = {});

}  // namespace trainprof::collector
