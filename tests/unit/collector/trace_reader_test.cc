// The reader on intact traces: header, metadata, chunks, records, string ids.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
namespace fmt = trainprof::format;

ReadResult Read(const TraceBuilder& b, StringPool* pool) { return ReadTraceBytes(b.Build(), b.FileName(), pool); }

TEST(TraceReader, HeaderAndMetadata) {
  TraceBuilder b(4242, 4000, 5'000'000);
  b.Host("gpu-node-7")
      .Command({"/usr/bin/python3", "train.py", "--lr", "3e-4"})
      .Executable("/usr/bin/python3.11")
      .Env("RANK", "3")
      .Env("WORLD_SIZE", "8")
      .Flags(fmt::kFlagForkedChild)
      .ImageIndex(2)
      .StartRealtime(1'700'000'000'000'000'000ull)
      .HeaderEnd(fmt::EndKind::kExit, 7, 9'000'000)
      .Dropped(11)
      .RawMeta(999, "from a newer writer");
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.usable);
  EXPECT_TRUE(r.status.errors.empty()) << r.status.errors[0];
  EXPECT_FALSE(r.status.truncated);
  EXPECT_EQ(r.status.pid, 4242);
  EXPECT_EQ(r.status.bytes, fmt::kHeaderRegionSize);
  EXPECT_EQ(r.status.bytes_read, r.status.bytes);
  const TraceImage& img = *r.image;
  EXPECT_EQ(img.pid, 4242);
  EXPECT_EQ(img.ppid, 4000);
  EXPECT_EQ(img.host, "gpu-node-7");
  EXPECT_EQ(img.argv, (std::vector<std::string>{"/usr/bin/python3", "train.py", "--lr", "3e-4"}));
  EXPECT_EQ(img.executable, "/usr/bin/python3.11");
  EXPECT_EQ(img.writer_version, "test");
  ASSERT_NE(img.Env("RANK"), nullptr);
  EXPECT_EQ(*img.Env("RANK"), "3");
  EXPECT_EQ(*img.Env("WORLD_SIZE"), "8");
  EXPECT_EQ(img.Env("LOCAL_RANK"), nullptr);
  EXPECT_EQ(img.flags, fmt::kFlagForkedChild);
  EXPECT_EQ(img.image_index, 2u);
  EXPECT_EQ(img.start_ns, 5'000'000u);
  EXPECT_EQ(img.start_realtime_ns, 1'700'000'000'000'000'000ull);
  EXPECT_EQ(img.end_kind, fmt::EndKind::kExit);
  EXPECT_EQ(img.end_code, 7);
  EXPECT_EQ(img.end_ns, 9'000'000u);
  EXPECT_EQ(img.records_dropped, 11u);
  EXPECT_EQ(img.records, 0u);
  EXPECT_TRUE(img.threads.empty());
}

TEST(TraceReader, RecordsTimesAndNames) {
  TraceBuilder b(10, 1, 1'000);
  int t = b.Thread(10);
  b.ThreadName(t, 10, "MainThread");
  b.Role(t, "DataLoader worker");
  uint64_t dom = b.Domain(t, "torch");
  b.Push(t, 2'000, "forward", dom, 5);
  b.Mark(t, 2'500, "checkpoint");
  b.Pop(t, 3'000, dom);
  b.Start(t, 4'000, "epoch", 77);
  b.EndRange(t, 9'000, 77);
  b.Fork(t, 9'100, 11);
  b.ChildExit(t, 9'200, 11, fmt::EndKind::kSignal, 9);
  b.Exec(t, 9'300, "/bin/true");
  b.ProcessEnd(t, 9'400, fmt::EndKind::kExit, -3);
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  ASSERT_TRUE(r.status.errors.empty()) << r.status.errors[0];
  const TraceImage& img = *r.image;
  EXPECT_EQ(img.records, b.records());
  ASSERT_EQ(img.threads.size(), 1u);
  EXPECT_EQ(img.threads[0].tid, 10u);
  EXPECT_EQ(pool.Get(img.threads[0].name), "MainThread");
  EXPECT_EQ(img.threads[0].events, b.records());
  EXPECT_EQ(pool.Get(img.role), "DataLoader worker");

  ASSERT_EQ(img.nvtx.size(), 5u);
  EXPECT_EQ(img.nvtx[0].kind(), NvtxKind::kPush);
  EXPECT_EQ(img.nvtx[0].time_ns, 2'000u);
  EXPECT_EQ(pool.Get(img.nvtx[0].name), "forward");
  EXPECT_EQ(pool.Get(img.nvtx[0].domain), "torch");
  EXPECT_EQ(img.nvtx[0].category, 5u);
  EXPECT_EQ(img.nvtx[1].kind(), NvtxKind::kMark);
  EXPECT_EQ(img.nvtx[1].domain, 0u);
  EXPECT_EQ(img.nvtx[2].kind(), NvtxKind::kPop);
  EXPECT_EQ(img.nvtx[2].time_ns, 3'000u);
  EXPECT_EQ(pool.Get(img.nvtx[2].domain), "torch");
  EXPECT_EQ(img.nvtx[3].kind(), NvtxKind::kStart);
  EXPECT_EQ(img.nvtx[3].range_id, 77u);
  EXPECT_EQ(img.nvtx[4].kind(), NvtxKind::kEnd);
  EXPECT_EQ(img.nvtx[4].time_ns, 9'000u);

  ASSERT_EQ(img.process_events.size(), 4u);
  EXPECT_EQ(img.process_events[0].kind, ProcessEventKind::kFork);
  EXPECT_EQ(img.process_events[0].value, 11u);
  EXPECT_EQ(img.process_events[1].kind, ProcessEventKind::kChildExit);
  EXPECT_EQ(img.process_events[1].what, static_cast<uint32_t>(fmt::EndKind::kSignal));
  EXPECT_EQ(img.process_events[1].code, 9);
  EXPECT_EQ(pool.Get(img.process_events[2].text), "/bin/true");
  EXPECT_EQ(img.process_events[3].kind, ProcessEventKind::kProcessEnd);
  EXPECT_EQ(img.process_events[3].code, -3);
  EXPECT_EQ(img.process_events[3].time_ns, 9'400u);
  EXPECT_TRUE(img.has_timed_records);
  EXPECT_EQ(img.first_record_ns, 2'000u);
  EXPECT_EQ(img.last_record_ns, 9'400u);
}

// Many small chunks, two threads interleaved: every chunk is decoded from its own base_ns, and
// one thread's chunks are joined in thread_seq order.
TEST(TraceReader, ChunksPerThreadEachFromItsBase) {
  TraceBuilder b(20, 1, 0);
  b.Layout(1024, 256);
  int t0 = b.Thread(20);
  int t1 = b.Thread(21);
  uint64_t t = 1'000;
  for (int i = 0; i < 200; ++i) {
    b.Push(i % 2 ? t1 : t0, t, "step");
    b.Pop(i % 2 ? t1 : t0, t + 100 + i);
    t += 1'000'000;  // big dts: a chunk decoded from the wrong base would shift every time
  }
  ASSERT_GT(b.chunks(), 10u);
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  ASSERT_TRUE(r.status.errors.empty()) << r.status.errors[0];
  const TraceImage& img = *r.image;
  ASSERT_EQ(img.threads.size(), 2u);
  EXPECT_EQ(img.threads[0].tid, 20u);
  EXPECT_EQ(img.threads[1].tid, 21u);
  EXPECT_GT(img.threads[0].chunks, 3u);
  ASSERT_EQ(img.nvtx.size(), 400u);
  // Thread 0's events first (i even), in order, then thread 1's.
  for (int k = 0; k < 100; ++k) {
    int i = 2 * k;
    EXPECT_EQ(img.nvtx[2 * k].time_ns, 1'000 + uint64_t(i) * 1'000'000) << k;
    EXPECT_EQ(img.nvtx[2 * k + 1].time_ns, 1'000 + uint64_t(i) * 1'000'000 + 100 + i) << k;
    EXPECT_EQ(img.nvtx[2 * k].thread, 0u);
  }
  EXPECT_EQ(img.nvtx[200].time_ns, 1'000 + 1'000'000 + 0u);
  EXPECT_EQ(img.nvtx[200].thread, 1u);
}

TEST(TraceReader, OrdersChunksByThreadSeqNotSlot) {
  TraceBuilder b(30, 1, 0);
  b.Layout(512, 128);
  int t = b.Thread(30);
  for (int i = 0; i < 40; ++i) b.Mark(t, 1'000 * (i + 1), "tick");
  ASSERT_GE(b.chunks(), 3u);
  std::vector<uint8_t> bytes = b.Build();
  // Swap the contents of slots 0 and 2: slot order no longer matches thread_seq.
  std::swap_ranges(bytes.begin() + 512, bytes.begin() + 512 + 128, bytes.begin() + 512 + 256);
  StringPool pool;
  ReadResult r = ReadTraceBytes(bytes, "swapped", &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.errors.empty());
  ASSERT_EQ(r.image->nvtx.size(), 40u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(r.image->nvtx[i].time_ns, 1'000u * (i + 1)) << i;
}

TEST(TraceReader, SkipsZeroSlots) {
  TraceBuilder b(40, 1, 0);
  b.Layout(512, 128);
  int t = b.Thread(40);
  b.Mark(t, 10, "a");
  b.ZeroSlot();
  b.NewChunk(t);
  b.Mark(t, 20, "b");
  b.ZeroSlot();  // a trailing preallocated slot
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.errors.empty());
  EXPECT_FALSE(r.status.truncated);
  ASSERT_EQ(r.image->nvtx.size(), 2u);
  EXPECT_EQ(r.image->nvtx[1].time_ns, 20u);
  EXPECT_EQ(r.image->threads[0].chunks, 2u);
}

// In a file with no other problem, a name id nothing defines is the program's doing (a bogus
// registered string handle): counted as NVTX misuse of the image, not as damage.
TEST(TraceReader, UndefinedStringIdInAnIntactFileIsMisuseNotDamage) {
  TraceBuilder b(50, 1, 0);
  int t = b.Thread(50);
  b.RawFields(t, static_cast<uint8_t>(fmt::RecordTag::kRangePush), {5, 0, 1234, 0});
  b.RawFields(t, static_cast<uint8_t>(fmt::RecordTag::kMark), {0, 0, 1234, 0});
  b.RawFields(t, static_cast<uint8_t>(fmt::RecordTag::kMark), {0, 77, 99, 0});  // undefined domain too
  b.Pop(t, 10);
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.errors.empty()) << r.status.errors.front();
  EXPECT_FALSE(r.status.damaged());
  EXPECT_EQ(r.image->undefined_names, 2u);  // distinct ids: 1234 and 99
  EXPECT_EQ(r.image->undefined_domains, 1u);
  EXPECT_EQ(pool.Get(r.image->nvtx[0].name), "<string #1234>");
  EXPECT_EQ(pool.Get(r.image->nvtx[2].domain), "<domain #77>");
  EXPECT_EQ(r.image->nvtx[0].time_ns, 5u);
}

// With other damage the definition may be what was lost: the undefined id is one more error.
TEST(TraceReader, UndefinedStringIdInADamagedFileIsDamage) {
  TraceBuilder b(50, 1, 0);
  int t = b.Thread(50);
  b.RawFields(t, static_cast<uint8_t>(fmt::RecordTag::kRangePush), {5, 0, 1234, 0});
  b.Pop(t, 10);
  b.Raw(t, {0xEE});  // a bad record tag after them
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.status.errors.size(), 2u);
  EXPECT_EQ(r.status.errors[0].rfind("bad record tag 238 at byte ", 0), 0u) << r.status.errors[0];
  EXPECT_EQ(r.status.errors[1], "undefined string id 1234");
  EXPECT_EQ(r.image->undefined_names, 0u);
  EXPECT_EQ(pool.Get(r.image->nvtx[0].name), "<string #1234>");
}

// Name id 0 is "no name": nvtxDomainCreateA(NULL) gives a domain without a name, not an error.
TEST(TraceReader, DomainWithoutANameIsNoError) {
  TraceBuilder b(51, 1, 0);
  int t = b.Thread(51);
  uint64_t dom = b.UnnamedDomain(t);
  b.Misuse(t, 1, fmt::MisuseKind::kNullName);
  b.Push(t, 5, "work", dom);
  b.Pop(t, 10, dom);
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.errors.empty()) << r.status.errors.front();
  EXPECT_EQ(r.image->undefined_names, 0u);
  EXPECT_EQ(r.image->undefined_domains, 0u);
  EXPECT_EQ(pool.Get(r.image->nvtx[0].domain), "<domain #1>");
}

TEST(TraceReader, StringIdsAreImageLocal) {
  // Two files number the same names differently; the pool gives one id per name.
  TraceBuilder a(1, 1, 0), b(2, 1, 0);
  int ta = a.Thread(1), tb = b.Thread(2);
  a.Mark(ta, 10, "x");
  a.Mark(ta, 20, "y");
  b.Mark(tb, 10, "y");
  b.Mark(tb, 20, "x");
  StringPool pool;
  ReadResult ra = Read(a, &pool), rb = Read(b, &pool);
  EXPECT_EQ(ra.image->nvtx[0].name, rb.image->nvtx[1].name);
  EXPECT_EQ(ra.image->nvtx[1].name, rb.image->nvtx[0].name);
  EXPECT_NE(ra.image->nvtx[0].name, ra.image->nvtx[1].name);
}

// torch.multiprocessing.spawn'ed ranks learn RANK after start: PROCESS_ENV wins over the header.
TEST(TraceReader, ProcessEnvRecordsSetRankVariables) {
  TraceBuilder b(77, 70);
  b.Env("RANK", "0").Env("WORLD_SIZE", "2");
  int t = b.Thread(77);
  b.ProcessEnv(t, "RANK=1");
  b.ProcessEnv(t, "LOCAL_RANK=1");
  b.ProcessEnv(t, "=ignored");
  StringPool pool;
  ReadResult r = Read(b, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.errors.empty()) << r.status.errors.front();
  ASSERT_NE(r.image->Env("RANK"), nullptr);
  EXPECT_EQ(*r.image->Env("RANK"), "1");
  EXPECT_EQ(*r.image->Env("WORLD_SIZE"), "2");
  ASSERT_NE(r.image->Env("LOCAL_RANK"), nullptr);
  EXPECT_EQ(*r.image->Env("LOCAL_RANK"), "1");
  Trace trace = test::TraceOf({&b});
  EXPECT_EQ(trace.processes.at(0).rank, 1);
  EXPECT_EQ(trace.processes.at(0).role, "rank 1");
}

TEST(TraceReader, ReadsFilesFromDisk) {
  test::ScratchDir dir;
  TraceBuilder b(60);
  int t = b.Thread(60);
  b.Push(t, b.start_ns() + 10, "x");
  b.Pop(t, b.start_ns() + 20);
  std::string path = b.WriteTo(dir.path());
  StringPool pool;
  ReadResult r = ReadTraceFile(path, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.path, path);
  EXPECT_EQ(r.image->nvtx.size(), 2u);

  ReadResult missing = ReadTraceFile(dir / "nope.trace", &pool);
  EXPECT_FALSE(missing.status.usable);
  ASSERT_EQ(missing.status.errors.size(), 1u);
  EXPECT_EQ(missing.status.errors[0], "cannot open: No such file or directory");
  ReadResult directory = ReadTraceFile(dir.path(), &pool);
  EXPECT_FALSE(directory.status.usable);
  EXPECT_EQ(directory.status.errors[0], "not a regular file");
}

}  // namespace
}  // namespace trainprof::collector

namespace trainprof::collector {
namespace {

// KeepNvtx::kPhases keeps the phase domain's events only, while the summary has every range.
TEST(TraceReader, KeepPhasesKeepsOnlyPhaseEventsButSummarisesAll) {
  TraceBuilder b(10, 1, 0);
  int t = b.Thread(10);
  uint64_t phases = b.Domain(t, "trainprof");
  uint64_t torch = b.Domain(t, "torch");
  b.Push(t, 100, "forward", phases, 1);
  b.Push(t, 110, "conv", torch);
  b.Pop(t, 150, torch);
  b.Mark(t, 160, "loss");
  b.Start(t, 170, "epoch", 5);
  b.EndRange(t, 180, 5);
  b.Mark(t, 190, "batch ready", phases, 3);
  b.Pop(t, 200, phases);
  for (KeepNvtx keep : {KeepNvtx::kAll, KeepNvtx::kPhases}) {
    StringPool pool;
    ReadResult r = ReadTraceBytes(b.Build(), b.FileName(), &pool, {.keep = keep});
    ASSERT_TRUE(r.image);
    const TraceImage& img = *r.image;
    if (keep == KeepNvtx::kAll) {
      EXPECT_EQ(img.nvtx.size(), 8u);
    } else {
      ASSERT_EQ(img.nvtx.size(), 3u);
      for (const NvtxEvent& e : img.nvtx) EXPECT_EQ(pool.Get(e.domain), "trainprof");
      EXPECT_EQ(img.nvtx[1].kind(), NvtxKind::kMark);
      EXPECT_EQ(img.nvtx[2].time_ns, 200u);
    }
    // The same summary either way: 3 ranges, 2 marks.
    ASSERT_EQ(img.nvtx_summary.ranges.size(), 3u) << static_cast<int>(keep);
    uint64_t total = 0;
    for (const RangeSamples& s : img.nvtx_summary.ranges) total += s.durations.total();
    EXPECT_EQ(total, 100u + 40u + 10u);
    EXPECT_EQ(img.nvtx_summary.marks.size(), 2u);
    EXPECT_EQ(img.nvtx_summary.unbalanced, 0u);
  }
}

// Reading from disk goes a chunk at a time; the result equals reading the bytes in memory, and a
// file whose start is not a trace is rejected from its header without reading the rest.
TEST(TraceReader, FileAndMemoryReadsAgree) {
  TraceBuilder b(10, 1, 0);
  int t0 = b.Thread(10), t1 = b.Thread(11);
  for (int i = 0; i < 3000; ++i) {
    b.Push(i % 2 ? t1 : t0, 1'000 * i, "step");
    b.Pop(i % 2 ? t1 : t0, 1'000 * i + 10 + i % 7);
  }
  test::ScratchDir dir;
  const std::string path = b.WriteTo(dir.path());
  const std::vector<uint8_t> bytes = b.Build();
  StringPool p1, p2;
  ReadResult disk = ReadTraceFile(path, &p1), mem = ReadTraceBytes(bytes, path, &p2);
  ASSERT_TRUE(disk.image && mem.image);
  EXPECT_EQ(disk.status.errors, mem.status.errors);
  EXPECT_EQ(disk.status.bytes_read, mem.status.bytes_read);
  EXPECT_EQ(disk.image->records, mem.image->records);
  EXPECT_EQ(disk.image->nvtx.size(), 6000u);
  ASSERT_EQ(disk.image->nvtx_summary.ranges.size(), 1u);
  EXPECT_EQ(disk.image->nvtx_summary.ranges[0].durations.count(), 3000u);
  EXPECT_EQ(disk.image->nvtx_summary.ranges[0].durations.total(), mem.image->nvtx_summary.ranges[0].durations.total());

  // A large file that is not a trace: refused from its first bytes (a sparse 8 GiB file would
  // take seconds and gigabytes if it were read whole).
  const std::string big = dir / "pid-11.trace";
  {
    std::ofstream f(big, std::ios::binary);
    f << "not a trace";
  }
  std::filesystem::resize_file(big, uint64_t{8} << 30);
  ReadResult junk = ReadTraceFile(big, &p1);
  EXPECT_FALSE(junk.status.usable);
  ASSERT_EQ(junk.status.errors.size(), 1u);
  EXPECT_EQ(junk.status.errors[0], "not a trainprof trace (wrong magic)");
}

}  // namespace
}  // namespace trainprof::collector
