#include "trace_clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace trainprof::inject {

bool g_trace_clock_tsc = false;

namespace {

uint32_t g_tsc_khz = 0;
double g_ticks_per_ns = 1.0;

bool InvariantTsc() {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u) return false;
  __cpuid(0x80000007u, a, b, c, d);
  return (d & (1u << 8)) != 0;  // Intel SDM vol. 2A, CPUID leaf 80000007H: "Invariant TSC"
#else
  return false;
#endif
}

bool ClocksourceIsTsc() {
  int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[32] = {};
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  return n >= 3 && memcmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

}  // namespace

ClockPair TakeClockPair() {
  ClockPair best;
  uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < 3; ++i) {
    uint64_t before = ReadTscOrdered();
    uint64_t ns = NowNs();
    uint64_t after = ReadTscOrdered();
    if (after - before < best_width) {
      best_width = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

TraceClockReason ChooseTraceClock(const char* env_clock, bool capture_configured) {
  g_trace_clock_tsc = false;
  g_tsc_khz = 0;
  g_ticks_per_ns = 1.0;
  if (env_clock != nullptr && strcmp(env_clock, "monotonic") == 0) return TraceClockReason::kForced;
  if (!InvariantTsc()) return TraceClockReason::kNoInvariantTsc;
  if (!ClocksourceIsTsc()) return TraceClockReason::kClocksource;
  if (capture_configured) return TraceClockReason::kCapture;
  // The rate, over at least 200 µs: two pairs of ~20 ns width give it to about 2e-4.
  ClockPair a = TakeClockPair(), b;
  do {
    b = TakeClockPair();
  } while (b.ns - a.ns < 200000);
  g_ticks_per_ns = static_cast<double>(b.ticks - a.ticks) / static_cast<double>(b.ns - a.ns);
  g_tsc_khz = static_cast<uint32_t>(g_ticks_per_ns * 1e6 + 0.5);
  g_trace_clock_tsc = true;
  return TraceClockReason::kTsc;
}

uint32_t TscKhz() { return g_tsc_khz; }

uint64_t TraceUnitsFromNs(uint64_t ns) {
  if (!g_trace_clock_tsc) return ns;
  return static_cast<uint64_t>(static_cast<double>(ns) * g_ticks_per_ns);
}

}  // namespace trainprof::inject
