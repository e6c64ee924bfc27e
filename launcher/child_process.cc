#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "proc_table.h"

namespace trainprof::launcher {

namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

sigset_t HandledSignals(bool usr2) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kForwarded) sigaddset(&set, s);
  sigaddset(&set, SIGCHLD);
  if (usr2) sigaddset(&set, SIGUSR2);
  return set;
}

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    size -= static_cast<size_t>(n);
  }
}

// Child side of fork: never returns. Only the exec failure path reaches _exit.
[[noreturn]] void RunChild(const std::vector<std::string>& argv, std::vector<std::string>* env,
                           const ChildProcess::PrepareFn& prepare, const sigset_t& old_mask,
                           bool restore_sigchld_ignore, const struct sigaction* restore_usr2, int report_fd) {
  if (restore_sigchld_ignore) signal(SIGCHLD, SIG_IGN);  // exec keeps SIG_IGN, as we found it
  if (restore_usr2 != nullptr) sigaction(SIGUSR2, restore_usr2, nullptr);  // not our SIG_IGN
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  StartFailure failure;
  int err = 0;
  try {
    err = prepare ? prepare(env) : 0;
  } catch (const std::bad_alloc&) {
    err = ENOMEM;
  } catch (...) {
    err = EIO;
  }
  if (err != 0) {
    failure = {StartFailure::Stage::kPrepare, err};
    WriteAll(report_fd, &failure, sizeof(failure));
    _exit(127);
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<char*> cenv;
  for (auto& e : *env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  execvpe(cargv[0], cargv.data(), cenv.data());
  err = errno;
  failure = {StartFailure::Stage::kExec, err};
  WriteAll(report_fd, &failure, sizeof(failure));
  _exit(ExitStatusForExecError(err));
}

}  // namespace

ChildProcess::~ChildProcess() { RestoreSignals(); }

bool ChildProcess::Start(const std::vector<std::string>& argv, std::vector<std::string> env,
                         const PrepareFn& prepare, StartFailure* failure) {
  auto setup_failed = [&](int err) {
    *failure = {StartFailure::Stage::kSetup, err};
    RestoreSignals();
    return false;
  };
  if (argv.empty()) return setup_failed(EINVAL);

  // Orphaned descendants (a DataLoader worker or helper that outlives the command) are reparented
  // to us rather than init, so WaitDescendants() can wait for their traces to be complete.
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  // Block before fork, so a signal that arrives before Wait() runs is queued, not lost. SIGUSR2
  // is ignored as well as blocked: blocked, it still reaches the signalfd; ignored, one that comes
  // after we stop listening is dropped instead of killing trainprof.
  if (listen_usr2_) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGUSR2, &ignore, &old_usr2_);
  }
  sigset_t set = HandledSignals(listen_usr2_);
  if (sigprocmask(SIG_BLOCK, &set, &old_mask_) != 0) return setup_failed(errno);
  signals_blocked_ = true;
  // An inherited SIG_IGN for SIGCHLD would make the kernel reap the child behind our back.
  struct sigaction old_chld {};
  sigaction(SIGCHLD, nullptr, &old_chld);
  sigchld_was_ignored_ = old_chld.sa_handler == SIG_IGN;
  if (sigchld_was_ignored_) signal(SIGCHLD, SIG_DFL);
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC);
  if (signal_fd_ < 0) return setup_failed(errno);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return setup_failed(errno);

  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(report[0]);
    close(report[1]);
    return setup_failed(err);
  }
  if (pid == 0) {
    close(report[0]);
    RunChild(argv, &env, prepare, old_mask_, sigchld_was_ignored_, listen_usr2_ ? &old_usr2_ : nullptr, report[1]);
  }
  close(report[1]);
  pid_ = pid;

  // EOF: exec succeeded (the write end was CLOEXEC). A full record: prepare or exec failed.
  StartFailure got;
  size_t have = 0;
  while (have < sizeof(got)) {
    ssize_t n = read(report[0], reinterpret_cast<char*>(&got) + have, sizeof(got) - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  close(report[0]);
  if (have == sizeof(got)) {
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    *failure = got;  // pid_ stays, for messages; the child is reaped
    RestoreSignals();
    return false;
  }
  return true;
}

int ChildProcess::Wait(WaitObserver* observer) {
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (r < 0 && errno != EINTR) {
      fprintf(stderr, "trainprof: lost track of the command (waitpid: %s)\n", strerror(errno));
      status = 255 << 8;  // exit code 255
      break;
    }
    if (observer != nullptr) {
      int timeout = PollTimeoutMs(observer->NextDeadline(), NowNs());
      if (timeout == 0) {
        observer->OnDeadline(NowNs());
        continue;
      }
      pollfd p{signal_fd_, POLLIN, 0};
      if (timeout > 0 && poll(&p, 1, timeout) <= 0) continue;  // the deadline (or EINTR): see above
    }
    signalfd_siginfo si;
    ssize_t n = read(signal_fd_, &si, sizeof(si));
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof(si))) {
      // The signalfd broke (should not happen): stop forwarding, just wait.
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    int signo = static_cast<int>(si.ssi_signo);
    if (signo == SIGUSR2) {
      if (observer != nullptr) observer->OnShutdownRequest(static_cast<pid_t>(si.ssi_pid));
      continue;
    }
    if (IsForwardedSignal(signo) &&
        ShouldForwardSignal(si.ssi_code, static_cast<pid_t>(si.ssi_pid), pid_)) {
      kill(pid_, signo);
    }
  }
  return status;
}

namespace {

// Our children now: the orphans reparented to us (from /proc; pids that vanish are skipped).
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  for (const ProcEntry& e : ReadProcTable()) {
    if (e.ppid == parent) out.push_back(e.pid);
  }
  return out;
}

}  // namespace

std::vector<ChildProcess::Reaped> ChildProcess::WaitDescendants(
    int note_after_ms, const std::function<void(const std::vector<pid_t>&)>& on_slow, WaitObserver* observer) {
  std::vector<Reaped> reaped;
  bool noted = false;
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    int status = 0;
    pid_t r = waitpid(-1, &status, WNOHANG);
    if (r > 0) {
      reaped.push_back({r, status, NowNs()});
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;  // ECHILD: no descendant left
    if (signal_fd_ < 0) break;
    int timeout = 100;
    if (observer != nullptr) {
      int due = PollTimeoutMs(observer->NextDeadline(), NowNs());
      if (due == 0) {
        observer->OnDeadline(NowNs());
        continue;
      }
      if (due > 0 && due < timeout) timeout = due;
    }
    pollfd p{signal_fd_, POLLIN, 0};
    int ready = poll(&p, 1, timeout);
    if (ready > 0) {
      signalfd_siginfo si;
      if (read(signal_fd_, &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
        int signo = static_cast<int>(si.ssi_signo);
        if (IsForwardedSignal(signo)) break;  // the user asked to stop: do not wait any longer
        if (signo == SIGUSR2 && observer != nullptr) observer->OnShutdownRequest(static_cast<pid_t>(si.ssi_pid));
      }
      continue;  // SIGCHLD: reap in the next round
    }
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (!noted && elapsed_ms >= note_after_ms) {
      noted = true;
      on_slow(ChildrenOf(getpid()));
    }
  }
  RestoreSignals();
  return reaped;
}

void ChildProcess::RestoreSignals() {
  if (signal_fd_ >= 0) {
    close(signal_fd_);
    signal_fd_ = -1;
  }
  if (!signals_blocked_) return;
  // Discard what is still pending (e.g. the terminal's SIGINT that also ended the command), so
  // unblocking does not kill trainprof before it finishes the trace files.
  sigset_t set = HandledSignals(listen_usr2_);
  timespec zero{};
  while (sigtimedwait(&set, nullptr, &zero) > 0) {
  }
  if (sigchld_was_ignored_) signal(SIGCHLD, SIG_IGN);
  sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  signals_blocked_ = false;
}

int PollTimeoutMs(uint64_t deadline_ns, uint64_t now_ns) {
  if (deadline_ns == 0) return -1;
  if (now_ns >= deadline_ns) return 0;
  const uint64_t wait_ns = deadline_ns - now_ns;
  const uint64_t ms = wait_ns / 1000000 + (wait_ns % 1000000 != 0 ? 1 : 0);
  return ms > 3600000 ? 3600000 : static_cast<int>(ms);  // an hour at most per wait; re-armed after
}

bool IsForwardedSignal(int signo) {
  for (int s : kForwarded) {
    if (s == signo) return true;
  }
  return false;
}

bool ShouldForwardSignal(int code, pid_t sender, pid_t child) {
  bool sent_by_a_process = code == SI_USER || code == SI_QUEUE || code == SI_TKILL;
  return sent_by_a_process && sender != child;
}

int ExitStatusFromWait(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 255;
}

int ExitStatusForExecError(int err) {
  switch (err) {
    case EACCES:
    case ENOEXEC:
    case EISDIR:
    case EPERM:
    case ETXTBSY:
      return 126;
    default:
      return 127;
  }
}

std::string DescribeExecError(const std::string& command, int err) {
  if (err == ENOENT && command.find('/') == std::string::npos) return command + ": command not found";
  return command + ": " + strerror(err);
}

}  // namespace trainprof::launcher
