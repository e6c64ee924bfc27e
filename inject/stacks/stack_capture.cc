#include "stacks/stack_capture.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <link.h>

#include <atomic>

#include "stacks/load_span.h"
#include "stacks/python_async.h"
#include "stacks/stack_room.h"
#include "stacks/unwind_setup.h"

namespace trainprof::inject {
namespace {

// Re-entry guard: a capture interrupted by a signal handler that captures too (a sampler) gets
// nothing in the handler rather than running libunwind twice on one thread.
thread_local volatile bool tls_in_capture __attribute__((tls_model("initial-exec"))) = false;

// This library's PT_LOAD span, [g_self_start, g_self_end): innermost frames in it are ours.
std::atomic<uintptr_t> g_self_start{0};
std::atomic<uintptr_t> g_self_end{0};
std::atomic<bool> g_native_on{true};

int FindSelf(struct dl_phdr_info* info, size_t, void* data) {
  const auto here = reinterpret_cast<uintptr_t>(data);
  uintptr_t lo, hi;
  if (!LoadSpan(info, &lo, &hi) || here < lo || here >= hi) return 0;
  g_self_start.store(lo, std::memory_order_relaxed);
  g_self_end.store(hi, std::memory_order_relaxed);
  return 1;
}

#if defined(__SANITIZE_THREAD__)
// TSan builds only: the return addresses by unw_step, not unw_backtrace. unw_backtrace's fast path
// keeps a per-thread frame cache whose pthread-key destructor frees it under libunwind's mutex at
// thread exit, after TSan has torn down the thread's state: TSan's pthread_mutex_lock interceptor
// then dies of SIGSEGV (any thread that took a stack and exits; CI's TSan suite, stop 22). unw_step
// keeps no per-thread state; it is slower, which only the sanitizer build pays.
int Backtrace(void** pcs, int cap) {
  unw_context_t uc;
  unw_cursor_t cursor;
  if (unw_getcontext(&uc) != 0 || unw_init_local(&cursor, &uc) != 0) return 0;
  int n = 0;
  while (n < cap) {
    unw_word_t ip = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
    pcs[n++] = reinterpret_cast<void*>(ip);
    if (unw_step(&cursor) <= 0) break;
  }
  return n;
}
#else
int Backtrace(void** pcs, int cap) { return unw_backtrace(pcs, cap); }
#endif

}  // namespace

void InitStackCapture() {
  if (g_self_end.load(std::memory_order_relaxed) == 0) {
    dl_iterate_phdr(FindSelf, reinterpret_cast<void*>(&InitStackCapture));
  }
  InitUnwinder();     // libunwind's pipe above the program's descriptors, its validation ours
  NoteThreadStack();  // the starting thread's bounds (the main thread's: from RLIMIT_STACK)
  void* warm[4];
  Backtrace(warm, 4);
  // The step-by-step path too (unw_backtrace falls back to it at frames its fast path cannot
  // take): each libunwind function's first call goes through the loader's lazy binding, whose
  // resolver saves the whole vector state on the stack (2.5 KiB with AVX-512), better here at
  // start-up than in a signal handler on a thread with a 16 KiB stack.
  unw_context_t uc;
  unw_cursor_t cursor;
  unw_word_t ip = 0;
  if (unw_getcontext(&uc) == 0 && unw_init_local(&cursor, &uc) == 0) {
    unw_get_reg(&cursor, UNW_REG_IP, &ip);
    unw_step(&cursor);
  }
}

void SetNativeStacks(bool on) { g_native_on.store(on, std::memory_order_relaxed); }

namespace {

// unw_backtrace's frames into out (pc × 2), the innermost ones in this library left out; with
// `interrupted_pc` (a signal handler's), also those up to the frame of the interrupted code (the
// kernel's signal trampoline, __restore_rt in libc, sits between). unw_backtrace writes into out
// itself (a pointer is a word here), and the frames kept are moved down in place: no array of
// return addresses on a stack that may have 16 KiB in all.
size_t NativeFrames(uint64_t* out, size_t max, uintptr_t interrupted_pc) {
  static_assert(sizeof(void*) == sizeof(uint64_t), "return addresses are written as words in place");
  if (!g_native_on.load(std::memory_order_relaxed)) return 0;
  const size_t room = max < kMaxNativeFrames + 8 ? max : kMaxNativeFrames + 8;
  const int cap = static_cast<int>(room);
  if (cap == 0) return 0;
  void** pcs = reinterpret_cast<void**>(out);
  int n = Backtrace(pcs, cap);
  const uintptr_t lo = g_self_start.load(std::memory_order_relaxed);
  const uintptr_t hi = g_self_end.load(std::memory_order_relaxed);
  auto pc_at = [&](int k) { return reinterpret_cast<uintptr_t>(pcs[k]); };
  int i = 0;
  while (i < n && pc_at(i) >= lo && pc_at(i) < hi) ++i;
  if (interrupted_pc != 0) {
    int k = i;
    while (k < n && k < i + 4 && pc_at(k) != interrupted_pc) ++k;
    // Not found (libunwind reported the frame otherwise): leave out the trampoline alone.
    i = (k < n && k < i + 4) ? k : i + 1;
  }
  size_t w = 0;
  for (; i < n && w < max && w < kMaxNativeFrames; ++i) {  // w <= i: reads stay ahead of writes
    const uintptr_t pc = pc_at(i);
    if (pc == 0) break;
    out[w++] = static_cast<uint64_t>(pc) << 1;
  }
  // Frames remained past the limit (or past what unw_backtrace could hold): say so.
  if (w == kMaxNativeFrames && (i < n || n == cap) && w < max) out[w++] = kCutMarker;
  return w;
}

}  // namespace

size_t CaptureNativeStack(uint64_t* out, size_t max) { return NativeFrames(out, max, 0); }

size_t CaptureSampleStack(uintptr_t interrupted_pc, uint64_t* out, size_t max, uint32_t* missed, bool* busy) {
  *missed = 0;
  *busy = tls_in_capture;
  if (*busy) return 0;
  tls_in_capture = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
#if defined(__SANITIZE_THREAD__)
  // TSan build: no native frames in the handler. unw_step (Backtrace above) locks libunwind's
  // cache mutex, and TSan's deadlock detector fails a CHECK on a lock taken in a signal handler.
  (void)interrupted_pc;
  size_t n = 0;
#else
  size_t n = NativeFrames(out, max, interrupted_pc);
#endif
  if (n < max) {
    bool cut = false;
    size_t py = CapturePythonFramesAsync(out + n, max - n, missed, &cut);
    n += py - py % 3;
    if (cut && py > 0 && n < max) out[n++] = kCutMarker;
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  tls_in_capture = false;
  return n;
}

size_t CaptureStack(ThreadState* t, uint64_t* out, size_t max) {
  if (tls_in_capture) return 0;
  tls_in_capture = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  size_t n = CaptureNativeStack(out, max);
  if (CapturePythonFrames != nullptr && n < max) {
    bool cut = false;
    size_t py = CapturePythonFrames(t, out + n, max - n, &cut);
    n += py - py % 3;
    if (cut && py > 0 && n < max) out[n++] = kCutMarker;
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  tls_in_capture = false;
  return n;
}

}  // namespace trainprof::inject
