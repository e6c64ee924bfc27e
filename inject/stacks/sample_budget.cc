#include "stacks/sample_budget.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>

namespace trainprof::inject {
namespace {

std::atomic<uint64_t> g_limit{0};  // 0: no bound (RLIM_INFINITY, or getrlimit failed)

// The user's queued signals (the first number of /proc/self/status's "SigQ:\tQUEUED/LIMIT").
// False where the file cannot be read or has no such line.
bool ReadQueuedSignals(uint64_t* queued) {
  const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  static constexpr char kKey[] = "\nSigQ:";
  size_t matched = 1;  // the file's start counts as a line start
  bool in_value = false, digits = false, done = false;
  uint64_t v = 0;
  char buf[128];
  while (!done) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    for (ssize_t i = 0; i < n && !done; ++i) {
      const char c = buf[i];
      if (!in_value) {
        if (c == kKey[matched]) {
          in_value = ++matched == sizeof(kKey) - 1;
        } else {
          matched = c == '\n' ? 1 : 0;
        }
      } else if (c >= '0' && c <= '9') {
        v = v * 10 + static_cast<uint64_t>(c - '0');
        digits = true;
      } else if (digits || (c != '\t' && c != ' ')) {
        done = true;
      }
    }
  }
  close(fd);
  *queued = v;
  return digits;
}

}  // namespace

uint64_t SignalQueueLimitNow() {
  struct rlimit r;
  const int saved = errno;
  const bool bounded = getrlimit(RLIMIT_SIGPENDING, &r) == 0 && r.rlim_cur != RLIM_INFINITY;
  errno = saved;
  return bounded ? static_cast<uint64_t>(r.rlim_cur) : 0;
}

void NoteSignalQueueLimit() { g_limit.store(SignalQueueLimitNow(), std::memory_order_relaxed); }

bool MayHoldAnotherQueuedSignal(uint64_t own, uint64_t arming, uint64_t* queued_out) {
  *queued_out = 0;
  const uint64_t limit = g_limit.load(std::memory_order_relaxed);
  if (limit == 0 || own + arming <= limit / 16) return true;
  const int saved = errno;
  uint64_t queued = 0;
  const bool known = ReadQueuedSignals(&queued);
  errno = saved;
  if (!known || queued + arming <= limit / 2) return true;
  *queued_out = queued;
  return false;
}

}  // namespace trainprof::inject
