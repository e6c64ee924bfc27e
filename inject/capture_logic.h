// The capture state machine (--capture-range, --capture-range-end, --delay, --duration), free of
// the recorder so that it can be unit tested; capture.{h,cc} apply it to the process.
//
// Recording is on at time T iff the capture range is on AND T is inside the window:
//
//   range:   mode none ──────────── always on
//            cudaProfilerApi ────── on from cudaProfilerStart() to cudaProfilerStop()
//            nvtx:NAME ──────────── on from the push of a range named NAME to its pop (same thread)
//            after the first range ends: stop / stop-shutdown: off for good; repeat: ready again
//   window:  [window_start_ns, window_end_ns) on CLOCK_MONOTONIC (the launcher turns --delay and
//            --duration into absolute times from the launch, shared by every process of the run)
//
// The process-wide state is one 64-bit word (CaptureState bits), changed only by StepCapture
// through a CAS, so every change is made exactly once and yields exactly the CAPTURE records of
// the effective (range AND window) on/off changes it causes. Window boundaries are noticed lazily,
// by the first event after them, and recorded with the boundary's time.
#pragma once

#include <cstdint>

#include "trainprof/trace_format.h"

namespace trainprof::inject {

enum class CaptureMode : uint8_t { kNone = 0, kCudaProfilerApi = 1, kNvtx = 2 };
enum class CaptureEnd : uint8_t { kStop = 0, kStopShutdown = 1, kRepeat = 2 };

/// This process's capture settings (TRAINPROF_CAPTURE_*). Default: nothing configured.
struct CaptureSettings {
  CaptureMode mode = CaptureMode::kNone;
  CaptureEnd end = CaptureEnd::kStop;
  const char* nvtx_name = nullptr;  ///< kNvtx: the range name (not owned; NUL-terminated)
  uint32_t nvtx_name_len = 0;
  uint64_t window_start_ns = 0;         ///< recording from here (0: from the start)
  uint64_t window_end_ns = UINT64_MAX;  ///< until here, excluded (UINT64_MAX: to the end)

  bool configured() const {
    return mode != CaptureMode::kNone || window_start_ns != 0 || window_end_ns != UINT64_MAX;
  }
  /// 0 before the window, 1 inside, 2 after.
  uint32_t Phase(uint64_t now) const { return now < window_start_ns ? 0 : now < window_end_ns ? 1 : 2; }
};

/// Settings from the environment's values (any may be null/0). A range that is neither
/// "cudaProfilerApi" nor "nvtx:NAME" with a non-empty NAME is no range (the launcher validates
/// what it sets); an end other than stop-shutdown/repeat is stop; window_end_ns 0 is unbounded.
CaptureSettings ParseCaptureSettings(const char* range, const char* range_end, uint64_t window_start_ns,
                                     uint64_t window_end_ns);

/// MetaKey::kCapture value for `s` ("key=value" entries separated by NUL bytes) into buf; returns
/// its length (0 if it does not fit).
uint32_t FormatCaptureMetadata(const CaptureSettings& s, char* buf, uint32_t cap);

/// Bits of the state word.
namespace capture_bits {
inline constexpr uint64_t kStarted = 1;     ///< the CAPTURE start record is written
inline constexpr uint64_t kRangeOn = 2;     ///< inside a capture range (always, without one)
inline constexpr uint64_t kRangeDone = 4;   ///< stop / stop-shutdown: a range ended, no more start
inline constexpr int kPhaseShift = 3;       ///< 2 bits: the window phase already accounted for
inline constexpr uint64_t kPhaseMask = 3ull << kPhaseShift;
inline constexpr int kFlipShift = 32;       ///< 32 bits: how many times kRangeOn changed
}  // namespace capture_bits

inline uint32_t PhaseOf(uint64_t state) {
  return static_cast<uint32_t>((state & capture_bits::kPhaseMask) >> capture_bits::kPhaseShift);
}
inline bool RangeOn(uint64_t state) { return (state & capture_bits::kRangeOn) != 0; }
inline uint32_t FlipsOf(uint64_t state) { return static_cast<uint32_t>(state >> capture_bits::kFlipShift); }

/// The state before anything happened: the range is on when there is no capture range.
uint64_t InitialCaptureState(const CaptureSettings& s);

/// Whether an event at `now` is recorded in `state`.
inline bool CapturingIn(const CaptureSettings& s, uint64_t state, uint64_t now) {
  return RangeOn(state) && s.Phase(now) == 1;
}

/// The state is unchanged: is there anything StepCapture would do at `now` without an event?
inline bool CaptureCatchUpNeeded(const CaptureSettings& s, uint64_t state, uint64_t now) {
  return (state & capture_bits::kStarted) == 0 || PhaseOf(state) < s.Phase(now);
}

enum class CaptureEvent : uint8_t {
  kNone,        ///< only catch up: the start record, window boundaries passed
  kRangeBegin,  ///< cudaProfilerStart / the push of the nvtx:NAME range
  kRangeEnd,    ///< cudaProfilerStop / the pop that ends the capture range
};

/// One CAPTURE record to write.
struct CaptureRecord {
  uint64_t time_ns = 0;
  bool on = false;
  format::CaptureReason reason = format::CaptureReason::kStart;
};

struct CaptureStep {
  uint64_t state = 0;
  bool flipped = false;  ///< kRangeOn changed (this step began or ended a range)
  int records = 0;
  CaptureRecord record[4];  ///< in time order: start, window boundaries, the event
};

/// Applies `event` (with `reason` for its record) at `now` to `state`: first the start record if
/// not written yet, then window boundaries passed (each boundary that changes the effective state
/// gives a record at the boundary's time), then the event. A begin while on or after the first
/// range with stop, and an end while off, change nothing. Pure: the caller CASes the result in.
CaptureStep StepCapture(const CaptureSettings& s, uint64_t state, uint64_t now, CaptureEvent event,
                        format::CaptureReason reason);

// ---- Whole ranges: which open pushes were recorded (per thread and domain, capture.cc) ----

/// Nesting levels with a bit of their own; a deeper push follows the push at level
/// kCaptureLevels - 1, which stays open while it is.
inline constexpr int kCaptureLevels = 64;

/// Whether the open push at `level` was recorded, from the thread's bits of its domain.
inline bool LevelRecorded(uint64_t bits, int level) {
  return ((bits >> (level < kCaptureLevels ? level : kCaptureLevels - 1)) & 1) != 0;
}

/// Notes the push at `level` (< kCaptureLevels) as recorded or not.
inline void SetLevelRecorded(uint64_t* bits, int level, bool recorded) {
  const uint64_t bit = 1ull << level;
  *bits = recorded ? (*bits | bit) : (*bits & ~bit);
}

// ---- The last range changes, for GPU activity that arrives late (capture.h, CapturedAt) ----

/// Range changes kept; CapturedAt is exact for times after the oldest one kept.
inline constexpr uint32_t kCaptureRingSize = 64;

/// Ring word of a range change at `time_ns` (CLOCK_MONOTONIC, > 0) to `on`; 0 is an empty slot.
inline uint64_t CaptureRingWord(uint64_t time_ns, bool on) { return (time_ns << 1) | (on ? 1 : 0); }

/// Whether the range was on at `ts_ns`, from ring words in any order (0 = empty): the latest
/// change at or before ts_ns; before every change kept, the opposite of the oldest one (the range
/// alternates); with none kept, `initial_on`.
bool RangeOnAt(const uint64_t* words, uint32_t n, uint64_t ts_ns, bool initial_on);

}  // namespace trainprof::inject
