// TSC ticks → CLOCK_MONOTONIC ns (collector/read/tsc_convert.h) and the reader on files recorded
// on the TSC clock (kFlagTscClock).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collector/read/tsc_convert.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
namespace fmt = trainprof::format;

// A TSC of 3 GHz started at 7e9 ticks: ns = 1e9 + (ticks - 7e9) / 3 exactly at multiples of 3.
constexpr uint64_t kT0 = 7'000'000'000ull, kN0 = 1'000'000'000ull;
constexpr uint64_t Ticks(uint64_t ns) { return kT0 + (ns - kN0) * 3; }

TEST(TscConvert, ExactAtThePairsAndOnTheLineBetween) {
  TscConverter c({{Ticks(kN0), kN0}, {Ticks(kN0 + 3'000'000'000), kN0 + 3'000'000'000}, {Ticks(kN0 + 1'000'000), kN0 + 1'000'000}},
                 3'000'000);
  ASSERT_TRUE(c.usable());
  ASSERT_EQ(c.pairs().size(), 3u);
  EXPECT_EQ(c.pairs()[1].ns, kN0 + 1'000'000);  // sorted by ticks
  for (const TscPair& p : c.pairs()) EXPECT_EQ(c.ToNs(p.ticks), p.ns);
  for (uint64_t ns : {kN0 + 1, kN0 + 333'333, kN0 + 999'999, kN0 + 1'000'001, kN0 + 1'500'000'000, kN0 + 2'999'999'999}) {
    EXPECT_EQ(c.ToNs(Ticks(ns)), ns) << ns;  // points of the line with integer coordinates: exact
  }
  // Ticks between two multiples of 3 land between their ns.
  EXPECT_EQ(c.ToNs(Ticks(kN0 + 500) + 1), kN0 + 500);
}

TEST(TscConvert, EachSegmentHasItsOwnSlope) {
  // The clock runs 3 ticks per ns, then 2 (e.g. an NTP slew, exaggerated): piecewise, not one line.
  const TscPair a{1000, 10'000}, b{1000 + 3'000'000, 1'010'000}, c2{1000 + 3'000'000 + 2'000'000, 2'010'000};
  TscConverter c({a, b, c2}, 0);
  EXPECT_EQ(c.ToNs(1000 + 1'500'000), 510'000u);
  EXPECT_EQ(c.ToNs(1000 + 3'000'000 + 1'000'000), 1'510'000u);
  // Out of order queries (another thread's chunk) find their segment too.
  EXPECT_EQ(c.ToNs(1000 + 300), 10'100u);
  EXPECT_EQ(c.ToNs(1000 + 3'000'000 + 2'000), 1'011'000u);
  // The boundaries of the segment tried first (the last one used): a pair's ticks belong to the
  // segment it begins, the tick before to the one before; before the first pair, after the last.
  EXPECT_EQ(c.ToNs(1000 + 100), 10'033u);
  EXPECT_EQ(c.ToNs(b.ticks), b.ns);
  EXPECT_EQ(c.ToNs(b.ticks - 1), 1'009'999u);
  EXPECT_EQ(c.ToNs(c2.ticks - 2), 2'009'999u);
  EXPECT_EQ(c.ToNs(c2.ticks), c2.ns);
  EXPECT_EQ(c.ToNs(c2.ticks + 2'000'000), 3'010'000u);  // the last segment continued
  EXPECT_EQ(c.ToNs(a.ticks - 300), 9'900u);             // the first continued backwards
  EXPECT_EQ(c.ToNs(a.ticks), a.ns);
}

TEST(TscConvert, ACursorGivesToNsAnswersInAndOutOfOrder) {
  // The reader's per-chunk copy of the segment used last: the same ns as ToNs, for ticks in order
  // across segment boundaries, back into an earlier segment, before the first pair, after the last.
  const std::vector<TscPair> pairs = {{1000, 10'000}, {1000 + 3'000'000, 1'010'000}, {1000 + 5'000'000, 2'010'000}};
  TscConverter c(pairs, 0), reference(pairs, 0);
  TscConverter::Cursor cursor(c);
  std::vector<uint64_t> ticks;
  for (uint64_t t = 0; t < 7'000'000; t += 99'991) ticks.push_back(t);                  // in order
  for (uint64_t t : {uint64_t{1000}, uint64_t{999}, uint64_t{3'001'000}, uint64_t{3'000'999}, uint64_t{5'001'000},
                     uint64_t{5'000'999}, uint64_t{1200}, uint64_t{9'000'000}, uint64_t{0}, uint64_t{4'000'000}}) {
    ticks.push_back(t);  // the boundaries, and jumps back and forth
  }
  for (uint64_t t : ticks) EXPECT_EQ(cursor.ToNs(t), reference.ToNs(t)) << t;
}

TEST(TscConvert, ExtrapolatesFromTheNearestSegmentAtTheEnds) {
  TscConverter c({{Ticks(kN0 + 1'000'000), kN0 + 1'000'000}, {Ticks(kN0 + 2'000'000), kN0 + 2'000'000},
                  {Ticks(kN0 + 2'000'000) + 2'000'000, kN0 + 3'000'000}},  // last segment: 2 ticks per ns
                 0);
  EXPECT_EQ(c.ToNs(Ticks(kN0 + 400'000)), kN0 + 400'000);   // before the first pair: 3 per ns
  EXPECT_EQ(c.ToNs(Ticks(kN0 + 2'000'000) + 4'000'000), kN0 + 4'000'000);  // after the last: 2 per ns
  EXPECT_EQ(c.ToNs(0), 0u);  // far before the first pair: clamped at 0, never wrapped
}

TEST(TscConvert, OnePairUsesTheWritersRate) {
  TscConverter c({{Ticks(kN0), kN0}}, 3'000'000);  // 3 GHz = 3e6 kHz
  EXPECT_EQ(c.ToNs(Ticks(kN0)), kN0);
  EXPECT_EQ(c.ToNs(Ticks(kN0 + 1'000'000)), kN0 + 1'000'000);
  EXPECT_EQ(c.ToNs(Ticks(kN0) - 3000), kN0 - 1000);
  TscConverter unknown({{5000, 100}}, 0);  // no rate: 1 tick = 1 ns
  EXPECT_EQ(unknown.ToNs(5100), 200u);
  TscConverter none({}, 3'000'000);
  EXPECT_FALSE(none.usable());
  EXPECT_EQ(none.ToNs(12345), 12345u);
}

TEST(TscConvert, PairsOutOfOrderAreRejected) {
  TscConverter::Rejected rejected{99, 99};
  // The third pair's ns goes back 1.5 µs (damage, but within the off-the-line allowance); zero
  // ticks are "no pair", not counted.
  TscConverter c({{1000, 1000}, {2000, 2000}, {3000, 500}, {4000, 4000}, {0, 0}, {5000, 5000}}, 0, &rejected);
  EXPECT_EQ(rejected.out_of_order, 1u);
  EXPECT_EQ(rejected.off_line, 0u);
  ASSERT_EQ(c.pairs().size(), 4u);
  EXPECT_EQ(c.ToNs(3000), 3000u);
  // A damaged first pair costs only itself, not everything after it.
  TscConverter d({{1000, 9'000'000}, {2000, 2000}, {3000, 3000}, {4000, 4000}}, 0, &rejected);
  EXPECT_EQ(rejected.total(), 1u);
  EXPECT_EQ(d.ToNs(2500), 2500u);
  TscConverter e({{1000, 1000}, {2000, 2000}}, 0, &rejected);
  EXPECT_EQ(rejected.total(), 0u);
}

// Pairs no writer takes: values past 2^62 (a chunk header of 0xFF bytes) and pairs in order but
// far off the line the others lie on. Before, such a pair was kept and bent the last segment:
// times hours off ("5124093 h" of launch latency), with no warning.
TEST(TscConvert, AbsurdAndOffTheLinePairsAreRejected) {
  TscConverter::Rejected rejected;
  const TscPair ff{UINT64_MAX, UINT64_MAX};
  TscConverter a({{Ticks(kN0), kN0}, ff, {Ticks(kN0 + 1'000'000), kN0 + 1'000'000}, ff}, 3'000'000, &rejected);
  EXPECT_EQ(rejected.off_line, 2u);
  EXPECT_EQ(rejected.out_of_order, 0u);
  ASSERT_EQ(a.pairs().size(), 2u);
  EXPECT_EQ(a.ToNs(Ticks(kN0 + 5'000'000)), kN0 + 5'000'000);  // the good pairs' line continued

  // Many pairs on the 3 GHz line, one of them 1 s late but still after the last one's ns (in
  // order): dropped, the line's rate taken from the pairs themselves (no tsc_khz).
  std::vector<TscPair> pairs;
  for (uint64_t k = 0; k < 10; ++k) pairs.push_back({Ticks(kN0 + k * 100'000'000), kN0 + k * 100'000'000});
  pairs.push_back({Ticks(kN0 + 950'000'000), kN0 + 1'950'000'000});  // after the last pair in ns too: in order
  TscConverter b(pairs, 0, &rejected);
  EXPECT_EQ(rejected.off_line, 1u);
  EXPECT_EQ(b.pairs().size(), 10u);
  EXPECT_EQ(b.ToNs(Ticks(kN0 + 950'000'000)), kN0 + 950'000'000);

  // A rate that drifts (a VM's TSC against an NTP-slewed clock: 500 ppm) is no damage.
  std::vector<TscPair> slewed;
  for (uint64_t k = 0; k < 10; ++k) slewed.push_back({Ticks(kN0 + k * 1'000'000'000), kN0 + k * 1'000'500'000});
  TscConverter s(slewed, 3'000'000, &rejected);
  EXPECT_EQ(rejected.total(), 0u);
  EXPECT_EQ(s.pairs().size(), 10u);
}

// The builder writes times as given; patched into a TSC file they are ticks.
std::vector<uint8_t> AsTscFile(std::vector<uint8_t> bytes, uint64_t start_tsc, uint64_t start_ns, uint32_t khz,
                               std::vector<std::pair<TscPair, TscPair>> chunk_pairs) {
  auto store = [&](size_t off, auto v) { std::memcpy(bytes.data() + off, &v, sizeof v); };
  using H = fmt::FileHeader;
  using C = fmt::ChunkHeader;
  uint32_t flags;
  std::memcpy(&flags, bytes.data() + offsetof(H, flags), 4);
  store(offsetof(H, flags), flags | fmt::kFlagTscClock);
  store(offsetof(H, tsc_khz), khz);
  store(offsetof(H, start_tsc), start_tsc);
  store(offsetof(H, start_monotonic_ns), start_ns);
  for (size_t k = 0; k < chunk_pairs.size(); ++k) {
    const size_t off = fmt::kHeaderRegionSize + k * fmt::kDefaultChunkSize;
    store(off + offsetof(C, sync_ticks), chunk_pairs[k].first.ticks);
    store(off + offsetof(C, sync_ns), chunk_pairs[k].first.ns);
    store(off + offsetof(C, last_ticks), chunk_pairs[k].second.ticks);
    store(off + offsetof(C, last_ns), chunk_pairs[k].second.ns);
  }
  return bytes;
}

TEST(TscConvert, ReaderConvertsTimedRecordsThroughTheFilesPairs) {
  TraceBuilder b(77, 1, kN0);
  const int th = b.Thread(700);
  b.Push(th, Ticks(kN0 + 1000), "step");
  b.Mark(th, Ticks(kN0 + 1'500'000), "half");
  b.Pop(th, Ticks(kN0 + 2'000'000));
  b.ProcessEnd(th, Ticks(kN0 + 2'000'300), fmt::EndKind::kExit, 0);
  std::vector<uint8_t> bytes =
      AsTscFile(b.Build(), Ticks(kN0), kN0, 3'000'000, {{{Ticks(kN0 + 10), kN0 + 10}, {Ticks(kN0 + 2'000'500), kN0 + 2'000'500}}});
  StringPool pool;
  ReadResult r = ReadTraceBytes(bytes, "pid-77.trace", &pool, {.keep = KeepNvtx::kAll});
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.errors.empty()) << r.status.errors[0];
  const TraceImage& img = *r.image;
  ASSERT_EQ(img.nvtx.size(), 3u);
  EXPECT_EQ(img.nvtx[0].time_ns, kN0 + 1000);
  EXPECT_EQ(img.nvtx[1].time_ns, kN0 + 1'500'000);
  EXPECT_EQ(img.nvtx[2].time_ns, kN0 + 2'000'000);
  EXPECT_EQ(img.first_record_ns, kN0 + 1000);
  EXPECT_EQ(img.last_record_ns, kN0 + 2'000'300);
  EXPECT_EQ(img.start_ns, kN0);
}

TEST(TscConvert, ReaderWarnsOfDamagedPairsNamingTheFile) {
  TraceBuilder b(78, 1, kN0);
  const int th = b.Thread(780), th2 = b.Thread(781);
  b.Mark(th, Ticks(kN0 + 1000), "m");
  b.Mark(th2, Ticks(kN0 + 2500), "n");
  // Chunk 0's sync pair says 5 s later than its ticks allow (its neighbours agree on 3 ticks per
  // ns): damage, dropped; the other three pairs are kept.
  std::vector<uint8_t> bytes = AsTscFile(b.Build(), Ticks(kN0), kN0, 3'000'000,
                                         {{{Ticks(kN0 + 500), kN0 + 5'000'000'000ull}, {Ticks(kN0 + 3000), kN0 + 3000}},
                                          {{Ticks(kN0 + 2000), kN0 + 2000}, {0, 0}}});
  StringPool pool;
  ReadResult r = ReadTraceBytes(bytes, "/runs/x/pid-78.trace", &pool, {.keep = KeepNvtx::kAll});
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.status.errors.size(), 1u);
  EXPECT_EQ(r.status.path, "/runs/x/pid-78.trace");
  EXPECT_NE(r.status.errors[0].find("clock calibration: 1 pair (TSC, CLOCK_MONOTONIC) off the line through the others, ignored"),
            std::string::npos)
      << r.status.errors[0];
  EXPECT_EQ(r.status.losses[Loss::header_errors], 1u);
  ASSERT_EQ(r.image->nvtx.size(), 2u);
  EXPECT_EQ(r.image->nvtx[0].time_ns, kN0 + 1000);
  EXPECT_EQ(r.image->nvtx[1].time_ns, kN0 + 2500);
}

// A chunk header whose calibration pairs are 0xFF bytes: said (the file counts as damaged), and
// the records are converted through the other pairs.
TEST(TscConvert, ReaderRejectsChunkPairsOfOnes) {
  TraceBuilder b(81, 1, kN0);
  const int th = b.Thread(810);
  b.Push(th, Ticks(kN0 + 1000), "step");
  b.Pop(th, Ticks(kN0 + 2'000'000));
  const TscPair ff{UINT64_MAX, UINT64_MAX};
  std::vector<uint8_t> bytes = AsTscFile(b.Build(), Ticks(kN0), kN0, 3'000'000, {{ff, ff}});
  StringPool pool;
  ReadResult r = ReadTraceBytes(bytes, "pid-81.trace", &pool, {.keep = KeepNvtx::kAll});
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.status.errors.size(), 1u);
  EXPECT_EQ(r.status.errors[0], "clock calibration: 2 pairs (TSC, CLOCK_MONOTONIC) off the line through the others, ignored");
  ASSERT_EQ(r.image->nvtx.size(), 2u);
  EXPECT_EQ(r.image->nvtx[1].time_ns, kN0 + 2'000'000);  // the header's pair and rate
}

// Of few pairs, two damaged ones lying on a steep line of their own bend the median slope (found
// by a helper: one chunk's pairs of random bytes stretched a process 3.6x); the writer's rate keeps
// the three good pairs, so it wins. A damaged tsc_khz, against many good pairs, loses to the
// median slope.
TEST(TscConvert, TheRateThatKeepsMorePairsWins) {
  TscConverter::Rejected rejected;
  const uint64_t kT = 1'000'000'000'000ull;
  std::vector<TscPair> pairs = {{Ticks(kN0), kN0},
                                {Ticks(kN0 + 1'000'000), kN0 + 1'000'000},
                                {Ticks(kN0 + 2'000'000), kN0 + 2'000'000},
                                {Ticks(kN0) + kT, kN0 + 5 * kT},
                                {Ticks(kN0) + 2 * kT, kN0 + 10 * kT}};
  TscConverter a(pairs, 3'000'000, &rejected);
  EXPECT_EQ(rejected.off_line, 2u);
  EXPECT_EQ(a.ToNs(Ticks(kN0 + 9'000'000)), kN0 + 9'000'000);

  std::vector<TscPair> many;
  for (uint64_t k = 0; k < 8; ++k) many.push_back({Ticks(kN0 + k * 1'000'000), kN0 + k * 1'000'000});
  TscConverter b(many, 0xFFFFFFFFu, &rejected);
  EXPECT_EQ(rejected.total(), 0u);
  EXPECT_NEAR(rejected.rate_khz, 3'000'000.0, 1.0);  // the pairs' rate, said by the reader
  TscConverter c(many, 3'000'000, &rejected);
  EXPECT_EQ(rejected.rate_khz, 0.0);
  EXPECT_EQ(b.ToNs(Ticks(kN0 + 3'500'000)), kN0 + 3'500'000);
}

// GPU activity is timed from its chunk's sync pair (sync_ns + zs): with that pair off the line, its
// records have no time. Before, a sync_ns of 0xFF bytes put kernels 235 years out in the export.
TEST(TscConvert, GpuRecordsOfAChunkWhoseSyncPairIsOffTheLineAreLeftOut) {
  for (const bool damaged : {false, true}) {
    SCOPED_TRACE(damaged);
    TraceBuilder b(82, 1, kN0);
    const int t = b.Thread(820), g = b.Thread(821);
    b.Mark(t, Ticks(kN0 + 1000), "m");  // chunk 0
    b.Kernel(g, {.start = kN0 + 5'000, .end = kN0 + 9'000, .name = "_Z1kv", .correlation = 1});  // chunk 1, base kN0
    const TscPair sync{Ticks(kN0), damaged ? kN0 + 10'000'000'000ull : kN0};
    std::vector<uint8_t> bytes = AsTscFile(b.Build(), Ticks(kN0), kN0, 3'000'000,
                                           {{{Ticks(kN0 + 10), kN0 + 10}, {Ticks(kN0 + 2000), kN0 + 2000}}, {sync, {0, 0}}});
    StringPool pool;
    ReadResult r = ReadTraceBytes(bytes, "pid-82.trace", &pool);
    ASSERT_TRUE(r.image);
    const CudaData& c = r.image->cuda;
    if (!damaged) {
      EXPECT_TRUE(r.status.errors.empty()) << r.status.errors[0];
      ASSERT_EQ(c.kernels.size(), 1u);
      EXPECT_EQ(c.kernels[0].start_ns, kN0 + 5'000);
      EXPECT_EQ(c.kernels[0].end_ns, kN0 + 9'000);
      continue;
    }
    EXPECT_TRUE(c.kernels.empty());
    EXPECT_EQ(c.invalid_timestamps, 1u);
    ASSERT_EQ(r.status.errors.size(), 2u);
    EXPECT_EQ(r.status.errors[0], "clock calibration: 1 pair (TSC, CLOCK_MONOTONIC) off the line through the others, ignored");
    EXPECT_EQ(r.status.errors[1],
              "1 GPU activity record left out: the calibration pair of their chunk, their time base, is off the clock line");
  }
}

TEST(TscConvert, OldFilesReadAsBefore) {
  // A version 2 file with the bit that is now kFlagTscClock set: not a TSC file (the bit was unused).
  TraceBuilder b(79, 1, kN0);
  const int th = b.Thread(790);
  b.Mark(th, kN0 + 1234, "m");
  b.Version(2).Flags(fmt::kFlagTscClock);
  StringPool pool;
  ReadResult r = ReadTraceBytes(b.Build(), "pid-79.trace", &pool, {.keep = KeepNvtx::kAll});
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.errors.empty());
  ASSERT_EQ(r.image->nvtx.size(), 1u);
  EXPECT_EQ(r.image->nvtx[0].time_ns, kN0 + 1234);
}

TEST(TscConvert, Version3TscFilesOfTheWritersBeforeVersion4AreConverted) {
  // Writers between the TSC clock and format version 4 wrote TSC files as version 3 (flag set).
  TraceBuilder b(80, 1, kN0);
  const int th = b.Thread(800);
  b.Mark(th, Ticks(kN0 + 1000), "m");
  b.Version(3);
  std::vector<uint8_t> bytes =
      AsTscFile(b.Build(), Ticks(kN0), kN0, 3'000'000, {{{Ticks(kN0 + 10), kN0 + 10}, {Ticks(kN0 + 2000), kN0 + 2000}}});
  StringPool pool;
  ReadResult r = ReadTraceBytes(bytes, "pid-80.trace", &pool, {.keep = KeepNvtx::kAll});
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.image->nvtx.size(), 1u);
  EXPECT_EQ(r.image->nvtx[0].time_ns, kN0 + 1000);
}

}  // namespace
}  // namespace trainprof::collector
