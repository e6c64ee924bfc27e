// --capture-range-end=stop-shutdown: trainprof ends the profiled program once the capture is over.
//
//   a process's capture range ends ─► the library: kill(TRAINPROF_LAUNCHER_PID, SIGUSR2)
//   --duration's window ends ─────────► the deadline passes in ChildProcess::Wait
//        ─► SIGTERM to every descendant of trainprof (the whole profiled tree: trainprof is their
//           subreaper, so orphans stay in it)
//        ─► kShutdownGraceMs later, SIGKILL to those still there
//
// trainprof then exits with the command's status as always (143 after SIGTERM, 137 after SIGKILL,
// or what the command's own SIGTERM handler chose) and says on stderr that it ended the command.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "child_process.h"

namespace trainprof::launcher {

/// Time between SIGTERM and SIGKILL (docs/cli.md): torchrun's and Slurm's grace is of this order.
inline constexpr uint64_t kShutdownGraceMs = 5000;

/// Every descendant of `root` (not root itself), from /proc; processes that vanish are skipped.
std::vector<pid_t> Descendants(pid_t root);

class TreeShutdown : public WaitObserver {
 public:
  /// `duration_end_ns`: CLOCK_MONOTONIC end of --duration's window (0: none); `command`: for
  /// messages.
  TreeShutdown(uint64_t duration_end_ns, std::string command, uint64_t grace_ns = kShutdownGraceMs * 1000000ull)
      : duration_end_ns_(duration_end_ns), grace_ns_(grace_ns), command_(std::move(command)) {}

  uint64_t NextDeadline() const override;
  void OnDeadline(uint64_t now_ns) override;
  void OnShutdownRequest(pid_t sender) override;

  bool started() const { return sigterm_sent_; }
  bool killed() const { return sigkill_count_ > 0; }
  /// "trainprof ended COMMAND ..." for the last lines of `run` ("" if it did not).
  std::string Summary(int exit_status) const;

 private:
  void Terminate(const std::string& why);

  uint64_t duration_end_ns_;
  uint64_t grace_ns_;
  std::string command_;
  std::string why_;
  bool sigterm_sent_ = false;
  uint64_t kill_at_ns_ = 0;
  bool sigkill_done_ = false;
  size_t sigterm_count_ = 0;
  size_t sigkill_count_ = 0;
};

}  // namespace trainprof::launcher
