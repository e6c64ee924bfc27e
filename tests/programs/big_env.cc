// Starts a child with a huge environment from a thread with a small stack.
// Usage: tp_big_env HOW VARS PROGRAM [tight | stack=BYTES]
//   HOW   posix_spawn | fork_execve | vfork_execve | signal_fork_execve (fork and execve from a
//         SIGUSR1 handler running on a sigaltstack of the thread's stack size) |
//         vfork_execve_20 (20 times in a row; then also
//         prints "address space grew by N kB" over the last 19: a rewrite's memory left behind
//         by each vfork child would show)
//   VARS  how many filler variables (TP_BIG_<i>=<i>) the child's environment holds
//   tight just before the call, RLIMIT_AS is set 256 KiB above the address space in use: too
//         little for a copy of the environment's pointers, enough for the call itself
//   stack=BYTES  the thread's stack size (default 256 KiB), e.g. 16384: what a small-stack
//         thread of a real program has; enough for the call without trainprof
// The call is made from a thread with a 256 KiB stack (or stack=). The environment given is explicit: the
// filler variables and PATH only, none of trainprof's, so a followed child is one whose
// environment the library rewrote (our variables put back). Prints "<HOW> <VARS>: exit=N" and
// exits 0 when the child ran, 1 otherwise.
#include <pthread.h>
#include <spawn.h>
#include <signal.h>
#include <sys/mman.h>
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
  size_t stack = 256 * 1024;
};

Job* g_job = nullptr;
pid_t g_signal_pid = -1;

void ForkExecFromHandler(int) {
  char* argv[] = {const_cast<char*>(g_job->program), nullptr};
  pid_t pid = fork();
  if (pid == 0) {
    execve(g_job->program, argv, g_job->envp);
    _exit(127);
  }
  g_signal_pid = pid;
}

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
  } else if (job->how == "signal_fork_execve") {
    // A guarded alternate stack as small as the thread's, the handler run on it.
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t size = (job->stack + page - 1) / page * page;
    auto* m = static_cast<char*>(mmap(nullptr, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (m == MAP_FAILED) return nullptr;
    mprotect(m, page, PROT_NONE);
    stack_t ss{};
    ss.ss_sp = m + page;
    ss.ss_size = size;
    if (sigaltstack(&ss, nullptr) != 0) return nullptr;
    struct sigaction sa{};
    sa.sa_handler = ForkExecFromHandler;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, nullptr);
    g_job = job;
    pthread_kill(pthread_self(), SIGUSR1);
    pid = g_signal_pid;
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
  Job job;
  if (argc == 5 && strncmp(argv[4], "stack=", 6) == 0) {
    job.stack = strtoul(argv[4] + 6, nullptr, 10);
  } else if (argc != 4 && !(argc == 5 && strcmp(argv[4], "tight") == 0)) {
    fprintf(stderr, "usage: %s HOW VARS PROGRAM [tight | stack=BYTES]\n", argv[0]);
    return 2;
  } else {
    job.tight = argc == 5;
  }
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
  if (pthread_attr_setstacksize(&attr, job.stack) != 0) return 2;
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
