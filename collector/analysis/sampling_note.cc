#include "collector/analysis/sampling_note.h"

#include <errno.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace trainprof::collector {
namespace {

// Threads per (reason, errno), and the highest RLIMIT_SIGPENDING they name.
struct Cause {
  uint64_t threads = 0;
  uint64_t limit = 0;
};

std::string Because(uint32_t reason, uint64_t error, const Cause& c) {
  const std::string ulimit = "ulimit -i " + std::to_string(c.limit);
  switch (reason) {
    case 1:
      return "the user's queued signals had reached half of RLIMIT_SIGPENDING (" + ulimit + "), the sampler's share";
    case 2:
      if (error == EAGAIN) {
        return c.limit != 0 ? "timer_create failed with EAGAIN (RLIMIT_SIGPENDING, " + ulimit + ", reached)"
                            : "timer_create failed with EAGAIN (no kernel memory for another timer)";
      }
      return "timer_create failed (errno " + std::to_string(error) + ")";
    case 3: return "timer_settime failed (errno " + std::to_string(error) + ")";
    default: return "of a cause this trainprof does not know (" + std::to_string(reason) + ")";
  }
}

}  // namespace

uint64_t ThreadsNotSampled(const Process& p) {
  uint64_t n = 0;
  for (const TraceImage& img : p.images) {
    std::set<uint32_t> threads;
    for (const ThreadNotSampled& t : img.stacks.threads_not_sampled) threads.insert(t.thread);
    n += threads.size();
  }
  return n;
}

std::string DescribeThreadsNotSampled(const Process& p) {
  const uint64_t lost = ThreadsNotSampled(p);
  if (lost == 0) return {};
  uint64_t threads = 0;
  std::map<std::pair<uint32_t, uint64_t>, Cause> causes;
  for (const TraceImage& img : p.images) {
    threads += img.threads.size();
    std::set<uint32_t> seen;  // a thread's first record (the writer writes one)
    for (const ThreadNotSampled& t : img.stacks.threads_not_sampled) {
      if (!seen.insert(t.thread).second) continue;
      Cause& c = causes[{t.reason, t.error}];
      ++c.threads;
      c.limit = std::max(c.limit, t.limit);
    }
  }
  std::string why;
  for (const auto& [key, c] : causes) {
    why += (why.empty() ? "" : "; ") + std::to_string(c.threads) + " because " + Because(key.first, key.second, c);
  }
  if (lost >= threads) {
    return (threads == 1 ? std::string("its one thread was not sampled")
                         : "none of the " + std::to_string(threads) + " threads in its trace was sampled") +
           " (no CPU timer: " + why + ")";
  }
  return std::to_string(lost) + " of the " + std::to_string(threads) + " threads in its trace " +
         (lost == 1 ? "was" : "were") + " not sampled (no CPU timer: " + why + "): the function table counts the others";
}

uint64_t BlockedCpuMs(const Process& p) {
  uint64_t ns = 0;
  for (const TraceImage& img : p.images) ns += img.stacks.paused_cpu_ns;
  return ns / 1000000;
}

}  // namespace trainprof::collector
