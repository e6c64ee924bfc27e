// Stack room: whether the calling thread has enough stack left for trainprof to take a call stack
// (libunwind, the stack table, MODULE and STACK records, the Python walk) in a hook or in the
// sampler's signal handler. Threads with PTHREAD_STACK_MIN (16 KiB) stacks have little to spare: a
// capture where too little is left is skipped and counted (FileHeader::stacks_skipped), never run
// into the guard page.
//
//   NoteThreadStack()   outside signal handlers (start-up for the main thread, a sampled thread's
//                       start routine): the thread's bounds from pthread_getattr_np, kept per
//                       thread (initial-exec TLS)
//   HasStackRoom(need)  async-signal-safe: the stack pointer against the bounds noted; where none
//                       were (a thread first seen in a hook, which may be a signal handler) or the
//                       stack pointer is elsewhere (a sigaltstack, a fiber), the `need` bytes
//                       below it are probed with process_vm_readv (a guard page or an unmapped
//                       page fails it), and the range found readable is kept per thread, so
//                       later captures at the same depth make no system call
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

/// Stack bytes a capture may use below the frame that checks, at most. Measured (docs/cli.md,
/// "Stack space"; tests/programs/small_stacks.cc, measure mode): 7.4 KiB for an NVTX range's
/// stack, 8.1 KiB for a sample's, of which 2.5 KiB are the loader's lazy binding of a libunwind
/// function on its first call in the process (its resolver saves the AVX-512 state on the
/// stack); about 20% spare.
inline constexpr size_t kStackCaptureBudget = 10 * 1024;

/// An address range [lo, hi) of stack (lo == hi: unknown).
struct StackSpan {
  uintptr_t lo = 0;
  uintptr_t hi = 0;
};

/// Whether `span` holds sp and at least `need` bytes below it. Pure.
bool SpanHasRoom(StackSpan span, uintptr_t sp, size_t need);

/// Notes the calling thread's stack bounds (pthread_getattr_np: allocates; never in a signal
/// handler). Idempotent per thread; a thread whose bounds cannot be read stays unknown.
void NoteThreadStack();

/// Whether the calling thread has `need` bytes of stack below the caller's frame (see above).
/// Async-signal-safe: no allocation or lock; at most one process_vm_readv.
bool HasStackRoom(size_t need);

/// The calling thread's bounds as noted (lo == hi when not noted), for tests.
StackSpan NotedThreadStack();

}  // namespace trainprof::inject
