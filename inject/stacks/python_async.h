// Python frames of the calling thread read from a signal handler (the CPU sampler, sampler.h),
// without calling the interpreter. Interface fixed by issue 15 (branch python-async provides the
// reading of CPython's frame chain).
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

/// Appends the calling thread's Python frames, innermost first, each as 3 words (function string
/// id × 2 + 1, file string id, line: docs/trace-format.md "Stacks"), to out[0..max); returns the
/// words written (a multiple of 3). *missed: frames the thread had that could not be read.
/// Async-signal-safe: memory reads only; no lock, allocation, system call of the caller's kind or
/// Python call.
size_t CapturePythonFramesAsync(uint64_t* out, size_t max, uint32_t* missed);

}  // namespace trainprof::inject
