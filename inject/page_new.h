// Objects on pages of their own (mmap), for what the library makes where malloc is not allowed:
// in a fork child, which may have been forked from a signal handler (fork is async-signal-safe and
// runs the atfork handlers there), or while the interrupted code holds the allocator's lock.
#pragma once

#include <sys/mman.h>

#include <new>
#include <utility>

namespace trainprof::inject {

/// Constructs a T on fresh anonymous pages (zeroed, page-rounded); nullptr if mmap fails.
/// Never freed: such objects live as long as the process (or are abandoned by a fork child).
template <typename T, typename... Args>
T* NewOnPages(Args&&... args) {
  void* p = mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  return new (p) T(std::forward<Args>(args)...);
}

}  // namespace trainprof::inject
