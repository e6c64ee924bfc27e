// Process hooks: the libc functions this library interposes (through LD_PRELOAD) to keep
// following the process tree and to note how processes end.
//
//   fork()                     parent: a kFork record with the child's pid (the child side is
//                              OnForkChild, from pthread_atfork, which also covers fork() calls
//                              that do not go through our symbol)
//   exec*(), execveat(),
//   posix_spawn[p]()           the child's environment (env_rewrite.h); a kExec record
//   exit(), _exit(), _Exit()   a kProcessEnd record with the status
//   waitpid(), wait[34](), wait(),
//   waitid()                   a kChildExit record for each child reaped (its exit code or signal)
#pragma once

namespace trainprof::inject {

/// Looks up the next definitions (RTLD_NEXT) of every interposed function. Called once at init,
/// before any exec wrapper can run in a vfork child (where dlsym would not be safe).
void ResolveRealFunctions();

}  // namespace trainprof::inject
