#include "capture.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "config.h"
#include "log.h"
#include "runtime.h"
#include "stacks/stacks.h"
#include "string_table.h"

namespace trainprof::inject {

using format::CaptureReason;
using format::RecordTag;

std::atomic<uint32_t> g_capture_configured{0};

namespace {

static_assert(sizeof(ThreadState::captured[0]) * 8 == kCaptureLevels);

struct CaptureGlobals {
  CaptureSettings settings;
  int launcher_pid = 0;
  std::atomic<uint64_t> state{0};
  std::atomic<uint32_t> name_id{0};  ///< string id of the nvtx:NAME range name (0: not yet known)
  // nvtx:DOMAIN:NAME, as the report shows a range of a domain: the part after the first ':' in the
  // domain named by the part before it (0: the name has no such split, or not yet known).
  std::atomic<uint32_t> split_name_id{0};
  std::atomic<uint32_t> split_domain_id{0};
  std::atomic<uint64_t> ring[kCaptureRingSize] = {};  ///< CaptureRingWord of the last range changes
};
CaptureGlobals g;

void WriteCaptureRecord(ThreadState* t, const CaptureRecord& r) {
  RecordAt(t, format::rec::Capture{.on = r.on ? 1u : 0u, .reason = static_cast<uint64_t>(r.reason)}, r.time_ns);
}

// Whether `pid` is an ancestor of this process (a /proc walk up the parent chain): the launcher
// may have exited and its pid been reused by an unrelated process, which must not get a signal.
// Async-signal-safe (a capture range may end in a signal handler).
bool IsAncestor(int pid) {
  int p = getppid();
  for (int steps = 0; p > 1 && steps < 4096; ++steps) {
    if (p == pid) return true;
    char path[48] = "/proc/", num[24], buf[512];
    strcat(strcat(path, FormatU64(static_cast<unsigned>(p), num)), "/stat");  // no snprintf: signal context
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    const char* rp = strrchr(buf, ')');  // comm may hold spaces and parentheses
    if (rp == nullptr || rp[1] == '\0' || rp[2] == '\0') return false;
    p = 0;  // ") S PPID"
    for (const char* q = rp + 4; *q >= '0' && *q <= '9' && p < 100000000; ++q) p = p * 10 + (*q - '0');
  }
  return false;
}

// --capture-range-end=stop-shutdown: the launcher ends the run (launcher/capture_shutdown.h).
// A signal rather than a socket or pipe: it reaches the launcher from any descendant, also after
// exec and after a close-all-fds, and only processes of the same user can send it.
void NotifyLauncher() {
  if (g.launcher_pid > 1 && IsAncestor(g.launcher_pid)) kill(g.launcher_pid, SIGUSR2);
}

// Applies `event` to the process state (CAS loop), then writes what it caused: the ring entry of
// a range change, CAPTURE records, the launcher's notice. Returns the new state.
uint64_t Transition(ThreadState* t, uint64_t now, CaptureEvent event, CaptureReason reason, bool* flipped = nullptr) {
  uint64_t old = g.state.load(std::memory_order_acquire);
  CaptureStep step;
  for (;;) {
    step = StepCapture(g.settings, old, now, event, reason);
    if (step.state == old) break;
    if (g.state.compare_exchange_weak(old, step.state, std::memory_order_acq_rel, std::memory_order_acquire)) break;
  }
  if (step.flipped) {
    g.ring[FlipsOf(step.state) % kCaptureRingSize].store(CaptureRingWord(now, RangeOn(step.state)),
                                                         std::memory_order_release);
  }
  for (int i = 0; i < step.records; ++i) WriteCaptureRecord(t, step.record[i]);
  if (step.flipped && event == CaptureEvent::kRangeEnd && g.settings.end == CaptureEnd::kStopShutdown) {
    NotifyLauncher();
  }
  if (flipped != nullptr) *flipped = step.flipped;
  return step.state;
}

// The state at `now` after catching up, for a gate on thread t.
inline uint64_t StateAt(ThreadState* t, uint64_t now) {
  uint64_t s = g.state.load(std::memory_order_acquire);
  if (__builtin_expect(CaptureCatchUpNeeded(g.settings, s, now), 0)) s = Transition(t, now, CaptureEvent::kNone, CaptureReason::kStart);
  return s;
}

}  // namespace

void InitCapture(const Config& cfg, bool records) {
  g.settings = records ? ParseCaptureSettings(cfg.capture_range, cfg.capture_range_end, cfg.capture_window_start_ns,
                                              cfg.capture_window_end_ns)
                       : CaptureSettings{};
  g.launcher_pid = cfg.launcher_pid;
  g.name_id.store(0, std::memory_order_relaxed);
  g.split_name_id.store(0, std::memory_order_relaxed);
  g.split_domain_id.store(0, std::memory_order_relaxed);
  for (auto& w : g.ring) w.store(0, std::memory_order_relaxed);
  g.state.store(InitialCaptureState(g.settings), std::memory_order_relaxed);
  g_capture_configured.store(g.settings.configured() ? 1 : 0, std::memory_order_release);
}

bool CapturingSlow(uint64_t now_ns) noexcept {
  ThreadState* t = CurrentThread();
  if (t == nullptr) return CapturingIn(g.settings, g.state.load(std::memory_order_acquire), now_ns);
  return CapturingIn(g.settings, StateAt(t, now_ns), now_ns);
}

void OnCudaProfilerApi(bool start) noexcept {
  if (!CaptureConfigured() || g.settings.mode != CaptureMode::kCudaProfilerApi) return;
  ThreadState* t = CurrentThread();
  if (t == nullptr) return;
  Transition(t, TraceNow(), start ? CaptureEvent::kRangeBegin : CaptureEvent::kRangeEnd, CaptureReason::kCudaProfilerApi);
}

bool CapturedAt(uint64_t ts_ns) noexcept {
  if (!CaptureConfigured()) return true;
  if (g.settings.Phase(ts_ns) != 1) return false;
  if (g.settings.mode == CaptureMode::kNone) return true;
  uint64_t words[kCaptureRingSize];
  for (uint32_t i = 0; i < kCaptureRingSize; ++i) words[i] = g.ring[i].load(std::memory_order_acquire);
  return RangeOnAt(words, kCaptureRingSize, ts_ns, RangeOn(InitialCaptureState(g.settings)));
}

void CaptureThreadStarted(ThreadState* t) {
  if (!CaptureConfigured()) return;
  if (g.settings.mode == CaptureMode::kNvtx) {
    // Every thread interns the name itself before its first push (the same id for all), so no
    // thread can push the range before the id is known.
    uint32_t id = InternBytes(t, g.settings.nvtx_name, g.settings.nvtx_name_len);
    if (id != 0) g.name_id.store(id, std::memory_order_relaxed);
    const char* colon = static_cast<const char*>(memchr(g.settings.nvtx_name, ':', g.settings.nvtx_name_len));
    const uint32_t prefix = colon == nullptr ? 0 : static_cast<uint32_t>(colon - g.settings.nvtx_name);
    StringTable* table = Rt().strings;
    if (colon != nullptr && prefix > 0 && prefix + 1 < g.settings.nvtx_name_len && table != nullptr) {
      // The domain's id is the one nvtxDomainCreate gives for that name (the same for every call).
      const uint32_t domain_name = InternBytes(t, g.settings.nvtx_name, prefix);
      const uint32_t name = InternBytes(t, colon + 1, g.settings.nvtx_name_len - prefix - 1);
      const uint32_t domain = domain_name != 0 ? table->Domain(t, domain_name) : 0;
      if (name != 0 && domain != 0) {
        g.split_name_id.store(name, std::memory_order_relaxed);
        g.split_domain_id.store(domain, std::memory_order_relaxed);
      }
    }
  }
  StateAt(t, TraceNow());
}

void CaptureProcessEnding(ThreadState* t) {
  if (CaptureConfigured()) StateAt(t, TraceNow());
}

int CapturePushRange(ThreadState* t, uint32_t domain, uint32_t name, uint32_t category) {
  const int level = t->depth[domain]++;
  const uint64_t now = TraceNow();
  bool record;
  if (level >= kCaptureLevels) {
    record = LevelRecorded(t->captured[domain], level);
  } else {
    uint64_t state = g.state.load(std::memory_order_acquire);
    if (g.settings.mode == CaptureMode::kNvtx && t->capture_level < 0 && name != 0 && !RangeOn(state) &&
        (state & capture_bits::kRangeDone) == 0 &&
        (name == g.name_id.load(std::memory_order_relaxed) ||
         (domain != 0 && name == g.split_name_id.load(std::memory_order_relaxed) &&
          domain == g.split_domain_id.load(std::memory_order_relaxed)))) {
      // The capture starts with this push (recorded); its matching pop on this thread ends it.
      bool began = false;
      state = Transition(t, now, CaptureEvent::kRangeBegin, CaptureReason::kNvtxRange, &began);
      if (began) {
        t->capture_level = level;
        t->capture_domain = domain;
      }
    } else if (CaptureCatchUpNeeded(g.settings, state, now)) {
      state = Transition(t, now, CaptureEvent::kNone, CaptureReason::kStart);
    }
    record = CapturingIn(g.settings, state, now);
    SetLevelRecorded(&t->captured[domain], level, record);
  }
  if (record) {
    const format::rec::RangePush r{.domain = domain, .name = name, .category = category};
    if (NvtxStacksOn()) {
      RecordTimedWithStackAt(t, r, TakeStack(t), now);
    } else {
      RecordAt(t, r, now);
    }
  }
  return level;
}

int CapturePopRange(ThreadState* t, uint32_t domain) {
  const format::rec::RangePop pop{.domain = domain};
  if (t->depth[domain] == 0) {  // nothing pushed: misuse, recorded whatever the capture state
    RecordTimed(t, pop);
    return -1;
  }
  const int level = --t->depth[domain];
  if (LevelRecorded(t->captured[domain], level)) RecordTimed(t, pop);
  if (level == t->capture_level && domain == t->capture_domain) {
    t->capture_level = -1;
    Transition(t, TraceNow(), CaptureEvent::kRangeEnd, CaptureReason::kNvtxRange);
  }
  return level;
}

}  // namespace trainprof::inject

/// What the CUDA layer does on cudaProfilerStart() (start = 1) / cudaProfilerStop() (0): for
/// programs and tests without a CUDA driver. Returns 1 if this process records with
/// --capture-range=cudaProfilerApi, else 0 (and does nothing).
extern "C" __attribute__((visibility("default"))) int trainprof_cuda_profiler_api(int start) {
  using namespace trainprof::inject;
  if (!CaptureConfigured() || g.settings.mode != CaptureMode::kCudaProfilerApi) return 0;
  OnCudaProfilerApi(start != 0);
  return 1;
}
