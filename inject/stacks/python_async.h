// Python frames of the calling thread read from a signal handler (the CPU sampler), without
// calling the interpreter: the memory reads of stacks/python_async_walk.h on CPython's layouts
// (stacks/python_layout.h; supported versions: docs/trace-format.md, "Stacks"). Interface fixed by
// issue 15 (the sampler's branch calls it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

/// Appends the calling thread's Python frames, innermost first, each as 3 words (function string
/// id × 2 + 1, file string id, line: docs/trace-format.md "Stacks"), to out[0..max); returns the
/// words written (a multiple of 3). *missed: frames the thread had that could not be read (an
/// unreadable frame or code object, a name that could not be interned now); of a deeper stack the
/// innermost 64 frames are walked, the rest left out uncounted (*cut set). Frames of trainprof's shim (python/_trainprof/) are left out, as CapturePythonFrames does.
/// 0 words, 0 missed: no supported CPython in the process, or a thread without Python frames.
/// Async-signal-safe: memory reads, process_vm_readv(2) on this process for memory that may be
/// gone, pthread_getspecific; names new to the process are interned through the calling thread
/// (tls_thread) with StringTable::TryIntern, which never waits for its lock. Never from inside a
/// record of the same thread (the sampler drops such samples first).
size_t CapturePythonFramesAsync(uint64_t* out, size_t max, uint32_t* missed, bool* cut);

/// Finds the interpreter in the process (dlsym: not async-signal-safe) and probes
/// process_vm_readv. Runs when the library loads; the sampler calls it again outside a signal
/// handler (when it starts, and when it arms a thread's timer) for a process that loads libpython
/// later: cheap once found. A CPython whose frames cannot be read (PythonFramesUnsupported) is
/// named on stderr, once per program run (a fork child does not repeat it): "trainprof: pid N:
/// Python frames not read: CPython 3.14 free-threaded is not supported; the samples show native
/// frames only".
void PreparePythonFramesAsync();

/// The CPython in this process whose frames the sampler cannot read, e.g. "CPython 3.14
/// free-threaded", "CPython 3.12 debug build", "CPython 3.9" (stacks::ResolvePyProcess); "" when
/// its frames are read or no CPython is loaded (yet). Not async-signal-safe (it may look the
/// interpreter up). The trace header's stacks metadata carries it (sample_settings.h).
const char* PythonFramesUnsupported();

}  // namespace trainprof::inject
