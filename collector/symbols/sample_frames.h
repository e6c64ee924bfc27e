// The frames a CPU sample (SAMPLE record, `trainprof run --sample`) is counted with, by the
// function table (stats/functions.h) and the folded export (export/export_folded.h):
//
//   the stack has Python frames  ──► its Python frames only, innermost first (the interpreter's
//                                    native frames around them say nothing of the user's code)
//   else                         ──► its native frames symbolized, innermost first, without
//                                    trainprof's own (Symbolizer::Show) and the kernel's signal
//                                    trampoline (`__restore_rt`), which the sampler's handler
//                                    may leave at the top
//   stack 0 (not taken)          ──► one frame "<no stack>"
//   an id no STACK defines       ──► "<unknown stack>"     (damage)
//   nothing left                 ──► "<no frames>"
#pragma once

#include <cstdint>
#include <vector>

#include "collector/model/stacks.h"
#include "collector/symbols/symbolizer.h"

namespace trainprof::collector {

/// The frames a sample of stack `id` of an image counts, innermost first, never empty.
std::vector<SymbolFrame> SampleFrames(const ImageStacks& stacks, uint64_t id, Symbolizer* symbols);

}  // namespace trainprof::collector
