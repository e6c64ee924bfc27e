// The environment a child gets at exec. Runs inside exec wrappers, which may run in a vfork()
// child that shares the parent's memory: no malloc, no locks, no writes to shared state; the
// caller provides stack storage.
//
//   follow children:  our variables are kept, and put back if the program scrubbed them
//                     (LD_PRELOAD gets our library prepended if it lacks it);
//   otherwise:        our variables are removed, and our library is taken out of LD_PRELOAD,
//                     so the child does not even load us.
// The program's own `environ` is never edited.
#pragma once

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

}  // namespace trainprof::inject
