// Processes that a report must keep apart, and children that leave no trace. Usage:
//   tp_identity rank N             N "rank_step" ranges, then exit 0 (run as two ranks, each in its
//                                  own pid namespace, by unshare --pid --fork: both are pid 1)
//   tp_identity reuse              (as pid 1 of a new pid namespace) fork a child that records 2
//                                  "first_child" ranges and exits 3; then write ns_last_pid so the
//                                  next fork reuses its pid: that child records 5 "second_child"
//                                  ranges and exits 4. Prints "reused PID" or "no reuse" (exit 77).
//   tp_identity exits              three children: exit(256), _exit(-1), exit(1000)
//   tp_identity domains N          N NVTX domains "dom<i>", each with "outer<i>" holding two "inner"
//   tp_identity children STATIC SETUID
//                                  children that leave no trace of their own: fork + exec STATIC
//                                  (exits 7), posix_spawn STATIC (exits 7), fork + exec SETUID (a
//                                  setuid copy of this program, "rank 1": exit 0), and fork + exec
//                                  of a missing path (_exit 127, recorded up to the exec)
//   tp_identity sleepy N MS        N forked children, each sleeping MS ms (for concurrent runs)
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace {

void Ranges(const char* name, int n) {
  for (int i = 0; i < n; ++i) {
    nvtxRangePushA(name);
    nvtxRangePop();
  }
}

int Reap(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

int Reuse() {
  pid_t first = fork();
  if (first == 0) {
    Ranges("first_child", 2);
    _exit(3);
  }
  Reap(first);
  // The next pid this namespace hands out is first: writing last_pid = first - 1 asks for it.
  int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
  std::string last = std::to_string(first - 1);
  bool ok = fd >= 0 && write(fd, last.data(), last.size()) == static_cast<ssize_t>(last.size());
  if (fd >= 0) close(fd);
  pid_t second = fork();
  if (second == 0) {
    Ranges("second_child", 5);
    _exit(4);
  }
  Reap(second);
  if (!ok || second != first) {
    printf("no reuse (first %d, second %d)\n", first, second);
    return 77;
  }
  printf("reused %d\n", first);
  return 0;
}

int Exits() {
  // exit(256) is status 0, _exit(-1) 255, exit(1000) 232: the low 8 bits, as waitpid reports.
  pid_t a = fork();
  if (a == 0) exit(256);
  pid_t b = fork();
  if (b == 0) _exit(-1);
  pid_t c = fork();
  if (c == 0) exit(1000);
  printf("statuses %d %d %d\n", WEXITSTATUS(Reap(a)), WEXITSTATUS(Reap(b)), WEXITSTATUS(Reap(c)));
  return 0;
}

int Domains(int n) {
  for (int i = 0; i < n; ++i) {
    std::string name = "dom" + std::to_string(i);
    nvtxDomainHandle_t d = nvtxDomainCreateA(name.c_str());
    nvtxEventAttributes_t a = {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    std::string outer = "outer" + std::to_string(i);
    a.message.ascii = outer.c_str();
    nvtxDomainRangePushEx(d, &a);
    a.message.ascii = "inner";
    for (int k = 0; k < 2; ++k) {
      nvtxDomainRangePushEx(d, &a);
      nvtxDomainRangePop(d);
    }
    nvtxDomainRangePop(d);
  }
  printf("domains %d\n", n);
  return 0;
}

pid_t ForkExec(const char* path, char* const argv[]) {
  pid_t pid = fork();
  if (pid == 0) {
    execv(path, argv);
    _exit(127);
  }
  return pid;
}

int Children(char* stat_path, char* setuid_path) {
  char rank[] = "rank", one[] = "1";
  char* static_argv[] = {stat_path, nullptr};
  char* setuid_argv[] = {setuid_path, rank, one, nullptr};
  char missing[] = "/nonexistent/trainprof-no-such-program";
  char* missing_argv[] = {missing, nullptr};
  pid_t forked_static = ForkExec(stat_path, static_argv);
  int s1 = Reap(forked_static);
  pid_t spawned = 0;
  int s2 = -1;
  if (posix_spawn(&spawned, stat_path, nullptr, nullptr, static_argv, environ) == 0) s2 = Reap(spawned);
  pid_t setuid_child = ForkExec(setuid_path, setuid_argv);
  int s3 = Reap(setuid_child);
  pid_t missing_child = ForkExec(missing, missing_argv);
  int s4 = Reap(missing_child);
  printf("forked_static %d %d spawned_static %d %d setuid %d %d missing %d %d\n", forked_static, WEXITSTATUS(s1),
         spawned, WEXITSTATUS(s2), setuid_child, WEXITSTATUS(s3), missing_child, WEXITSTATUS(s4));
  return 0;
}

int Sleepy(int n, int ms) {
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      Ranges("sleepy_child", 1);
      usleep(static_cast<useconds_t>(ms) * 1000);
      _exit(0);
    }
  }
  while (wait(nullptr) > 0) {
  }
  printf("sleepy %d\n", n);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string mode = argv[1];
  if (mode == "rank" && argc == 3) {
    Ranges("rank_step", atoi(argv[2]));
    printf("pid %d\n", getpid());
    return 0;
  }
  if (mode == "reuse") return Reuse();
  if (mode == "exits") return Exits();
  if (mode == "domains" && argc == 3) return Domains(atoi(argv[2]));
  if (mode == "children" && argc == 4) return Children(argv[2], argv[3]);
  if (mode == "sleepy" && argc == 4) return Sleepy(atoi(argv[2]), atoi(argv[3]));
  return 2;
}
