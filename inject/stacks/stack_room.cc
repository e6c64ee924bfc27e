#include "stacks/stack_room.h"

#include <errno.h>
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include "stacks/safe_read.h"

namespace trainprof::inject {
namespace {

constexpr uintptr_t kPage = 4096;

// The thread's bounds (NoteThreadStack), and a range below them or elsewhere found readable by a
// probe (HasStackRoom). Initial-exec TLS: no __tls_get_addr in a signal handler.
thread_local StackSpan tls_noted __attribute__((tls_model("initial-exec")));
thread_local StackSpan tls_probed __attribute__((tls_model("initial-exec")));

// Whether every page of [lo, hi) is readable: one byte of each, by one process_vm_readv.
bool Readable(uintptr_t lo, uintptr_t hi) {
  // A range of the budget's length touches at most budget / page + 2 pages (one partial page at
  // each end); a longer one is not probed.
  constexpr size_t kMaxPages = kStackCaptureBudget / kPage + 2;
  const uintptr_t first = lo & ~(kPage - 1);
  if (hi <= lo || (hi - first + kPage - 1) / kPage > kMaxPages) return false;
  iovec remote[kMaxPages];
  size_t n = 0;
  for (uintptr_t p = first; p < hi; p += kPage, ++n) {
    remote[n].iov_base = reinterpret_cast<void*>(p < lo ? lo : p);
    remote[n].iov_len = 1;
  }
  char bytes[kMaxPages];
  iovec local{bytes, n};
  const int saved = errno;
  const ssize_t got = process_vm_readv(getpid(), &local, 1, remote, n, 0);
  errno = saved;
  return got == static_cast<ssize_t>(n);
}

}  // namespace

bool SpanHasRoom(StackSpan span, uintptr_t sp, size_t need) {
  return span.lo < span.hi && sp <= span.hi && sp >= span.lo && sp - span.lo >= need;
}

void NoteThreadStack() {
  if (tls_noted.lo < tls_noted.hi) return;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* addr = nullptr;
  size_t size = 0;
  // [addr, addr + size): glibc leaves a thread's guard pages out of it; the main thread's is
  // RLIMIT_STACK below the top, cut at the mapping under it.
  if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size > 0) {
    const auto lo = reinterpret_cast<uintptr_t>(addr);
    tls_noted = StackSpan{lo, lo + size};
  }
  pthread_attr_destroy(&attr);
}

StackSpan NotedThreadStack() { return tls_noted; }

bool HasStackRoom(size_t need) {
  const auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (SpanHasRoom(tls_noted, sp, need) || SpanHasRoom(tls_probed, sp, need)) return true;
  // Bounds noted and sp inside them: the room is simply not there.
  if (tls_noted.lo < tls_noted.hi && sp >= tls_noted.lo && sp <= tls_noted.hi) return false;
  if (sp < need || !stacks::SafeReadWorks()) return false;
  const uintptr_t lo = sp - need;
  if (!Readable(lo, sp)) return false;
  // Kept: the probed range grows to cover both when they touch, else it is replaced.
  StackSpan p = tls_probed;
  if (p.lo < p.hi && lo <= p.hi && sp >= p.lo) {
    tls_probed = StackSpan{lo < p.lo ? lo : p.lo, sp > p.hi ? sp : p.hi};
  } else {
    tls_probed = StackSpan{lo, sp};
  }
  return true;
}

}  // namespace trainprof::inject
