// Starting the profiled command, forwarding signals to it, and turning its end into an exit status.
//
//   trainprof ── block INT TERM HUP QUIT CHLD, signalfd ── fork ──► child: restore signal mask,
//      │                                                              prepare(env) (mkdir %p dir,
//      │   ◄── CLOEXEC pipe: {stage, errno} only if prepare or        TRAINPROF_ROOT_PID...),
//      │       exec failed; EOF means exec succeeded                  execvpe(argv[0], argv, env)
//      ▼
//   Wait(): read signalfd; SIGCHLD → waitpid(WNOHANG); other signals → forward if the rule below
//           says so; when the child is reaped, drain what is still pending and restore the mask.
//
// The child stays in trainprof's process group, like a shell's foreground job, and inherits
// stdin/stdout/stderr and signal dispositions (SIG_IGN included) unchanged.
//
// Forwarding rule (ShouldForwardSignal): a signal is forwarded only if a process sent it to
// trainprof (si_code SI_USER, SI_QUEUE or SI_TKILL) and that process is not the command itself.
// Signals the kernel generates -- Ctrl-C / Ctrl-\ / hang-up from the terminal, si_code SI_KERNEL
// -- already went to the whole foreground process group, command included, so forwarding them
// would deliver them twice. A kill(2) aimed at the whole process group (kill -TERM -PGID) cannot
// be told apart from one aimed at trainprof, so the command gets such a signal twice.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace trainprof::launcher {

/// Why the command did not start.
struct StartFailure {
  enum class Stage : int32_t {
    kNone = 0,
    kSetup = 1,    ///< pipe, signalfd or fork failed in trainprof
    kPrepare = 2,  ///< the `prepare` callback failed in the child (e.g. mkdir)
    kExec = 3,     ///< execvpe failed in the child
  };
  Stage stage = Stage::kNone;
  int error = 0;  ///< errno
};

/// Told by Wait()/WaitDescendants() of deadlines and shutdown requests (capture_shutdown.h).
class WaitObserver {
 public:
  virtual ~WaitObserver() = default;
  /// CLOCK_MONOTONIC ns at which OnDeadline is due; 0: none.
  virtual uint64_t NextDeadline() const = 0;
  virtual void OnDeadline(uint64_t now_ns) = 0;
  /// SIGUSR2 arrived from `sender` (a profiled process whose capture range ended).
  virtual void OnShutdownRequest(pid_t sender) = 0;
};

class ChildProcess {
 public:
  /// Runs in the child between fork and exec; may edit the environment. Returns 0 or an errno.
  using PrepareFn = std::function<int(std::vector<std::string>* env)>;

  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  /// Starts argv (PATH search as execvp does) with environment `env`. Returns false and fills
  /// *failure if it did not start; a child that failed in prepare or exec has been reaped then.
  bool Start(const std::vector<std::string>& argv, std::vector<std::string> env,
             const PrepareFn& prepare, StartFailure* failure);

  /// The child's pid; -1 before Start. Still set after a prepare/exec failure (it is reaped).
  pid_t pid() const { return pid_; }

  /// Also receive SIGUSR2 (shutdown requests, for the observer of Wait/WaitDescendants). Call
  /// before Start. trainprof then ignores SIGUSR2 for good (a late request must not kill it);
  /// the command gets the disposition trainprof had.
  void ListenForShutdownRequests() { listen_usr2_ = true; }

  /// Forwards signals until the child ends; returns its waitpid status. Call once, after Start
  /// succeeded; then WaitDescendants() or StopForwarding(). `observer` (may be null) gets its
  /// deadlines and SIGUSR2.
  int Wait(WaitObserver* observer = nullptr);

  /// Unblocks the forwarded signals again (pending ones discarded), so a later Ctrl-C ends
  /// trainprof as usual. Idempotent; also done by WaitDescendants() and the destructor.
  void StopForwarding() { RestoreSignals(); }

  /// After Wait(): waits for the descendants left behind (orphans reparented to trainprof, which
  /// Start() made a child subreaper), so their traces are complete and their exit statuses known.
  /// Calls `on_slow(pids)` once if some are still running after `note_after_ms`. Stops waiting at
  /// SIGINT/SIGTERM/SIGHUP/SIGQUIT. Returns each reaped descendant.
  struct Reaped {
    pid_t pid;
    int status;         ///< waitpid status
    uint64_t reaped_ns; ///< CLOCK_MONOTONIC when it was reaped (its end, within one poll)
  };
  std::vector<Reaped> WaitDescendants(int note_after_ms,
                                                     const std::function<void(const std::vector<pid_t>&)>& on_slow,
                                                     WaitObserver* observer = nullptr);

 private:
  void RestoreSignals();

  pid_t pid_ = -1;
  int signal_fd_ = -1;
  bool signals_blocked_ = false;
  bool sigchld_was_ignored_ = false;
  bool listen_usr2_ = false;
  struct sigaction old_usr2_ {};
  sigset_t old_mask_{};
};

/// Milliseconds from now_ns until `deadline_ns` for poll(): -1 for no deadline (0), 0 if due.
int PollTimeoutMs(uint64_t deadline_ns, uint64_t now_ns);

/// The signals trainprof forwards: SIGINT, SIGTERM, SIGHUP, SIGQUIT.
bool IsForwardedSignal(int signo);

/// The forwarding rule of the file comment: `code` and `sender` are the signal's si_code and
/// si_pid.
bool ShouldForwardSignal(int code, pid_t sender, pid_t child);

/// trainprof's exit status for a waitpid status: the exit code, or 128+N for signal N.
int ExitStatusFromWait(int wait_status);

/// 126 if the command was found but cannot be executed (EACCES, ENOEXEC, EISDIR, EPERM,
/// ETXTBSY), 127 for every other reason it could not be started (ENOENT, E2BIG, ...), as POSIX
/// shells do.
int ExitStatusForExecError(int err);

/// "COMMAND: command not found" for a bare name that PATH search did not find, otherwise
/// "COMMAND: <strerror>". Without the "trainprof: " prefix.
std::string DescribeExecError(const std::string& command, int err);

}  // namespace trainprof::launcher
