#include "capture_logic.h"

#include <cstdio>
#include <cstring>

namespace trainprof::inject {

using format::CaptureReason;
namespace bits = capture_bits;

CaptureSettings ParseCaptureSettings(const char* range, const char* range_end, uint64_t window_start_ns,
                                     uint64_t window_end_ns) {
  CaptureSettings s;
  if (range != nullptr) {
    if (strcmp(range, "cudaProfilerApi") == 0) {
      s.mode = CaptureMode::kCudaProfilerApi;
    } else if (strncmp(range, "nvtx:", 5) == 0 && range[5] != '\0') {
      size_t n = strnlen(range + 5, format::kMaxStringBytes + 1);
      if (n <= format::kMaxStringBytes) {
        s.mode = CaptureMode::kNvtx;
        s.nvtx_name = range + 5;
        s.nvtx_name_len = static_cast<uint32_t>(n);
      }
    }
  }
  if (range_end != nullptr) {
    if (strcmp(range_end, "stop-shutdown") == 0) s.end = CaptureEnd::kStopShutdown;
    if (strcmp(range_end, "repeat") == 0) s.end = CaptureEnd::kRepeat;
  }
  s.window_start_ns = window_start_ns;
  s.window_end_ns = window_end_ns == 0 ? UINT64_MAX : window_end_ns;
  return s;
}

uint32_t FormatCaptureMetadata(const CaptureSettings& s, char* buf, uint32_t cap) {
  uint32_t off = 0;
  auto put = [&](const char* key, const char* value, uint32_t len) {
    size_t k = strlen(key);
    if (off + k + 1 + len + 1 > cap) {
      off = cap + 1;  // does not fit: give up
      return;
    }
    memcpy(buf + off, key, k);
    buf[off + k] = '=';
    memcpy(buf + off + k + 1, value, len);
    buf[off + k + 1 + len] = '\0';
    off += static_cast<uint32_t>(k + 1 + len + 1);
  };
  auto put_u64 = [&](const char* key, uint64_t v) {
    char num[24];
    int n = snprintf(num, sizeof(num), "%llu", static_cast<unsigned long long>(v));
    put(key, num, static_cast<uint32_t>(n));
  };
  static const char* const kEnds[] = {"stop", "stop-shutdown", "repeat"};
  if (s.mode == CaptureMode::kCudaProfilerApi) put("range", "cudaProfilerApi", 15);
  if (s.mode == CaptureMode::kNvtx) {
    char name[format::kMaxStringBytes + 5];
    memcpy(name, "nvtx:", 5);
    memcpy(name + 5, s.nvtx_name, s.nvtx_name_len);
    put("range", name, s.nvtx_name_len + 5);
  }
  const char* end = kEnds[static_cast<int>(s.end)];
  put("range_end", end, static_cast<uint32_t>(strlen(end)));
  if (s.window_start_ns != 0) put_u64("window_start_ns", s.window_start_ns);
  if (s.window_end_ns != UINT64_MAX) put_u64("window_end_ns", s.window_end_ns);
  if (off > cap) return 0;
  return off > 0 ? off - 1 : 0;  // no NUL after the last entry
}

uint64_t InitialCaptureState(const CaptureSettings& s) {
  return s.mode == CaptureMode::kNone ? bits::kRangeOn : 0;
}

CaptureStep StepCapture(const CaptureSettings& s, uint64_t state, uint64_t now, CaptureEvent event,
                        CaptureReason reason) {
  CaptureStep out;
  auto effective = [](uint64_t st) { return RangeOn(st) && PhaseOf(st) == 1; };
  auto set_phase = [](uint64_t st, uint32_t phase) {
    return (st & ~bits::kPhaseMask) | (static_cast<uint64_t>(phase) << bits::kPhaseShift);
  };
  const uint32_t phase = s.Phase(now);
  if ((state & bits::kStarted) == 0) {
    // The first step of the process: its state at this moment, whatever the window did before.
    if (PhaseOf(state) < phase) state = set_phase(state, phase);
    state |= bits::kStarted;
    out.record[out.records++] = {now, effective(state), CaptureReason::kStart};
  }
  while (PhaseOf(state) < phase) {
    const bool before = effective(state);
    const uint32_t next = PhaseOf(state) + 1;
    state = set_phase(state, next);
    if (effective(state) != before) {
      out.record[out.records++] = {next == 1 ? s.window_start_ns : s.window_end_ns, !before,
                                   next == 1 ? CaptureReason::kDelay : CaptureReason::kDuration};
    }
  }
  const bool before = effective(state);
  if (event == CaptureEvent::kRangeBegin && !RangeOn(state) && (state & bits::kRangeDone) == 0) {
    state |= bits::kRangeOn;
    out.flipped = true;
  } else if (event == CaptureEvent::kRangeEnd && RangeOn(state)) {
    state &= ~bits::kRangeOn;
    if (s.end != CaptureEnd::kRepeat) state |= bits::kRangeDone;
    out.flipped = true;
  }
  if (out.flipped) {
    state += 1ull << bits::kFlipShift;
    if (effective(state) != before) out.record[out.records++] = {now, !before, reason};
  }
  out.state = state;
  return out;
}

bool RangeOnAt(const uint64_t* words, uint32_t n, uint64_t ts_ns, bool initial_on) {
  uint64_t latest_at_or_before = 0, oldest = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t w = words[i];
    if (w == 0) continue;
    uint64_t t = w >> 1;
    if (t <= ts_ns && (latest_at_or_before == 0 || t >= (latest_at_or_before >> 1))) latest_at_or_before = w;
    if (oldest == 0 || t < (oldest >> 1)) oldest = w;
  }
  if (latest_at_or_before != 0) return (latest_at_or_before & 1) != 0;
  if (oldest != 0) return (oldest & 1) == 0;
  return initial_on;
}

}  // namespace trainprof::inject
