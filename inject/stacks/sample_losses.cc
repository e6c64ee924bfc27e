#include "stacks/sample_losses.h"

#include <errno.h>
#include <unistd.h>

#include <atomic>

#include "log.h"
#include "recorder.h"
#include "runtime.h"
#include "stacks/sample_budget.h"
#include "trainprof/records.h"

namespace trainprof::inject {
namespace {

std::atomic<uint64_t> g_tried{0};
std::atomic<uint64_t> g_lost[4] = {};     // by ThreadLost (index 0 unused)
std::atomic<int> g_first_errno[4] = {};   // the first failure's errno, by ThreadLost
std::atomic<uint64_t> g_limit_seen{0};    // RLIMIT_SIGPENDING at the latest loss (0: unlimited)

// Initial-exec TLS: read in the sampler's handler.
thread_local uint64_t tls_paused_cpu_ns __attribute__((tls_model("initial-exec"))) = 0;
thread_local format::rec::SampleThreadLost tls_pending_lost __attribute__((tls_model("initial-exec"))) = {};

void RecordLost(const format::rec::SampleThreadLost& r) {
  if (ThreadState* t = CurrentThread()) RecordTimed(t, r);
}

}  // namespace

void NoteThreadTried() { g_tried.fetch_add(1, std::memory_order_relaxed); }

void NoteThreadNotSampled(ThreadLost why, int err, uint64_t queued) {
  const int saved = errno;
  const auto i = static_cast<uint32_t>(why);
  g_lost[i].fetch_add(1, std::memory_order_relaxed);
  int none = 0;
  g_first_errno[i].compare_exchange_strong(none, err, std::memory_order_relaxed);
  const uint64_t limit = SignalQueueLimitNow();
  g_limit_seen.store(limit, std::memory_order_relaxed);
  const format::rec::SampleThreadLost r{
      .reason = i, .error = static_cast<uint64_t>(err), .limit = limit, .queued = queued};
  // Inside the library's initialisation (its first thread, StartSampling): CurrentThread would
  // initialise it again; Init writes the record once done.
  if (InitDone()) {
    RecordLost(r);
  } else {
    tls_pending_lost = r;
  }
  errno = saved;
}

void RecordPendingThreadLost() {
  if (tls_pending_lost.reason == 0) return;
  const format::rec::SampleThreadLost r = tls_pending_lost;
  tls_pending_lost = {};
  const int saved = errno;
  RecordLost(r);
  errno = saved;
}

void AddPausedCpu(uint64_t ns) { tls_paused_cpu_ns += ns; }

void RecordPausedCpu(ThreadState* t, uint64_t when) {
  if (tls_paused_cpu_ns == 0 || t == nullptr) return;
  const uint64_t ns = tls_paused_cpu_ns;
  tls_paused_cpu_ns = 0;
  RecordAt(t, format::rec::SamplePaused{.cpu_ns = ns}, when);
}

void RecordPausedCpuAtThreadExit() {
  if (tls_paused_cpu_ns == 0) return;
  const int saved = errno;
  RecordPausedCpu(CurrentThread(), TraceNow());
  errno = saved;
}

void FinishSampleLosses(ThreadState* t, bool quiet) {
  RecordPausedCpu(t, TraceNow());
  const uint64_t share = g_lost[1].load(std::memory_order_relaxed);
  const uint64_t create = g_lost[2].load(std::memory_order_relaxed);
  const uint64_t settime = g_lost[3].load(std::memory_order_relaxed);
  const uint64_t lost = share + create + settime;
  if (quiet || lost == 0) return;
  const int saved = errno;
  const uint64_t limit = g_limit_seen.load(std::memory_order_relaxed);
  const int create_err = g_first_errno[2].load(std::memory_order_relaxed);
  char n_lost[24], n_tried[24], pid[24], n_share[24], n_create[24], n_settime[24], lim[24], e_create[24], e_settime[24];
  FormatU64(limit, lim);
  FormatU64(lost, n_lost);
  FormatU64(g_tried.load(std::memory_order_relaxed), n_tried);
  FormatU64(static_cast<unsigned>(getpid()), pid);
  FormatU64(share, n_share);
  FormatU64(create, n_create);
  FormatU64(settime, n_settime);
  FormatU64(static_cast<unsigned>(create_err), e_create);
  FormatU64(static_cast<unsigned>(g_first_errno[3].load(std::memory_order_relaxed)), e_settime);
  const bool bounded = limit != 0;
  // "N because ..." per reason, in the order of ThreadLost; a part left out is "".
  const char* sep1 = share != 0 && create + settime != 0 ? "; " : "";
  const char* sep2 = create != 0 && settime != 0 ? "; " : "";
  LogLine(n_lost, " of ", n_tried, " threads of pid ", pid, " were not sampled (no CPU timer): ",
          // kSignalQueueShare
          share != 0 ? n_share : "",
          share != 0 ? " because the user's queued signals had reached half of RLIMIT_SIGPENDING (ulimit -i " : "",
          share != 0 ? lim : "", share != 0 ? "; the sampler leaves the other half to the program)" : "", sep1,
          // kTimerCreate
          create != 0 ? n_create : "", create != 0 ? " because timer_create failed (errno " : "",
          create != 0 ? e_create : "",
          create == 0                       ? ""
          : create_err == EAGAIN && bounded ? ", EAGAIN: the user's queued signals had reached RLIMIT_SIGPENDING, ulimit -i "
          : create_err == EAGAIN            ? ", EAGAIN: no kernel memory for another timer"
                                            : "",
          create != 0 && create_err == EAGAIN && bounded ? lim : "", create != 0 ? ")" : "", sep2,
          // kTimerSettime
          settime != 0 ? n_settime : "", settime != 0 ? " because timer_settime failed (errno " : "",
          settime != 0 ? e_settime : "", settime != 0 ? ")" : "",
          "; the trace counts them (the report's threads_not_sampled)",
          bounded && share + create != 0 ? ", a higher `ulimit -i` samples them" : "", nullptr);
  errno = saved;
}

void ForgetSampleLossesInForkChild() {
  g_tried.store(0, std::memory_order_relaxed);
  for (auto& n : g_lost) n.store(0, std::memory_order_relaxed);
  for (auto& e : g_first_errno) e.store(0, std::memory_order_relaxed);
  tls_pending_lost = {};
  tls_paused_cpu_ns = 0;  // the parent's
}

}  // namespace trainprof::inject
