// The recording clock: what the hot path stamps timed records with (docs/trace-format.md, "Time").
//
// Either the TSC (`rdtsc`: ticks, converted by the collector through the calibration pairs the
// file records) or CLOCK_MONOTONIC ns (`clock_gettime`, as inject/clock.h NowNs()). Chosen once, by
// ChooseTraceClock() at start-up, before any thread records; the hot path reads one global flag
// that never changes afterwards (a predicted branch).
#pragma once

#include <cstdint>

#include "clock.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace trainprof::inject {

/// Whether timed records carry TSC ticks (true) or CLOCK_MONOTONIC ns (false). Set once.
extern bool g_trace_clock_tsc;

/// The TSC, plain `rdtsc` as Tracy reads it: ~10 ns here, where `rdtscp` (or `lfence; rdtsc`) costs
/// ~20 ns, as much as the vDSO's clock_gettime, which is built on it. Not ordered with earlier
/// loads: it may execute up to a reorder window (~100 instructions) early. A handoff between
/// threads through a futex (a contended mutex, a condition variable: a system call on the waking
/// side) is far longer; docs/trace-format.md "Time" says what that means. 0 off x86-64.
inline uint64_t ReadTsc() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return 0;
#endif
}

/// The TSC, ordered (`rdtscp`: waits for earlier instructions and loads): for calibration pairs.
inline uint64_t ReadTscOrdered() {
#if defined(__x86_64__)
  unsigned aux;
  return __rdtscp(&aux);
#else
  return 0;
#endif
}

/// Now on the recording clock: TSC ticks or CLOCK_MONOTONIC ns (see g_trace_clock_tsc). Hot path.
inline uint64_t TraceNow() { return __builtin_expect(g_trace_clock_tsc, 1) ? ReadTsc() : NowNs(); }

/// One calibration pair: a TSC value and CLOCK_MONOTONIC ns read together.
struct ClockPair {
  uint64_t ticks = 0;  ///< midpoint of the TSC reads around the clock read
  uint64_t ns = 0;     ///< CLOCK_MONOTONIC
};

/// Takes a pair: TSC before, clock_gettime, TSC after, the tightest of 3 tries, its TSC midpoint.
/// About 3 clock reads (~100 ns); no allocation or lock, async-signal-safe. Not on the hot path.
ClockPair TakeClockPair();

/// Why the recording clock is what it is (ChooseTraceClock), for tests and the docs.
enum class TraceClockReason {
  kTsc = 0,            ///< invariant TSC and the kernel's clocksource is tsc
  kForced = 1,         ///< TRAINPROF_CLOCK=monotonic
  kNoInvariantTsc = 2, ///< CPUID 0x80000007 EDX bit 8 clear (or not x86-64)
  kClocksource = 3,    ///< /sys/devices/system/clocksource/clocksource0/current_clocksource is not tsc
  kCapture = 4,        ///< a capture range or window is configured: its logic is in CLOCK_MONOTONIC ns
};

/// Decides the recording clock, once, at start-up: the TSC only if `env_clock` (TRAINPROF_CLOCK)
/// is not "monotonic", the CPU has an invariant TSC, the kernel keeps time with it (so it checked
/// that the TSCs of all CPUs agree) and no capture is configured. Sets g_trace_clock_tsc, and with
/// it measures the TSC rate (about 200 µs of spinning) for TicksFromNs and the header.
TraceClockReason ChooseTraceClock(const char* env_clock, bool capture_configured);

/// The TSC rate measured at start-up, kHz (0 on the monotonic clock): the file header's tsc_khz.
uint32_t TscKhz();

/// A duration in ns as recording-clock units (ticks or ns), from the measured rate: for
/// thresholds compared with differences of TraceNow() (--backtrace=cuda:NS).
uint64_t TraceUnitsFromNs(uint64_t ns);

/// The pair that ended the file, or a calibration pair of now: {TraceNow(), NowNs()} on the
/// monotonic clock (where both are one), TakeClockPair() on the TSC.
inline ClockPair TracePairNow() {
  if (!g_trace_clock_tsc) {
    uint64_t n = NowNs();
    return {n, n};
  }
  return TakeClockPair();
}

}  // namespace trainprof::inject
