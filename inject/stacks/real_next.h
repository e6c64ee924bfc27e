// The next definition of a libc function this library interposes (dlsym RTLD_NEXT), looked up on
// first use and kept: an interposed call can come before the library's start-up (another
// library's constructor).
#pragma once

#include <dlfcn.h>

#include <atomic>

namespace trainprof::inject {

/// *slot, or the next definition of `name` found now and stored there (nullptr: none).
template <typename F>
F RealNext(std::atomic<F>* slot, const char* name) {
  F f = slot->load(std::memory_order_acquire);
  if (f == nullptr) {
    f = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
    slot->store(f, std::memory_order_release);
  }
  return f;
}

}  // namespace trainprof::inject
