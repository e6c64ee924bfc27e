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
  // No rate a TSC has (0, or a tsc_khz of 7): a single pair converts nothing. Before, 1 tick was
  // taken as 1 ns.
  for (const uint32_t khz : {0u, 7u}) {
    TscConverter::Rejected rejected;
    TscConverter unknown({{5000, 100}}, khz, &rejected);
    EXPECT_FALSE(unknown.usable()) << khz;
    EXPECT_EQ(rejected.no_rate, 1u);
  }
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

// Pairs no TSC wrote: their line's rate is no TSC's (1.2e8 ns per tick), and tsc_khz is 7 (the
// tester's all_pairs_garbage). Before, they were kept and stretched 836 ms into 170 h.
TEST(TscConvert, PairsOnNoTscRateAreAllRejected) {
  TscConverter::Rejected rejected;
  TscConverter c({{1, 2}, {3, 4}, {12345, 1'508'873'728'345}}, 7, &rejected);
  EXPECT_FALSE(c.usable());
  EXPECT_EQ(rejected.no_rate, 3u);
  EXPECT_NEAR(rejected.no_rate_khz, 1e6 / (1'508'873'728'341.0 / 12342), 1e-3);
  // Two pairs 1 ns apart per 1000 ticks (1 MHz): no TSC either.
  TscConverter d({{1000, 1000}, {1'001'000, 2000}}, 0, &rejected);
  EXPECT_FALSE(d.usable());
  EXPECT_EQ(rejected.no_rate, 2u);
  // A tsc_khz that is no TSC's rate, against pairs on a 3 GHz line: the pairs' rate converts.
  TscConverter e({{Ticks(kN0), kN0}, {Ticks(kN0 + 1'000'000), kN0 + 1'000'000}}, 7, &rejected);
  EXPECT_TRUE(e.usable());
  EXPECT_EQ(rejected.total(), 0u);
  EXPECT_EQ(e.ToNs(Ticks(kN0 + 500'000)), kN0 + 500'000);
}

std::vector<uint8_t> WithFlags(std::vector<uint8_t> bytes, uint32_t clear, uint32_t set = 0) {
  uint32_t flags;
  std::memcpy(&flags, bytes.data() + offsetof(fmt::FileHeader, flags), 4);
  flags = (flags & ~clear) | set;
  std::memcpy(bytes.data() + offsetof(fmt::FileHeader, flags), &flags, 4);
  return bytes;
}

// A TSC file whose flag bit 4 was cleared (by hand, in version 4 or 3): its tsc_khz, start_tsc and
// chunk pairs, zero on CLOCK_MONOTONIC, are set and fit a TSC, so the times are ticks: said, and
// converted. Before, no word, and every range 2.1x too long (ticks read as ns).
TEST(TscConvert, AClearedTscFlagIsSaidAndThePairsDecide) {
  for (const uint32_t version : {4u, 3u}) {
    SCOPED_TRACE(version);
    TraceBuilder b(83, 1, kN0);
    const int th = b.Thread(830);
    b.Push(th, Ticks(kN0 + 1000), "step");
    b.Pop(th, Ticks(kN0 + 2'000'000));
    b.Version(version);
    std::vector<uint8_t> bytes = WithFlags(
        AsTscFile(b.Build(), Ticks(kN0), kN0, 3'000'000, {{{Ticks(kN0 + 10), kN0 + 10}, {Ticks(kN0 + 2'000'500), kN0 + 2'000'500}}}),
        fmt::kFlagTscClock);
    StringPool pool;
    ReadResult r = ReadTraceBytes(bytes, "/runs/y/pid-83.trace", &pool, {.keep = KeepNvtx::kAll});
    ASSERT_TRUE(r.image);
    EXPECT_EQ(r.status.path, "/runs/y/pid-83.trace");
    ASSERT_EQ(r.status.errors.size(), 1u);
    EXPECT_EQ(r.status.errors[0],
              "bad header: flags bit 4 (TSC clock) is clear, but tsc_khz 3000000, start_tsc 7000000000 and 2 chunk calibration "
              "pairs are set, and 3 of 3 pairs fit a TSC of 3000000 kHz: the times are read as TSC ticks (at byte 20)");
    EXPECT_EQ(r.status.losses[Loss::header_errors], 1u);
    ASSERT_EQ(r.image->nvtx.size(), 2u);
    EXPECT_EQ(r.image->nvtx[0].time_ns, kN0 + 1000);
    EXPECT_EQ(r.image->nvtx[1].time_ns, kN0 + 2'000'000);
  }
}

// Every pair garbage (the tester's all_pairs_garbage: tsc_khz 7, start_tsc 12345, each chunk's
// pairs (1, 2) and (3, 4)), or pairs on a TSC's rate but before the records of their chunk: no
// conversion is left, and the file is damage, its records unread. Before, ranges of 170 h in an
// 836 ms process, and the one warning blamed tsc_khz.
TEST(TscConvert, GarbagePairsLeaveTheFileDamagedNotHoursLong) {
  TraceBuilder b(85, 1, kN0);
  const int th = b.Thread(850);
  b.Push(th, Ticks(kN0 + 1000), "step");
  b.Pop(th, Ticks(kN0 + 2'000'000));
  {
    std::vector<uint8_t> bytes = AsTscFile(b.Build(), 12345, kN0, 7, {{{1, 2}, {3, 4}}});
    StringPool pool;
    ReadResult r = ReadTraceBytes(bytes, "pid-85.trace", &pool, {.keep = KeepNvtx::kAll});
    ASSERT_TRUE(r.image);
    ASSERT_EQ(r.status.errors.size(), 4u) << r.status.errors[0];
    // The verdict first (a warning line shows a file's first errors), then what is wrong.
    EXPECT_EQ(r.status.errors[0],
              "clock calibration: no usable (TSC, CLOCK_MONOTONIC) pair, the times cannot be converted: the records are not read");
    EXPECT_EQ(r.status.errors[1], "clock calibration: 2 pairs (TSC, CLOCK_MONOTONIC) before the records of their chunk (its base_ns), ignored");
    EXPECT_EQ(r.status.errors[2], "clock calibration: 1 pair (TSC, CLOCK_MONOTONIC) without a TSC rate to convert with, ignored");
    EXPECT_EQ(r.status.errors[3], "bad header: tsc_khz 7 is no TSC's rate (100000 to 20000000 kHz) (at byte 60)");
    EXPECT_TRUE(r.image->nvtx.empty());
    EXPECT_LT(r.status.bytes_read, r.status.bytes);
  }
  {
    // The pairs alone (no records before them): three on no TSC's line.
    std::vector<uint8_t> bytes = AsTscFile(b.Build(), 12345, kN0, 7, {{{1, 2}, {3, 4}}});
    const size_t base = fmt::kHeaderRegionSize + offsetof(fmt::ChunkHeader, base_ns);
    std::memset(bytes.data() + base, 0, 8);
    StringPool pool;
    ReadResult r = ReadTraceBytes(bytes, "pid-85.trace", &pool, {.keep = KeepNvtx::kAll});
    ASSERT_TRUE(r.image);
    ASSERT_EQ(r.status.errors.size(), 3u) << r.status.errors[0];
    EXPECT_EQ(r.status.errors[1], "clock calibration: 3 pairs (TSC, CLOCK_MONOTONIC) on a line of 12 kHz, no TSC's rate, ignored");
    EXPECT_TRUE(r.image->nvtx.empty());
  }
}

// start_tsc 0: the damaged field is named (before, start_monotonic_ns was), and the start stays
// the header's CLOCK_MONOTONIC start, which is fine.
TEST(TscConvert, AZeroStartTscIsNamed) {
  TraceBuilder b(86, 1, kN0);
  const int th = b.Thread(860);
  b.Mark(th, Ticks(kN0 + 5000), "m");
  std::vector<uint8_t> bytes =
      AsTscFile(b.Build(), 0, kN0, 3'000'000, {{{Ticks(kN0 + 10), kN0 + 10}, {Ticks(kN0 + 2'000'500), kN0 + 2'000'500}}});
  StringPool pool;
  ReadResult r = ReadTraceBytes(bytes, "pid-86.trace", &pool, {.keep = KeepNvtx::kAll});
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.status.errors.size(), 1u);
  EXPECT_EQ(r.status.errors[0],
            "bad header: start_tsc 0 in a file on the TSC clock, the start pair is left out of the clock calibration (at byte 152)");
  EXPECT_EQ(r.image->start_ns, kN0);
  ASSERT_EQ(r.image->nvtx.size(), 1u);
  EXPECT_EQ(r.image->nvtx[0].time_ns, kN0 + 5000);
}

// A version 2 file with the bit that is now kFlagTscClock set: not a TSC file (the bit was unused).
// The same bit in a version 4 file whose TSC fields are all 0 (a writer on the TSC clock always
// sets tsc_khz and start_tsc): the times are ns too, and the disagreement is said.
TEST(TscConvert, OldFilesAndATscFlagWithoutTscFieldsAreReadAsNs) {
  for (const uint32_t version : {2u, 4u}) {
    SCOPED_TRACE(version);
    TraceBuilder b(79, 1, kN0);
    const int th = b.Thread(790);
    b.Mark(th, kN0 + 1234, "m");
    b.Version(version).Flags(fmt::kFlagTscClock);
    StringPool pool;
    ReadResult r = ReadTraceBytes(b.Build(), "pid-79.trace", &pool, {.keep = KeepNvtx::kAll});
    ASSERT_TRUE(r.image);
    if (version == 2) {
      EXPECT_TRUE(r.status.errors.empty());
    } else {
      ASSERT_EQ(r.status.errors.size(), 1u);
      EXPECT_EQ(r.status.errors[0],
                "bad header: flags bit 4 (TSC clock) is set, but tsc_khz 0, start_tsc 0 and 0 chunk calibration pairs are 0: "
                "the times are read as CLOCK_MONOTONIC ns (at byte 20)");
    }
    ASSERT_EQ(r.image->nvtx.size(), 1u);
    EXPECT_EQ(r.image->nvtx[0].time_ns, kN0 + 1234);
  }
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
