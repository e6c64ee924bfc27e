// Python frames for a stack (docs/trace-format.md, "Stacks"): the glue between the walk
// (python_walk.h) and the recorder: CPython's API found in this process, names interned in the
// process's string table through the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

struct ThreadState;

/// Writes the calling thread's Python frames, innermost first, as STACK values (function string
/// id × 2 + 1, file string id, line; 3 values a frame, at most 64 frames) to out[0..max_values);
/// returns the number of values written: 0 when the process has no CPython, the thread does not
/// hold the GIL, or Python is not initialised. Frames of trainprof's own shim (python/_trainprof)
/// are left out. *cut: the thread had more frames than the 64 written. The API is resolved with dlsym when the library loads, or, where Python was not
/// there yet, at the first call (calls racing it get 0).
/// Not async-signal-safe (it calls into the interpreter): never from a signal handler.
size_t CapturePythonFrames(ThreadState* t, uint64_t* out, size_t max_values, bool* cut);

}  // namespace trainprof::inject
