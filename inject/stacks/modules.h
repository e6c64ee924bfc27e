// MODULE records: the objects loaded in the process (the executable, shared libraries), so that
// the collector can symbolize the native addresses of STACK records (docs/trace-format.md,
// "Stacks"). Nothing is symbolized here.
//
// When: lazily, before the STACK record of a new stack that has an address outside every module
// already recorded in this trace file. The first stack of a file thus writes all modules loaded
// then (dl_iterate_phdr), and a stack with an address in a library `dlopen`ed since writes the
// new ones: a rescan, not an interposed dlopen (which would change the caller glibc sees, and
// with it the RUNPATH and $ORIGIN used to find the library). A module is known by its
// (start, bias); dlclose and a reload elsewhere make a new one.
//
// One rescan at a time: a thread that finds another rescanning waits for it (a few µs, at most
// ~100000 yields), so that the MODULE records come before its STACK; one that finds itself
// rescanning (a signal handler that interrupted the scan) goes on without. It takes the loader's lock inside dl_iterate_phdr, as
// libunwind's own unwinding does. No malloc: the known modules are a fixed array on mmap'ed
// pages.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

struct ThreadState;

inline constexpr uint32_t kMaxModules = 8192;  ///< modules a trace file records at most

/// Forgets the modules recorded so far: the next stack writes them all again (a new trace file:
/// a fork child's). At start and in fork children.
void ResetModules();

/// Writes MODULE records (through `t`) for the loaded objects not recorded yet, if a native frame
/// of `words[0..n)` (stack words: native frames are even) lies outside every recorded module.
void EnsureModulesFor(ThreadState* t, const uint64_t* words, size_t n);

/// Whether `address` lies in a module recorded in this trace file (lock-free).
bool AddressInKnownModule(uintptr_t address);

}  // namespace trainprof::inject
