// Starts one child in the way HOW says, with the environment ENV says, waits for it, and checks
// that its own `environ` was left alone (same array, same pointers, same strings).
//
// Usage: tp_spawn HOW ENV PROGRAM [ARGS...]
//   HOW  posix_spawn | posix_spawnp | vfork_execve | fork_execve | fork_execle | fork_execvpe |
//        fork_execveat (the *p variants search PATH for PROGRAM)
//   ENV  inherit   the program's own environ
//        null      envp = NULL: an empty environment (Linux execve; glibc's posix_spawn passes it on)
//        explicit  {"TP_SPAWN=explicit", "PATH=/usr/bin:/bin"}: none of trainprof's variables
// It peeks at the child's end with waitid(WNOWAIT) twice before reaping it with waitpid.
// Prints "<HOW> <ENV>: exit=N" (or "signal=N"), then "environ unchanged" or what changed.
// Exits 0 when the child could be started and environ is unchanged, else 1.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

// vfork in a function of its own: nothing of main's frame can be clobbered by the child.
__attribute__((noinline)) static pid_t VforkExecve(const char* prog, char** argv, char** envp) {
  pid_t pid = vfork();
  if (pid == 0) {
    execve(prog, argv, envp);
    _exit(127);
  }
  return pid;
}

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  const std::string how = argv[1], env = argv[2];
  char** child_argv = argv + 3;
  const char* prog = argv[3];

  // Snapshot of environ: the array, each pointer, each string.
  char** env_array = environ;
  std::vector<char*> env_ptrs;
  std::vector<std::string> env_strs;
  for (char** e = environ; *e != nullptr; ++e) {
    env_ptrs.push_back(*e);
    env_strs.emplace_back(*e);
  }

  static char explicit_a[] = "TP_SPAWN=explicit";
  static char explicit_b[] = "PATH=/usr/bin:/bin";
  char* explicit_env[] = {explicit_a, explicit_b, nullptr};
  char** envp = env == "inherit" ? environ : env == "null" ? nullptr : env == "explicit" ? explicit_env : nullptr;
  if (env != "inherit" && env != "null" && env != "explicit") return 2;

  fflush(stdout);
  pid_t pid = -1;
  int rc = 0;
  if (how == "posix_spawn") {
    rc = posix_spawn(&pid, prog, nullptr, nullptr, child_argv, envp);
  } else if (how == "posix_spawnp") {
    rc = posix_spawnp(&pid, prog, nullptr, nullptr, child_argv, envp);
  } else if (how == "vfork_execve") {
    pid = VforkExecve(prog, child_argv, envp);
  } else if (how == "fork_execve" || how == "fork_execle" || how == "fork_execvpe" || how == "fork_execveat") {
    pid = fork();
    if (pid == 0) {
      if (how == "fork_execve") {
        execve(prog, child_argv, envp);
      } else if (how == "fork_execvpe") {
        execvpe(prog, child_argv, envp);
      } else if (how == "fork_execveat") {
        execveat(AT_FDCWD, prog, child_argv, envp, 0);
      } else {  // execle takes a fixed argument list: PROGRAM and up to two arguments
        const char* a1 = argc > 4 ? argv[4] : nullptr;
        const char* a2 = argc > 5 ? argv[5] : nullptr;
        execle(prog, prog, a1, a1 ? a2 : nullptr, static_cast<char*>(nullptr), envp);
      }
      _exit(127);
    }
  } else {
    return 2;
  }
  if (rc != 0 || pid < 0) {
    printf("%s %s: cannot start %s: %s\n", how.c_str(), env.c_str(), prog, strerror(rc != 0 ? rc : errno));
    return 1;
  }
  // Peek at its end twice first (waitid with WNOWAIT, as Python's subprocess does): it is reaped
  // once, by the waitpid below, and must be recorded once.
  for (int peek = 0; peek < 2; ++peek) {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0) return 1;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  if (WIFEXITED(status)) {
    printf("%s %s: exit=%d\n", how.c_str(), env.c_str(), WEXITSTATUS(status));
  } else {
    printf("%s %s: signal=%d\n", how.c_str(), env.c_str(), WTERMSIG(status));
  }

  bool same = environ == env_array;
  size_t n = 0;
  for (char** e = environ; *e != nullptr; ++e, ++n) {
    if (n >= env_ptrs.size() || *e != env_ptrs[n] || env_strs[n] != *e) same = false;
  }
  same = same && n == env_ptrs.size();
  printf(same ? "environ unchanged\n" : "environ CHANGED\n");
  return same ? 0 : 1;
}
