// Capture ranges: recording limited to parts of the run, as nsys --capture-range does
// (docs/cli.md, "Capture ranges"; the state machine is capture_logic.h).
//
//   event records (NVTX push/pop/mark/start/end, CUDA API calls, GPU activity) ── gated here
//   definitions, thread names, roles, process events, misuse ─────────────────── always recorded
//
// Hot path: with no capture configured, every gate is one relaxed load and a compare
// (CaptureConfigured); the rest is out of line. With one configured, push/pop keep each range
// whole: a pop is recorded iff its push was (per thread and domain, a bit per nesting level), or
// if nothing was pushed (misuse stays visible); an End iff its Start was (a bit in the range id).
// So a range open when capture starts is left out entirely, and one begun inside a capture is
// closed even if the capture ends first.
//
// Each change of the effective state is one CAPTURE record (on/off, reason), written by the
// thread that made or noticed it; the first thread of the process writes the start record.
//
// For the CUDA side (inject/cupti/): OnCudaProfilerApi from the runtime/driver API callback of
// cudaProfilerStart/Stop and cuProfilerStart/Stop; CapturingNow (or CapturingNowLazy) to gate an
// API call's records at its enter (keep the decision for its exit); CapturedAt for GPU activity
// drained later from CUPTI's buffers.
#pragma once

#include <atomic>
#include <cstdint>

#include "capture_logic.h"
#include "trace_clock.h"
#include "recorder.h"

namespace trainprof::inject {

struct Config;

/// Nonzero iff this process records with capture settings. Set by InitCapture only.
extern std::atomic<uint32_t> g_capture_configured;

/// One relaxed load and a compare: the whole cost of capture ranges when none is configured.
inline bool CaptureConfigured() noexcept {
  return __builtin_expect(g_capture_configured.load(std::memory_order_relaxed) != 0, 0);
}

/// Out-of-line part of CapturingNow (catches up the start record and window boundaries).
bool CapturingSlow(uint64_t now_ns) noexcept;

/// Whether an event at `now_ns` (the recording clock, TraceNow(): CLOCK_MONOTONIC ns whenever a
/// capture is configured, trace_clock.h) is recorded. Any thread.
inline bool CapturingNow(uint64_t now_ns) noexcept { return !CaptureConfigured() || CapturingSlow(now_ns); }

/// CapturingNow(TraceNow()), reading the clock only when capture is configured.
inline bool CapturingNowLazy() noexcept { return !CaptureConfigured() || CapturingSlow(TraceNow()); }

/// cudaProfilerStart (start = true) / cudaProfilerStop (false), or their driver API twins, was
/// called on this thread. With --capture-range=cudaProfilerApi: begins / ends the capture range
/// (a start while on, or a stop while off, does nothing, as CUDA documents); otherwise ignored.
void OnCudaProfilerApi(bool start) noexcept;

/// Whether a GPU activity timestamp `ts_ns` (CLOCK_MONOTONIC) lies inside a capture. Lock-free,
/// any thread (e.g. CUPTI's buffer-completed callback). Exact for times after the oldest of the
/// last kCaptureRingSize (64) range changes; a change made in the last moments (its CAS done, its
/// ring slot not yet written) may be missed.
bool CapturedAt(uint64_t ts_ns) noexcept;

// ---- The library's own hooks ----

/// Sets this process's capture state from cfg: at start-up and in a fork child. `records`: the
/// process records at all (otherwise nothing is configured and nothing costs). Writes no record.
void InitCapture(const Config& cfg, bool records);

/// A thread's state was just created: interns the nvtx:NAME range name for it, and writes the
/// process's start record if no thread has yet.
void CaptureThreadStarted(ThreadState* t);

/// The process is ending: records window boundaries passed since the last event.
void CaptureProcessEnding(ThreadState* t);

/// PushRange/PopRange with capture configured (ranges.h): same contract, plus the gating above.
int CapturePushRange(ThreadState* t, uint32_t domain, uint32_t name, uint32_t category);
int CapturePopRange(ThreadState* t, uint32_t domain);

/// Marks an nvtxRangeStart id whose RANGE_START was not recorded, so its End is not either.
inline constexpr uint64_t kUncapturedRangeBit = 1ull << 63;

}  // namespace trainprof::inject
