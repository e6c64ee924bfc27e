#include "process_hooks.h"

#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#include "config.h"
#include "env_rewrite.h"
#include "log.h"
#include "process_identity.h"
#include "recorder.h"
#include "runtime.h"
#include "stacks/sampler.h"
#include "string_table.h"
#include "trace_file.h"

extern char** environ;

namespace trainprof::inject {
namespace {

using format::EndKind;
using format::RecordTag;

struct RealFunctions {
  pid_t (*fork)();
  int (*execve)(const char*, char* const[], char* const[]);
  int (*execvpe)(const char*, char* const[], char* const[]);
  int (*fexecve)(int, char* const[], char* const[]);
  int (*execveat)(int, const char*, char* const[], char* const[], int);
  int (*posix_spawn)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                     char* const[], char* const[]);
  int (*posix_spawnp)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                      char* const[], char* const[]);
  void (*exit)(int);
  void (*_exit)(int);
  void (*_Exit)(int);
  pid_t (*waitpid)(pid_t, int*, int);
  pid_t (*wait4)(pid_t, int*, int, struct rusage*);
  pid_t (*wait3)(int*, int, struct rusage*);
  int (*waitid)(idtype_t, id_t, siginfo_t*, int);
};
RealFunctions g_real;

template <typename F>
void Resolve(F* slot, const char* name) {
  if (*slot == nullptr) *slot = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// True when this is the process the runtime belongs to (not a vfork child sharing its memory).
bool InOwnProcess() {
  Runtime& rt = Rt();
  return rt.file.load(std::memory_order_acquire) != nullptr && rt.pid == getpid();
}

// Said once per process, before the call (an exec that succeeds never returns).
std::atomic<bool> g_env_refusal_said{false};

void SayEnvRefused(char* const* envp, const Config& cfg, bool keep) {
  if (cfg.quiet || g_env_refusal_said.exchange(true)) return;
  char n[24], b[24];
  LogLine("no memory to rewrite a child's environment (", FormatU64(RewrittenEnvCapacity(envp) - 3 - kNumOwnedVars, n),
          " variables, ", FormatU64(RewriteBytes(envp, cfg), b), " bytes): the child gets it unchanged",
          keep ? ", without trainprof's variables re-added (it may run unprofiled)" : ", trainprof's variables left in",
          nullptr);
}

// Before an exec: note it in the trace (kept if exec fails; the header's end is reset then).
void BeforeExec(const char* path) {
  if (!InOwnProcess()) return;
  if (ThreadState* t = CurrentThread()) {
    uint32_t name = path != nullptr ? InternCString(t, path) : 0;
    RecordTimed(t, format::rec::Exec{.path = name});
  }
  Rt().file.load()->SetEnd(EndKind::kExec, 0, NowNs(), /*overwrite=*/false);
}

void AfterFailedExec() {
  if (!InOwnProcess()) return;
  Rt().file.load()->SetEnd(EndKind::kNone, 0, 0, /*overwrite=*/true);
}

void NoteChildExit(pid_t pid, int status) {
  if (pid <= 0 || !InOwnProcess()) return;
  format::rec::ChildExit r{.pid = static_cast<uint64_t>(pid)};
  if (WIFEXITED(status)) {
    r.kind = static_cast<uint64_t>(EndKind::kExit);
    r.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.kind = static_cast<uint64_t>(EndKind::kSignal);
    r.code = WTERMSIG(status);
  } else {
    return;  // stopped / continued
  }
  if (ThreadState* t = CurrentThread()) RecordTimed(t, r);
}

// In the parent, after a child was created (fork, posix_spawn): the kFork record that links the
// child to us, and that shows it in the report even if it records nothing itself.
void NoteChild(pid_t pid) {
  if (pid <= 0 || !InOwnProcess()) return;
  if (ThreadState* t = CurrentThread()) {
    uint64_t child = static_cast<uint32_t>(pid);
    if (ChildrenInOtherPidNamespace()) child |= format::kForkOtherNamespace;
    RecordTimed(t, format::rec::Fork{.pid = child});
  }
}

// Runs `call` with the rewritten environment (env_rewrite.h: bounded stack, else mmap; vfork-
// and signal-safe: no heap). `same_process`: an exec that replaces this process (not a spawn, not
// in a vfork child). The launched process keeps our variables when it execs itself even without
// --follow-children (a pyenv `python3` shim script that execs the real python is still the
// launched command). Without memory for the rewrite, the program's own call is made unchanged.
template <typename Call>
int WithChildEnv(char* const* envp, bool same_process, Call call) {
  Runtime& rt = Rt();
  const Config& cfg = rt.cfg;
  if (cfg.output_dir == nullptr && cfg.lib_path == nullptr) return call(envp);
  bool keep = cfg.follow_children ||
              (same_process && cfg.root_pid != 0 && getpid() == cfg.root_pid && !rt.inert.load());
  bool refused = false;
  // A vfork child runs the parent's code under its own pid (a fork child's Runtime has its pid).
  const bool vfork_child = rt.pid != 0 && getpid() != rt.pid;
  int rc = WithRewrittenEnv(envp, cfg, keep, vfork_child, &refused, [&](char* const* env) {
    if (env == envp && refused) SayEnvRefused(envp, cfg, keep);
    return call(env);
  });
  return rc;
}

// An exec that replaces this process: noted before, the child environment applied, and the
// header's end reset (errno kept) if it returns, i.e. failed.
template <typename Call>
int ExecReplacing(const char* what, char* const* envp, Call call) {
  EnsureInit();
  // The sampler's timer stopped first (any signal of it delivered now): a signal of it pending
  // at the exec would reach the new image, whose action for it is the default (ending it) until
  // its library starts. Set going again if the exec fails.
  const bool sampling = PauseThreadSampler();
  BeforeExec(what);
  int rc = WithChildEnv(envp, true, call);
  int e = errno;
  AfterFailedExec();
  if (sampling) ResumeThreadSampler();
  errno = e;
  return rc;
}

// After a wait-family call that filled `local`: note the child's end, then give the status to
// the caller (only when a child was reaped, as the real call would).
pid_t Reaped(pid_t rc, int local, int* status) {
  if (rc > 0) {
    NoteChildExit(rc, local);
    if (status != nullptr) *status = local;
  }
  return rc;
}

// Collects execl-style variadic arguments into an array on the caller's stack.
#define TRAINPROF_COLLECT_ARGS(arg0, argv, last_ap)                   \
  size_t argc_ = 1;                                                     \
  {                                                                     \
    va_list count_;                                                     \
    va_copy(count_, last_ap);                                           \
    while (va_arg(count_, char*) != nullptr) ++argc_;                   \
    va_end(count_);                                                     \
  }                                                                     \
  char** argv = static_cast<char**>(alloca((argc_ + 1) * sizeof(char*))); \
  argv[0] = const_cast<char*>(arg0);                                    \
  for (size_t i_ = 1; i_ <= argc_; ++i_) argv[i_] = va_arg(last_ap, char*);

}  // namespace

void ResolveRealFunctions() {
  Resolve(&g_real.fork, "fork");
  Resolve(&g_real.execve, "execve");
  Resolve(&g_real.execvpe, "execvpe");
  Resolve(&g_real.fexecve, "fexecve");
  Resolve(&g_real.execveat, "execveat");
  Resolve(&g_real.posix_spawn, "posix_spawn");
  Resolve(&g_real.posix_spawnp, "posix_spawnp");
  Resolve(&g_real.exit, "exit");
  Resolve(&g_real._exit, "_exit");
  Resolve(&g_real._Exit, "_Exit");
  Resolve(&g_real.waitpid, "waitpid");
  Resolve(&g_real.wait4, "wait4");
  Resolve(&g_real.wait3, "wait3");
  Resolve(&g_real.waitid, "waitid");
}

}  // namespace trainprof::inject

using namespace trainprof::inject;

// ---- interposed libc entry points (exported by exports.map) -----------------------------------
extern "C" {

__attribute__((visibility("default"))) pid_t fork() {
  EnsureInit();
  pid_t pid = g_real.fork();
  if (pid > 0) NoteChild(pid);
  return pid;
}

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[], char* const envp[]) {
  return ExecReplacing(path, envp, [&](char* const* env) { return g_real.execve(path, argv, env); });
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return ExecReplacing(file, envp, [&](char* const* env) { return g_real.execvpe(file, argv, env); });
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  return execve(path, argv, environ);
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  return execvpe(file, argv, environ);
}

__attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[]) {
  return ExecReplacing("(fexecve)", envp, [&](char* const* env) { return g_real.fexecve(fd, argv, env); });
}

// glibc 2.34+ exports execveat; before that, programs make the system call themselves.
__attribute__((visibility("default"))) int execveat(int dirfd, const char* path, char* const argv[],
                                                    char* const envp[], int flags) {
  return ExecReplacing(path != nullptr && *path != '\0' ? path : "(execveat)", envp, [&](char* const* env) {
    if (g_real.execveat != nullptr) return g_real.execveat(dirfd, path, argv, env, flags);
    return static_cast<int>(syscall(SYS_execveat, dirfd, path, argv, env, flags));
  });
}

__attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  TRAINPROF_COLLECT_ARGS(arg, argv, ap);
  va_end(ap);
  return execve(path, argv, environ);
}

__attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  TRAINPROF_COLLECT_ARGS(arg, argv, ap);
  va_end(ap);
  return execvpe(file, argv, environ);
}

__attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  TRAINPROF_COLLECT_ARGS(arg, argv, ap);
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return execve(path, argv, envp);
}

__attribute__((visibility("default"))) int posix_spawn(pid_t* pid, const char* path,
                                                       const posix_spawn_file_actions_t* actions,
                                                       const posix_spawnattr_t* attr, char* const argv[],
                                                       char* const envp[]) {
  EnsureInit();
  pid_t local = 0;
  int rc = WithChildEnv(envp, false, [&](char* const* env) { return g_real.posix_spawn(&local, path, actions, attr, argv, env); });
  if (rc == 0) NoteChild(local);
  if (pid != nullptr) *pid = local;
  return rc;
}

__attribute__((visibility("default"))) int posix_spawnp(pid_t* pid, const char* file,
                                                        const posix_spawn_file_actions_t* actions,
                                                        const posix_spawnattr_t* attr, char* const argv[],
                                                        char* const envp[]) {
  EnsureInit();
  pid_t local = 0;
  int rc = WithChildEnv(envp, false, [&](char* const* env) { return g_real.posix_spawnp(&local, file, actions, attr, argv, env); });
  if (rc == 0) NoteChild(local);
  if (pid != nullptr) *pid = local;
  return rc;
}

__attribute__((visibility("default"), noreturn)) void exit(int status) {
  EnsureInit();
  RecordEnd(EndKind::kExit, status);
  g_real.exit(status);
  __builtin_unreachable();
}

__attribute__((visibility("default"), noreturn)) void _exit(int status) {
  EnsureInit();
  RecordEnd(EndKind::kExit, status);
  g_real._exit(status);
  __builtin_unreachable();
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status) {
  EnsureInit();
  RecordEnd(EndKind::kExit, status);
  g_real._Exit(status);
  __builtin_unreachable();
}

__attribute__((visibility("default"))) pid_t waitpid(pid_t pid, int* status, int options) {
  EnsureInit();
  int local = 0;
  pid_t rc = g_real.waitpid(pid, &local, options);
  return Reaped(rc, local, status);
}

__attribute__((visibility("default"))) pid_t wait4(pid_t pid, int* status, int options, struct rusage* usage) {
  EnsureInit();
  int local = 0;
  pid_t rc = g_real.wait4(pid, &local, options, usage);
  return Reaped(rc, local, status);
}

__attribute__((visibility("default"))) pid_t wait(int* status) { return waitpid(-1, status, 0); }

// dash and other shells reap with wait3.
__attribute__((visibility("default"))) pid_t wait3(int* status, int options, struct rusage* usage) {
  EnsureInit();
  int local = 0;
  pid_t rc = g_real.wait3(&local, options, usage);
  return Reaped(rc, local, status);
}

__attribute__((visibility("default"))) int waitid(idtype_t idtype, id_t id, siginfo_t* info, int options) {
  EnsureInit();
  int rc = g_real.waitid(idtype, id, info, options);
  // WNOWAIT only peeks: the child is reaped (and recorded) by a later wait.
  if (rc == 0 && info != nullptr && info->si_pid > 0 && (options & WNOWAIT) == 0) {
    if (info->si_code == CLD_EXITED) {
      NoteChildExit(info->si_pid, W_EXITCODE(info->si_status, 0));
    } else if (info->si_code == CLD_KILLED || info->si_code == CLD_DUMPED) {
      NoteChildExit(info->si_pid, info->si_status);  // a wait status whose low bits are the signal
    }
  }
  return rc;
}

}  // extern "C"
