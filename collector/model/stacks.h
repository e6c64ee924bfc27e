// Call stacks of one process image, as the reader decodes them (docs/trace-format.md, "Stacks"):
//
//   STACK {id, frames}  ──► Stack (frames innermost first: native return addresses, then Python
//                           frames with function, file, line as pool string ids)
//   MODULE              ──► Module (bias, runtime span, path, build id): what symbolizes an address
//   EVENT_STACK {stack} ──► CudaCall::stack of the CUDA_API_EXIT before it; for a range push or
//                           start, the range's StackUse when it closes (and NvtxStack of a kept
//                           event); for a mark, a StackUse of duration 0
//   SAMPLE              ──► Sample
//
// Ranges are not kept by `report` (model.h), so the reader sums them per (range, stack) as it
// matches them: StackUse, what the call-site table (stats/callsites.h) groups.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/base/string_pool.h"

namespace trainprof::collector {

/// What a stack was taken at, for the call-site table.
enum class StackUseKind : uint8_t { kRange, kMark };

/// One frame of a stack. Native: `address` set, function/file 0 (symbolized later, from the
/// modules). Python: `python` true, function and file pool ids, line as recorded. `cut`: not a
/// frame but the mark that the part before it (native frames, or Python frames when `python`)
/// had more, outer frames than the library keeps (64 of each; docs/trace-format.md, "Stacks").
struct StackFrame {
  uint64_t address = 0;
  StringId function = 0;
  StringId file = 0;
  uint32_t line = 0;
  bool python = false;
  bool cut = false;
};

/// A distinct stack of the image (STACK record): id as the file gives it (1..), frames innermost first.
struct Stack {
  uint64_t id = 0;
  std::vector<StackFrame> frames;
  /// Whether the part a sample is counted with (its Python frames where it has them, else its
  /// native frames: symbols/sample_frames.h) was cut at the library's limit.
  bool SampleCut() const;
};

/// A loaded object (MODULE record). An address `a` with start <= a < end is `a - bias` in the ELF file.
struct Module {
  uint64_t bias = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  StringId path = 0;
  StringId build_id = 0;  ///< lowercase hex; 0 = none
};

/// Ranges (or marks) of one name opened at one stack: how many, and their total time (ns).
struct StackUse {
  StackUseKind kind = StackUseKind::kRange;
  StringId domain = 0;
  StringId name = 0;
  uint64_t stack = 0;  ///< a Stack id of the image
  uint64_t count = 0;
  uint64_t total_ns = 0;
};

/// A kept NVTX event (TraceImage::nvtx index) and its stack: what the timeline export shows.
struct NvtxStack {
  uint64_t event = 0;
  uint64_t stack = 0;
};

/// One CPU-time sample (SAMPLE record).
struct Sample {
  uint64_t time_ns = 0;
  uint32_t thread = 0;  ///< index into TraceImage::threads
  uint64_t stack = 0;   ///< 0: the stack could not be taken
  uint64_t python_missed = 0;
};

/// A thread the sampler could not give a CPU timer (SAMPLE_THREAD_LOST): never sampled.
struct ThreadNotSampled {
  uint32_t thread = 0;  ///< index into TraceImage::threads
  uint32_t reason = 0;  ///< format::SampleThreadLost's: 1 RLIMIT_SIGPENDING share, 2 timer_create, 3 timer_settime
  uint64_t error = 0;   ///< errno of the failed call (0 for reason 1)
  uint64_t limit = 0;   ///< RLIMIT_SIGPENDING then (0 = unlimited)
  uint64_t queued = 0;  ///< reason 1: the user's queued signals then
};

/// The stack data of one image.
struct ImageStacks {
  std::vector<Stack> stacks;    ///< by id, ascending (unique)
  std::vector<Module> modules;  ///< in file order
  std::vector<StackUse> uses;
  std::vector<NvtxStack> nvtx;  ///< by event index, ascending (the reader appends in event order)
  std::vector<Sample> samples;
  std::vector<ThreadNotSampled> threads_not_sampled;  ///< SAMPLE_THREAD_LOST records, in file order
  uint64_t paused_cpu_ns = 0;  ///< SAMPLE_PAUSED: CPU time of threads that blocked the sampling signal
  /// The process's wall-clock start (FileHeader::start_realtime_ns, CLOCK_REALTIME ns; 0:
  /// unknown): a module file without a recorded build id modified after it is not trusted.
  uint64_t start_realtime_ns = 0;

  /// The stack with id `id`, or nullptr.
  const Stack* Find(uint64_t id) const;
  /// The module whose span holds `address`, or nullptr (the latest one recorded wins).
  const Module* ModuleOf(uint64_t address) const;
  bool empty() const { return stacks.empty() && samples.empty(); }
};

}  // namespace trainprof::collector
