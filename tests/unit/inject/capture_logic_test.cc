#include "capture_logic.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace trainprof::inject {
namespace {

using format::CaptureReason;
using namespace std::string_literals;
namespace bits = capture_bits;

CaptureSettings Nvtx(const char* end = "stop", uint64_t start = 0, uint64_t stop = 0) {
  return ParseCaptureSettings("nvtx:step", end, start, stop);
}

// Applies one step and returns it; `state` becomes the new state.
CaptureStep Step(const CaptureSettings& s, uint64_t* state, uint64_t now, CaptureEvent ev = CaptureEvent::kNone,
                 CaptureReason reason = CaptureReason::kNvtxRange) {
  CaptureStep st = StepCapture(s, *state, now, ev, reason);
  *state = st.state;
  return st;
}

void ExpectRecord(const CaptureRecord& r, uint64_t time, bool on, CaptureReason reason) {
  EXPECT_EQ(r.time_ns, time);
  EXPECT_EQ(r.on, on);
  EXPECT_EQ(r.reason, reason);
}

TEST(CaptureSettings, ParsesWhatTheLauncherSets) {
  CaptureSettings none = ParseCaptureSettings(nullptr, nullptr, 0, 0);
  EXPECT_FALSE(none.configured());
  EXPECT_EQ(none.Phase(123), 1u);

  CaptureSettings cuda = ParseCaptureSettings("cudaProfilerApi", "repeat", 0, 0);
  EXPECT_EQ(cuda.mode, CaptureMode::kCudaProfilerApi);
  EXPECT_EQ(cuda.end, CaptureEnd::kRepeat);
  EXPECT_TRUE(cuda.configured());

  CaptureSettings nvtx = ParseCaptureSettings("nvtx:Optimizer.step#SGD.step", "stop-shutdown", 0, 0);
  EXPECT_EQ(nvtx.mode, CaptureMode::kNvtx);
  EXPECT_EQ(std::string(nvtx.nvtx_name, nvtx.nvtx_name_len), "Optimizer.step#SGD.step");
  EXPECT_EQ(nvtx.end, CaptureEnd::kStopShutdown);

  CaptureSettings window = ParseCaptureSettings(nullptr, nullptr, 100, 200);
  EXPECT_TRUE(window.configured());
  EXPECT_EQ(window.Phase(99), 0u);
  EXPECT_EQ(window.Phase(100), 1u);
  EXPECT_EQ(window.Phase(199), 1u);
  EXPECT_EQ(window.Phase(200), 2u);
  EXPECT_EQ(ParseCaptureSettings(nullptr, nullptr, 100, 0).window_end_ns, UINT64_MAX);
}

TEST(CaptureSettings, AnythingElseIsNoRange) {
  for (const char* bad : {"", "nvtx:", "nvtx", "cuda", "CUDAPROFILERAPI", "nvtx;step"}) {
    EXPECT_EQ(ParseCaptureSettings(bad, nullptr, 0, 0).mode, CaptureMode::kNone) << bad;
  }
  EXPECT_EQ(ParseCaptureSettings("cudaProfilerApi", "bogus", 0, 0).end, CaptureEnd::kStop);
  std::string huge = "nvtx:" + std::string(format::kMaxStringBytes + 1, 'x');
  EXPECT_EQ(ParseCaptureSettings(huge.c_str(), nullptr, 0, 0).mode, CaptureMode::kNone);
}

TEST(CaptureSettings, MetadataIsKeyValueEntriesSeparatedByNul) {
  char buf[256];
  CaptureSettings s = ParseCaptureSettings("nvtx:step", "repeat", 5, 9);
  uint32_t n = FormatCaptureMetadata(s, buf, sizeof(buf));
  EXPECT_EQ(std::string(buf, n), "range=nvtx:step\0range_end=repeat\0window_start_ns=5\0window_end_ns=9"s);
  s = ParseCaptureSettings(nullptr, "stop-shutdown", 0, 7);
  n = FormatCaptureMetadata(s, buf, sizeof(buf));
  EXPECT_EQ(std::string(buf, n), "range_end=stop-shutdown\0window_end_ns=7"s);
  EXPECT_EQ(FormatCaptureMetadata(s, buf, 10), 0u);  // does not fit
}

TEST(CaptureStep, FirstStepWritesTheStartState) {
  CaptureSettings s = Nvtx();
  uint64_t state = InitialCaptureState(s);
  CaptureStep st = Step(s, &state, 1000);
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 1000, false, CaptureReason::kStart);
  EXPECT_FALSE(CapturingIn(s, state, 1000));
  EXPECT_FALSE(CaptureCatchUpNeeded(s, state, 2000));
  EXPECT_EQ(Step(s, &state, 2000).records, 0);  // nothing new: no record

  // Only a window, already open: the start state is "on".
  CaptureSettings w = ParseCaptureSettings(nullptr, nullptr, 0, 5000);
  uint64_t ws = InitialCaptureState(w);
  st = Step(w, &ws, 1000);
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 1000, true, CaptureReason::kStart);
}

TEST(CaptureStep, StopRecordsTheFirstRangeOnly) {
  CaptureSettings s = Nvtx("stop");
  uint64_t state = InitialCaptureState(s);
  Step(s, &state, 10);
  CaptureStep st = Step(s, &state, 100, CaptureEvent::kRangeBegin);
  EXPECT_TRUE(st.flipped);
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 100, true, CaptureReason::kNvtxRange);
  EXPECT_TRUE(CapturingIn(s, state, 150));
  EXPECT_FALSE(Step(s, &state, 150, CaptureEvent::kRangeBegin).flipped);  // already on
  st = Step(s, &state, 200, CaptureEvent::kRangeEnd);
  EXPECT_TRUE(st.flipped);
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 200, false, CaptureReason::kNvtxRange);
  EXPECT_NE(state & bits::kRangeDone, 0u);
  st = Step(s, &state, 300, CaptureEvent::kRangeBegin);  // after the first range: nothing
  EXPECT_FALSE(st.flipped);
  EXPECT_EQ(st.records, 0);
  EXPECT_FALSE(CapturingIn(s, state, 300));
  EXPECT_EQ(FlipsOf(state), 2u);
}

TEST(CaptureStep, RepeatRecordsEveryRangeAndEndWhileOffDoesNothing) {
  CaptureSettings s = ParseCaptureSettings("cudaProfilerApi", "repeat", 0, 0);
  uint64_t state = InitialCaptureState(s);
  CaptureStep st = Step(s, &state, 10, CaptureEvent::kRangeEnd, CaptureReason::kCudaProfilerApi);
  EXPECT_FALSE(st.flipped);
  ASSERT_EQ(st.records, 1);  // only the start record
  for (int i = 0; i < 3; ++i) {
    uint64_t t = 100 + 100 * i;
    st = Step(s, &state, t, CaptureEvent::kRangeBegin, CaptureReason::kCudaProfilerApi);
    ASSERT_EQ(st.records, 1);
    ExpectRecord(st.record[0], t, true, CaptureReason::kCudaProfilerApi);
    st = Step(s, &state, t + 50, CaptureEvent::kRangeEnd, CaptureReason::kCudaProfilerApi);
    ASSERT_EQ(st.records, 1);
    ExpectRecord(st.record[0], t + 50, false, CaptureReason::kCudaProfilerApi);
  }
  EXPECT_EQ(FlipsOf(state), 6u);
  EXPECT_EQ(state & bits::kRangeDone, 0u);
}

TEST(CaptureStep, WindowBoundariesAreRecordedAtTheirOwnTime) {
  CaptureSettings s = ParseCaptureSettings(nullptr, nullptr, 1000, 2000);
  uint64_t state = InitialCaptureState(s);
  CaptureStep st = Step(s, &state, 10);
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 10, false, CaptureReason::kStart);
  st = Step(s, &state, 1500);  // noticed late: dated at the boundary
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 1000, true, CaptureReason::kDelay);
  EXPECT_TRUE(CapturingIn(s, state, 1500));
  st = Step(s, &state, 2500);
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 2000, false, CaptureReason::kDuration);
  EXPECT_FALSE(CapturingIn(s, state, 2500));

  // Both boundaries passed between two events: both records, in order.
  uint64_t late = InitialCaptureState(s);
  Step(s, &late, 10);
  st = Step(s, &late, 5000);
  ASSERT_EQ(st.records, 2);
  ExpectRecord(st.record[0], 1000, true, CaptureReason::kDelay);
  ExpectRecord(st.record[1], 2000, false, CaptureReason::kDuration);

  // A process that starts after the window: off from the start, no boundary records.
  uint64_t after = InitialCaptureState(s);
  st = Step(s, &after, 3000);
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 3000, false, CaptureReason::kStart);
}

TEST(CaptureStep, RangeAndWindowCombine) {
  CaptureSettings s = Nvtx("repeat", 1000, 2000);
  uint64_t state = InitialCaptureState(s);
  Step(s, &state, 10);
  CaptureStep st = Step(s, &state, 500, CaptureEvent::kRangeBegin);  // range on, window not yet
  EXPECT_TRUE(st.flipped);
  EXPECT_EQ(st.records, 0);
  EXPECT_FALSE(CapturingIn(s, state, 500));
  st = Step(s, &state, 1200);
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 1000, true, CaptureReason::kDelay);
  st = Step(s, &state, 1300, CaptureEvent::kRangeEnd);
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 1300, false, CaptureReason::kNvtxRange);
  st = Step(s, &state, 1400, CaptureEvent::kRangeBegin);
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 1400, true, CaptureReason::kNvtxRange);
  st = Step(s, &state, 2500, CaptureEvent::kRangeEnd);  // window closed first, then the range
  ASSERT_EQ(st.records, 1);
  ExpectRecord(st.record[0], 2000, false, CaptureReason::kDuration);
  EXPECT_TRUE(st.flipped);
}

TEST(CaptureLevels, APopIsRecordedIffItsPushWas) {
  // A random push/pop sequence with capture switching on and off: every pop's decision must be
  // its push's, at every depth, also past the levels that have a bit of their own.
  std::mt19937 rng(42);
  uint64_t levels = 0;
  std::vector<bool> model;  // recorded? per open push
  bool capturing = false;
  int recorded_pushes = 0, recorded_pops = 0;
  for (int i = 0; i < 200000; ++i) {
    if (rng() % 50 == 0) capturing = !capturing;
    bool push = model.empty() || (model.size() < 100 && rng() % 2 == 0);
    int level = static_cast<int>(model.size());
    if (push) {
      bool record = level >= kCaptureLevels ? LevelRecorded(levels, level) : capturing;
      if (level < kCaptureLevels) SetLevelRecorded(&levels, level, record);
      model.push_back(record);
      recorded_pushes += record;
    } else {
      bool record = LevelRecorded(levels, level - 1);
      ASSERT_EQ(record, model.back()) << "step " << i << " level " << level - 1;
      model.pop_back();
      recorded_pops += record;
    }
  }
  while (!model.empty()) {
    recorded_pops += LevelRecorded(levels, static_cast<int>(model.size()) - 1);
    model.pop_back();
  }
  EXPECT_EQ(recorded_pushes, recorded_pops);
  EXPECT_GT(recorded_pushes, 1000);
}

TEST(CaptureRing, RangeStateAtATimeFromTheLastChanges) {
  uint64_t none[4] = {};
  EXPECT_FALSE(RangeOnAt(none, 4, 500, false));
  EXPECT_TRUE(RangeOnAt(none, 4, 500, true));
  // On at 100, off at 200, on at 300 (slots in any order).
  uint64_t ring[4] = {CaptureRingWord(300, true), 0, CaptureRingWord(100, true), CaptureRingWord(200, false)};
  EXPECT_FALSE(RangeOnAt(ring, 4, 50, false));
  EXPECT_TRUE(RangeOnAt(ring, 4, 100, false));
  EXPECT_TRUE(RangeOnAt(ring, 4, 199, false));
  EXPECT_FALSE(RangeOnAt(ring, 4, 200, false));
  EXPECT_TRUE(RangeOnAt(ring, 4, 1000, false));
  // The oldest kept change is "off" (older ones were overwritten): before it the range was on.
  uint64_t wrapped[2] = {CaptureRingWord(200, false), CaptureRingWord(300, true)};
  EXPECT_TRUE(RangeOnAt(wrapped, 2, 150, false));
  EXPECT_FALSE(RangeOnAt(wrapped, 2, 250, false));
}

}  // namespace
}  // namespace trainprof::inject
