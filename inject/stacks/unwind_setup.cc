#include "stacks/unwind_setup.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "fd_floor.h"
#include "stacks/safe_read.h"

namespace trainprof::inject {
namespace {

using AccessMem = int (*)(unw_addr_space_t, unw_word_t, unw_word_t*, int, void*);

AccessMem g_libunwind_access_mem = nullptr;
std::atomic<bool> g_done{false};
std::atomic<bool> g_replaced{false};

#if defined(__x86_64__)
// libunwind 1.6 to 1.8 (x86-64) pass the validate flag in bit 0 of the accessor's argument, the
// ucontext pointer (AS_ARG_VALIDATE_MASK, include/tdep-x86_64/libunwind_i.h); before 1.6 the
// argument was the cursor. The headers we build against say which.
static_assert(UNW_VERSION >= UNW_VERSION_CODE(1, 6), "libunwind before 1.6 keeps the validate flag in its cursor");
constexpr uintptr_t kValidateBit = 1;

// libunwind's access_mem, with validated reads made by process_vm_readv: true of a readable word,
// as libunwind's mincore + pipe write said, with no descriptor. A read that fails returns -1, as
// libunwind's does (the unwind stops at that frame). Async-signal-safe.
int SafeAccessMem(unw_addr_space_t as, unw_word_t addr, unw_word_t* val, int write, void* arg) {
  if (write != 0 || (reinterpret_cast<uintptr_t>(arg) & kValidateBit) == 0) {
    return g_libunwind_access_mem(as, addr, val, write, arg);  // a plain load or store
  }
  if (!stacks::SafeReadWorks()) return -1;  // where the kernel refuses it: not read at all
  // getpid() per read: a fork child's own (native frames are off there; stacks.h).
  return stacks::SafeReader(getpid()).Read(val, static_cast<uintptr_t>(addr), sizeof(*val)) ? 0 : -1;
}
#endif

}  // namespace

bool InitUnwinder() {
  if (g_done.exchange(true)) return g_replaced.load(std::memory_order_acquire);
  {
    // libunwind's tdep_init runs inside the first unw_get_accessors (or unw_getcontext, unw_init_local).
    LowFdPlaceholders placeholders;
    placeholders.Fill();
    unw_accessors_t* acc = unw_get_accessors(unw_local_addr_space);
    placeholders.Release();
#if defined(__x86_64__)
    stacks::SafeReadWorks();  // cached now, not first in a signal handler
    if (acc != nullptr && acc->access_mem != nullptr && acc->access_mem != SafeAccessMem) {
      g_libunwind_access_mem = acc->access_mem;
      acc->access_mem = SafeAccessMem;
      g_replaced.store(true, std::memory_order_release);
    }
#else
    (void)acc;  // elsewhere libunwind's own validation stays, its pipe above the floor
#endif
  }
  return g_replaced.load(std::memory_order_acquire);
}

bool UnwinderUsesSafeReads() { return g_replaced.load(std::memory_order_acquire); }

}  // namespace trainprof::inject
