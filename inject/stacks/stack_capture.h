// Taking the calling thread's stack: native frames with libunwind's fast path (`unw_backtrace`,
// local-only), then the thread's Python frames when stacks/python_frames.cc provides them.
//
//   CaptureStack(t, out, max)
//     guard (per thread: a capture re-entered from a signal handler returns 0 frames)
//     unw_backtrace ─► drop the innermost frames inside libtrainprof_inject.so ─► out[i] = pc × 2
//     CapturePythonFrames(t, out + native, max - native)   (weak: 0 words until provided)
//
// Async-signal-safe as far as libunwind's local unw_backtrace is (it reads frame chains and
// .eh_frame, caching per address space; no malloc after its first call): a later sampler's
// handler may call it. No lock, no allocation, no system call of ours.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

struct ThreadState;

inline constexpr size_t kMaxNativeFrames = 64;  ///< native frames kept, innermost first
inline constexpr size_t kMaxPythonFrames = 64;  ///< Python frames kept (3 words each)
/// The word that follows the frames of a part (native, Python) cut at its limit: "more frames
/// here, not recorded" (a native address 0, which no return address is).
inline constexpr uint64_t kCutMarker = 0;
/// Words of one stack at most: native frames, then Python frames of 3 words, and a cut marker
/// after each part.
inline constexpr size_t kMaxStackWords = kMaxNativeFrames + 3 * kMaxPythonFrames + 2;

/// The hook point for Python frames (inject/stacks/python_frames.cc, issue 15's stacks-python):
/// appends the calling thread's Python frames, innermost first, each as 3 words (function string
/// id × 2 + 1, file string id, line), to out[0..max) and returns the words written (a multiple of
/// 3); *cut: the thread had more than kMaxPythonFrames. Only when the thread holds the GIL; never
/// runs Python code. Weak: when no definition is linked in, CaptureStack adds no Python frames.
/// Hidden: resolved (or left null) when the library is linked, never looked up in the process.
size_t CapturePythonFrames(ThreadState* t, uint64_t* out, size_t max, bool* cut)
    __attribute__((weak, visibility("hidden")));

/// Fills out[0..max) with the calling thread's stack words (docs/trace-format.md, "Stacks"):
/// native return addresses × 2, innermost first, trainprof's own frames left out, at most
/// kMaxNativeFrames; then its Python frames (CapturePythonFrames); a part that had more frames
/// than its limit is followed by kCutMarker. Returns the words written; 0
/// when re-entered on this thread (a signal handler interrupting a capture) or when no frame was
/// found. `max` should be kMaxStackWords.
size_t CaptureStack(ThreadState* t, uint64_t* out, size_t max);

/// Native frames only (no Python hook): for callers that must not touch the interpreter.
size_t CaptureNativeStack(uint64_t* out, size_t max);

/// A CPU sample's stack, from the sampler's signal handler (sampler.h): native frames from the
/// interrupted code on (`interrupted_pc`: the ucontext's instruction pointer; the handler's and
/// the signal trampoline's frames left out), then the Python frames read without the interpreter
/// (python_async.h; *missed: those it could not read). *busy: the thread was inside a capture
/// already (nothing taken). Async-signal-safe.
size_t CaptureSampleStack(uintptr_t interrupted_pc, uint64_t* out, size_t max, uint32_t* missed, bool* busy);

/// Finds libtrainprof_inject.so's own address range, whose frames CaptureStack leaves out,
/// initialises libunwind away from the program's descriptors (unwind_setup.h), notes the calling
/// thread's stack bounds (stack_room.h) and warms libunwind up (its first call may allocate). At
/// start-up, before any capture.
void InitStackCapture();

/// Native frames on or off for this process (off in fork children: stacks.h, StartStacks).
void SetNativeStacks(bool on);

}  // namespace trainprof::inject
