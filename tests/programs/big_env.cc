// Starts a child with a huge environment from a thread with a small stack.
// Usage: tp_big_env HOW VARS PROGRAM [tight]
//   HOW   posix_spawn | fork_execve | vfork_execve | vfork_execve_20 (20 times in a row; then also
//         prints "address space grew by N kB" over the last 19: a rewrite's memory left behind
//         by each vfork child would show)
//   VARS  how many filler variables (TP_BIG_<i>=<i>) the child's environment holds
//   tight just before the call, RLIMIT_AS is set 256 KiB above the address space in use: too
//         little for a copy of the environment's pointers, enough for the call itself
// The call is made from a thread with a 256 KiB stack. The environment given is explicit: the
// filler variables and PATH only, none of trainprof's, so a followed child is one whose
// environment the library rewrote (our variables put back). Prints "<HOW> <VARS>: exit=N" and
// exits 0 when the child ran, 1 otherwise.
#include <pthread.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Job {
  std::string how;
  const char* program;
  char** envp;
  int status = -1;
  bool started = false;
  bool tight = false;
  long grew_kb = -1;
};

// Address space in use (VmSize of /proc/self/status), in bytes; 0 if unknown.
unsigned long VmBytes() {
  FILE* f = fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  unsigned long kb = 0;
  while (fgets(line, sizeof(line), f) != nullptr) {
    if (sscanf(line, "VmSize: %lu kB", &kb) == 1) break;
  }
  fclose(f);
  return kb * 1024;
}

__attribute__((noinline)) pid_t VforkExecve(const char* prog, char** argv, char** envp) {
  pid_t pid = vfork();
  if (pid == 0) {
    execve(prog, argv, envp);
    _exit(127);
  }
  return pid;
}

void* Start(void* p) {
  auto* job = static_cast<Job*>(p);
  char* argv[] = {const_cast<char*>(job->program), nullptr};
  pid_t pid = -1;
  if (job->tight) {
    rlimit lim{VmBytes() + 256 * 1024, RLIM_INFINITY};
    if (lim.rlim_cur == 256 * 1024 || setrlimit(RLIMIT_AS, &lim) != 0) return nullptr;
  }
  if (job->how == "posix_spawn") {
    if (posix_spawn(&pid, job->program, nullptr, nullptr, argv, job->envp) != 0) pid = -1;
  } else if (job->how == "fork_execve") {
    pid = fork();
    if (pid == 0) {
      execve(job->program, argv, job->envp);
      _exit(127);
    }
  } else if (job->how == "vfork_execve") {
    pid = VforkExecve(job->program, argv, job->envp);
  } else if (job->how == "vfork_execve_20") {
    unsigned long before = 0;
    for (int i = 0; i < 20; ++i) {
      if (i == 1) before = VmBytes();
      pid = VforkExecve(job->program, argv, job->envp);
      if (i < 19 && (pid <= 0 || waitpid(pid, &job->status, 0) != pid)) return nullptr;
    }
    job->grew_kb = static_cast<long>((VmBytes() - before) / 1024);
  }
  if (job->tight) {
    rlimit lim{RLIM_INFINITY, RLIM_INFINITY};
    setrlimit(RLIMIT_AS, &lim);
  }
  if (pid > 0 && waitpid(pid, &job->status, 0) == pid) job->started = true;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && !(argc == 5 && strcmp(argv[4], "tight") == 0)) {
    fprintf(stderr, "usage: %s HOW VARS PROGRAM [tight]\n", argv[0]);
    return 2;
  }
  Job job;
  job.tight = argc == 5;
  job.how = argv[1];
  long vars = atol(argv[2]);
  job.program = argv[3];
  std::vector<std::string> storage;
  storage.reserve(vars + 1);
  for (long i = 0; i < vars; ++i) storage.push_back("TP_BIG_" + std::to_string(i) + "=" + std::to_string(i));
  const char* path = getenv("PATH");
  storage.push_back(std::string("PATH=") + (path != nullptr ? path : "/usr/bin:/bin"));
  std::vector<char*> envp;
  for (std::string& s : storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  job.envp = envp.data();

  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t th;
  if (pthread_create(&th, &attr, Start, &job) != 0) return 1;
  pthread_join(th, nullptr);
  if (!job.started) {
    printf("%s %ld: not started\n", job.how.c_str(), vars);
    return 1;
  }
  if (WIFEXITED(job.status)) {
    printf("%s %ld: exit=%d\n", job.how.c_str(), vars, WEXITSTATUS(job.status));
  } else {
    printf("%s %ld: signal=%d\n", job.how.c_str(), vars, WTERMSIG(job.status));
  }
  if (job.grew_kb >= 0) printf("address space grew by %ld kB\n", job.grew_kb);
  return 0;
}
