#include "capture_shutdown.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "proc_table.h"

#include "capture_options.h"

namespace trainprof::launcher {

namespace {

void Message(const std::string& text) {
  std::string line = "trainprof: " + text + "\n";
  fputs(line.c_str(), stderr);
}

std::string Processes(size_t n) { return std::to_string(n) + (n == 1 ? " process" : " processes"); }

// "5 s", "200 ms"
std::string Grace(uint64_t ns) {
  return ns % 1000000000 == 0 ? std::to_string(ns / 1000000000) + " s" : std::to_string(ns / 1000000) + " ms";
}

// Sends `sig` to every descendant of trainprof; returns how many.
size_t SignalTree(int sig) {
  size_t sent = 0;
  for (pid_t pid : Descendants(getpid())) {
    if (kill(pid, sig) == 0) ++sent;
  }
  return sent;
}

}  // namespace

std::vector<pid_t> Descendants(pid_t root) {
  std::multimap<pid_t, pid_t> children;  // ppid → pid
  for (const ProcEntry& e : ReadProcTable()) {
    // Zombies have ended already (their parent has not reaped them yet): nothing to signal.
    if (e.state != 'Z') children.emplace(e.ppid, e.pid);
  }
  std::vector<pid_t> out;
  std::vector<pid_t> todo = {root};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    auto [lo, hi] = children.equal_range(p);
    for (auto it = lo; it != hi; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

uint64_t TreeShutdown::NextDeadline() const {
  if (!sigterm_sent_) return duration_end_ns_;
  return sigkill_done_ ? 0 : kill_at_ns_;
}

void TreeShutdown::OnDeadline(uint64_t now_ns) {
  if (!sigterm_sent_) {
    if (duration_end_ns_ != 0 && now_ns >= duration_end_ns_) Terminate("--duration ended");
    return;
  }
  if (sigkill_done_ || now_ns < kill_at_ns_) return;
  sigkill_done_ = true;
  std::vector<pid_t> left = Descendants(getpid());
  std::string pids;
  for (pid_t pid : left) {
    if (kill(pid, SIGKILL) != 0) continue;
    ++sigkill_count_;
    pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
  }
  if (sigkill_count_ > 0) {
    Message(Processes(sigkill_count_) + " still running " + Grace(grace_ns_) +
            " after SIGTERM: sent SIGKILL (pid " + pids + ")");
  }
}

void TreeShutdown::OnShutdownRequest(pid_t sender) {
  if (sigterm_sent_) return;
  Terminate("the capture range ended in pid " + std::to_string(sender));
}

void TreeShutdown::Terminate(const std::string& why) {
  sigterm_sent_ = true;
  why_ = why;
  kill_at_ns_ = MonotonicNowNs() + grace_ns_;
  sigterm_count_ = SignalTree(SIGTERM);
  Message(why + " (--capture-range-end=stop-shutdown): ending " + command_ + ": SIGTERM sent to " +
          Processes(sigterm_count_) + ", SIGKILL to those left after " + Grace(grace_ns_));
}

std::string TreeShutdown::Summary(int exit_status) const {
  if (!sigterm_sent_) return "";
  return command_ + " was ended by trainprof after the capture (" + why_ + "; " +
         (sigkill_count_ > 0 ? "SIGKILL after the grace period" : "SIGTERM") + "): exit status " +
         std::to_string(exit_status);
}

}  // namespace trainprof::launcher
