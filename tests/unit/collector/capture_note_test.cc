// CAPTURE records and the capture settings: read, turned into intervals, noted in the report.
#include "collector/analysis/capture_note.h"

#include <gtest/gtest.h>

#include <string>

#include "collector/report/report.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using format::CaptureReason;
using test::TraceBuilder;
using test::TraceOf;
using namespace std::string_literals;

constexpr uint64_t kStart = 1'000'000'000;  // TraceBuilder's default start
constexpr uint64_t kMs = 1'000'000;

TEST(CaptureNote, ReaderKeepsSettingsAndRecords) {
  TraceBuilder b(100);
  b.RawMeta(static_cast<uint16_t>(format::MetaKey::kCapture),
            "range=nvtx:step\0range_end=repeat\0window_start_ns=5\0window_end_ns=9\0future=x"s);
  int t = b.Thread(100);
  b.Capture(t, kStart + 1 * kMs, false, CaptureReason::kStart);
  b.Capture(t, kStart + 2 * kMs, true, CaptureReason::kNvtxRange);
  b.Push(t, kStart + 2 * kMs, "step");
  b.Pop(t, kStart + 3 * kMs);
  b.Capture(t, kStart + 3 * kMs, false, CaptureReason::kNvtxRange);
  Trace trace = TraceOf({&b});
  ASSERT_TRUE(trace.files[0].errors.empty()) << trace.files[0].errors[0];
  const TraceImage& img = trace.processes.at(0).first();
  EXPECT_TRUE(img.capture.present);
  EXPECT_EQ(img.capture.range, "nvtx:step");
  EXPECT_EQ(img.capture.range_end, "repeat");
  EXPECT_EQ(img.capture.window_start_ns, 5u);
  EXPECT_EQ(img.capture.window_end_ns, 9u);
  ASSERT_EQ(img.cuda.captures.size(), 3u);
  EXPECT_EQ(img.cuda.captures[1].time_ns, kStart + 2 * kMs);
  EXPECT_TRUE(img.cuda.captures[1].on);
  EXPECT_EQ(img.cuda.captures[1].reason, static_cast<uint32_t>(CaptureReason::kNvtxRange));
  EXPECT_EQ(img.nvtx.size(), 2u);
}

TEST(CaptureNote, AVersion1FileHasNoCaptureRecords) {
  TraceBuilder b(100);
  b.Version(1);
  int t = b.Thread(100);
  b.Capture(t, kStart + 1 * kMs, true, CaptureReason::kStart);
  Trace trace = TraceOf({&b});
  ASSERT_FALSE(trace.files[0].errors.empty());
  EXPECT_NE(trace.files[0].errors[0].find("bad record tag 59"), std::string::npos);
}

TEST(CaptureNote, IntervalsFromRecordsOfEveryThread) {
  TraceBuilder b(100);
  b.RawMeta(static_cast<uint16_t>(format::MetaKey::kCapture), "range=cudaProfilerApi\0range_end=repeat"s);
  int t0 = b.Thread(100), t1 = b.Thread(101);
  b.Capture(t0, kStart + 1 * kMs, false, CaptureReason::kStart);
  b.Capture(t1, kStart + 10 * kMs, true, CaptureReason::kCudaProfilerApi);  // thread 1 starts it
  b.Capture(t0, kStart + 20 * kMs, false, CaptureReason::kCudaProfilerApi);  // thread 0 stops it
  b.Capture(t0, kStart + 30 * kMs, true, CaptureReason::kCudaProfilerApi);   // still on at the end
  b.ProcessEnd(t0, kStart + 45 * kMs, format::EndKind::kExit, 0);
  Trace trace = TraceOf({&b});
  const Process& p = trace.processes.at(0);
  ASSERT_TRUE(CaptureLimited(p));
  std::vector<CaptureInterval> iv = CaptureIntervals(p);
  ASSERT_EQ(iv.size(), 2u);
  EXPECT_EQ(iv[0].start_ns, kStart + 10 * kMs);
  EXPECT_EQ(iv[0].end_ns, kStart + 20 * kMs);
  EXPECT_EQ(iv[1].start_ns, kStart + 30 * kMs);
  EXPECT_EQ(iv[1].end_ns, kStart + 45 * kMs);  // closed at the process's end
  EXPECT_EQ(DescribeCapture(p, 0),
            "recording limited (--capture-range=cudaProfilerApi --capture-range-end=repeat): 2 intervals captured, "
            "25.0 ms in all: +10.0 ms to +20.0 ms, +30.0 ms to +45.0 ms");
  EXPECT_EQ(RecordedTime(p), 25 * kMs);
}

// Time (%) of a capture-limited process is over the time it captured, not its wall time.
TEST(CaptureNote, PercentOfTheCapturedTime) {
  TraceBuilder b(100);
  b.RawMeta(static_cast<uint16_t>(format::MetaKey::kCapture), "range=nvtx:step\0range_end=repeat"s);
  int t = b.Thread(100);
  for (int i = 0; i < 2; ++i) {
    b.Capture(t, kStart + (100 * i + 10) * kMs, true, CaptureReason::kNvtxRange);
    b.Push(t, kStart + (100 * i + 10) * kMs, "step");
    b.Push(t, kStart + (100 * i + 12) * kMs, "inner");
    b.Pop(t, kStart + (100 * i + 17) * kMs);
    b.Pop(t, kStart + (100 * i + 20) * kMs);
    b.Capture(t, kStart + (100 * i + 20) * kMs, false, CaptureReason::kNvtxRange);
  }
  b.ProcessEnd(t, kStart + 1'000 * kMs, format::EndKind::kExit, 0);
  Report r = Analyze(TraceOf({&b}), {});
  ASSERT_EQ(r.nvtx_ranges.size(), 2u);
  EXPECT_EQ(r.nvtx_ranges[0].name, "step");
  EXPECT_DOUBLE_EQ(r.nvtx_ranges[0].percent, 100.0);  // 20 ms of the 20 ms captured (not 2% of 1 s)
  EXPECT_DOUBLE_EQ(r.nvtx_ranges[1].percent, 50.0);
  EXPECT_DOUBLE_EQ(r.processes[0].nvtx_ranges[1].percent, 50.0);
}

TEST(CaptureNote, AnOpenIntervalClosesAtTheWindowEnd) {
  TraceBuilder b(100);
  b.RawMeta(static_cast<uint16_t>(format::MetaKey::kCapture),
            "range_end=stop\0window_start_ns="s + std::to_string(kStart + 100 * kMs) + "\0window_end_ns="s +
                std::to_string(kStart + 300 * kMs));
  int t = b.Thread(100);
  b.Capture(t, kStart + 1 * kMs, false, CaptureReason::kStart);
  b.Capture(t, kStart + 100 * kMs, true, CaptureReason::kDelay);
  b.ProcessEnd(t, kStart + 900 * kMs, format::EndKind::kExit, 0);
  Trace trace = TraceOf({&b});
  EXPECT_EQ(DescribeCapture(trace.processes.at(0), 5 * kMs),
            "recording limited (--delay/--duration window): 1 interval captured, 200 ms in all: +105 ms to +305 ms");
}

TEST(CaptureNote, NothingCapturedAndNotLimited) {
  TraceBuilder limited(100), plain(101, 100);
  limited.RawMeta(static_cast<uint16_t>(format::MetaKey::kCapture), "range=nvtx:never\0range_end=stop"s);
  int t = limited.Thread(100);
  limited.Capture(t, kStart + 1 * kMs, false, CaptureReason::kStart);
  int u = plain.Thread(101);
  plain.Push(u, kStart + 1 * kMs, "x");
  plain.Pop(u, kStart + 2 * kMs);
  Trace trace = TraceOf({&limited, &plain});
  Report r = Analyze(trace, {});
  int notes = 0;
  for (const std::string& w : r.warnings) {
    if (w.find("recording limited") == std::string::npos) continue;
    ++notes;
    EXPECT_EQ(w, "pid 100: recording limited (--capture-range=nvtx:never --capture-range-end=stop): nothing "
                 "captured; only definitions and process events were recorded");
  }
  EXPECT_EQ(notes, 1);  // none for the process that recorded everything
}

TEST(CaptureNote, ListsTheFirstFiveIntervals) {
  TraceBuilder b(100);
  b.RawMeta(static_cast<uint16_t>(format::MetaKey::kCapture), "range=nvtx:step\0range_end=repeat"s);
  int t = b.Thread(100);
  for (int i = 0; i < 7; ++i) {
    b.Capture(t, kStart + (10 * i + 1) * kMs, true, CaptureReason::kNvtxRange);
    b.Capture(t, kStart + (10 * i + 2) * kMs, false, CaptureReason::kNvtxRange);
  }
  Trace trace = TraceOf({&b});
  std::string note = DescribeCapture(trace.processes.at(0), 0);
  EXPECT_NE(note.find("7 intervals captured, 7.00 ms in all: +1.00 ms to +2.00 ms, "), std::string::npos) << note;
  EXPECT_NE(note.find("+41.0 ms to +42.0 ms, and 2 more"), std::string::npos) << note;
}

}  // namespace
}  // namespace trainprof::collector
