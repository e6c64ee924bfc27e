// The environment a child gets at exec. Runs inside exec wrappers, which may run in a vfork()
// child that shares the parent's memory, or in a signal handler: no malloc, no locks, no writes
// to shared state. Memory (WithRewrittenEnv): the stack up to kEnvStackBytes, beyond that one
// mmap'ed region for the call (the environment may hold any number of variables; the thread
// calling exec may have a small stack), unmapped after it returns; in a vfork child, a region
// kept per vforking thread (VforkChildMemory).
//
//   follow children:  our variables are kept, and put back if the program scrubbed them
//                     (LD_PRELOAD gets our library prepended if it lacks it);
//   otherwise:        our variables are removed, and our library is taken out of LD_PRELOAD,
//                     so the child does not even load us.
// The program's own `environ` is never edited.
#pragma once

#include <alloca.h>
#include <errno.h>

#include <cstddef>

namespace trainprof::inject {

struct Config;

/// Upper bound of entries RewriteEnv may write (including the final nullptr).
size_t RewrittenEnvCapacity(char* const* envp);
/// Upper bound of scratch bytes RewriteEnv needs for envp.
size_t RewriteScratchBytes(char* const* envp, const Config& cfg);

/// Writes the child's environment into out[] (capacity from RewrittenEnvCapacity), using
/// `scratch` for rebuilt strings. envp may be nullptr (an empty environment). Returns out.
char** RewriteEnv(char* const* envp, const Config& cfg, bool follow, char** out, char* scratch);

/// Most stack bytes one rewrite uses (pointer array and scratch): a few dozen variables. Small:
/// the caller may be a thread or a signal handler (sigaltstack) with a 16 KiB stack that an
/// unprofiled exec fits in; anything larger is mmap'ed.
inline constexpr size_t kEnvStackBytes = 1024;

/// Where a larger rewrite gets its memory: mmap/munmap (async-signal-safe, no allocator lock, errno
/// kept). Replaceable by tests (e.g. a map that fails, as under RLIMIT_AS).
struct EnvMemory {
  void* (*map)(size_t bytes);  ///< nullptr when no memory
  void (*unmap)(void* p, size_t bytes);
};
extern EnvMemory g_env_memory;

/// Bytes one rewrite of envp needs: the pointer array, then the scratch.
size_t RewriteBytes(char* const* envp, const Config& cfg);

/// Memory for a rewrite in a vfork() child (which shares the parent's memory; its exec, when it
/// succeeds, never returns to unmap anything): one region per vforking thread, kept and reused by
/// that thread's later vfork children (the thread is suspended while its child runs, so no two
/// use one region), grown when too small. Up to kVforkRegions threads; past that, a region of its
/// own that a successful exec leaves in the parent. nullptr when no memory.
inline constexpr size_t kVforkRegions = 32;
void* VforkChildMemory(size_t bytes, bool* kept);

/// Returns call(env) with env the rewritten envp. If the rewrite cannot get its memory, calls
/// call(envp) with envp unchanged (the program's own call still happens) and sets *refused (the
/// caller says so once). `vfork_child`: this is a vfork child (VforkChildMemory).
template <typename Call>
int WithRewrittenEnv(char* const* envp, const Config& cfg, bool follow, bool vfork_child, bool* refused,
                     Call call) {
  *refused = false;
  const size_t cap = RewrittenEnvCapacity(envp);
  const size_t bytes = RewriteBytes(envp, cfg);
  if (bytes <= kEnvStackBytes) {
    auto* out = static_cast<char**>(alloca(bytes));
    return call(RewriteEnv(envp, cfg, follow, out, reinterpret_cast<char*>(out + cap)));
  }
  bool kept = false;
  void* mem = vfork_child ? VforkChildMemory(bytes, &kept) : g_env_memory.map(bytes);
  if (mem == nullptr) {
    *refused = true;
    return call(envp);
  }
  auto* out = static_cast<char**>(mem);
  int rc = call(RewriteEnv(envp, cfg, follow, out, reinterpret_cast<char*>(out + cap)));
  if (!kept) {
    int e = errno;
    g_env_memory.unmap(mem, bytes);
    errno = e;
  }
  return rc;
}

}  // namespace trainprof::inject
