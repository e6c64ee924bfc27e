// The reader on damaged input: it reports, keeps what it can, and never crashes or hangs.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "collector/render/render.h"
#include "collector/report/report.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
namespace fmt = trainprof::format;
using Errors = std::vector<std::string>;  // FileStatus::errors, one line a problem

ReadResult ReadBytes(const std::vector<uint8_t>& bytes, StringPool* pool) {
  return ReadTraceBytes(bytes, "t.trace", pool);
}

// A small-layout trace with two threads, domains, strings and every record kind.
TraceBuilder Sample(uint32_t header_region = 1024, uint32_t chunk_size = 256) {
  TraceBuilder b(77, 1, 1'000);
  b.Layout(header_region, chunk_size).Env("RANK", "0");
  int t0 = b.Thread(77), t1 = b.Thread(78);
  b.ThreadName(t0, 77, "main");
  b.ThreadName(t1, 78, "pt_data_worker");
  uint64_t dom = b.Domain(t0, "torch");
  uint64_t now = 2'000;
  for (int i = 0; i < 30; ++i) {
    int t = i % 3 == 0 ? t1 : t0;
    b.Push(t, now, "step " + std::to_string(i % 4), i % 2 ? dom : 0);
    b.Mark(t, now + 5, "mark");
    b.Pop(t, now + 100 + i, i % 2 ? dom : 0);
    b.Start(t, now + 200, "io", 1000 + i);
    b.EndRange(t == t0 ? t1 : t0, now + 300 + i, 1000 + i);
    now += 1'000;
  }
  b.Fork(t0, now, 99);
  b.ChildExit(t0, now + 1, 99, fmt::EndKind::kExit, 0);
  b.ProcessEnd(t0, now + 2, fmt::EndKind::kExit, 0);
  return b;
}

// A small-layout trace with CUDA records: API calls on two threads (one never returns), GPU
// activity from the CUPTI drainer's thread (out of time order, one with an invalid timestamp),
// devices, status, drops, capture.
TraceBuilder CudaSample(uint32_t header_region = 1024, uint32_t chunk_size = 256) {
  TraceBuilder b(88, 1, 1'000);
  b.Layout(header_region, chunk_size);
  int t = b.Thread(88), u = b.Thread(89), g = b.Thread(90);
  b.GpuStatus(t, 1'500, fmt::GpuState::kOn, 0, 18, 12040, "");
  b.Device(g, 0, "NVIDIA H100 80GB HBM3");
  b.Context(g, 1, 0);
  uint64_t now = 2'000;
  for (uint64_t i = 0; i < 12; ++i) {
    const int th = i % 4 == 3 ? u : t;
    b.ApiCall(th, now, now + 3'000, i % 2 ? "cudaLaunchKernel_v7000" : "cudaMemcpyAsync_v3020", 100 + i, i == 5 ? 2 : 0);
    if (i % 2) {
      b.Kernel(g, {.start = now + 5'000, .end = now + 9'000, .name = "_ZN2at6native18elementwise_kernelILi128ELi4EEEviT_",
                   .correlation = 100 + i, .grid = {64, 1, 1}});
    } else {
      b.Memcpy(g, {.start = now + 4'000, .end = now + 4'500, .kind = fmt::MemcpyKind::kDtoH, .bytes = 4,
                   .correlation = 100 + i, .src = fmt::MemoryKind::kDevice, .dst = fmt::MemoryKind::kPageable});
    }
    now += 10'000;
  }
  b.Memset(g, {.start = 3'000, .end = 3'400, .bytes = 4096, .correlation = 99});  // earlier than the rest
  b.Kernel(g, {.start = 0, .end = 5'000, .name = "_Z3badv"});                      // invalid: counted
  b.Sync(g, 40'000, 41'000, fmt::SyncType::kStreamSynchronize, 200);
  b.Overhead(g, 50'000, 51'000, 1, 1, 88);
  b.ApiEnter(t, now, "cudaStreamSynchronize_v3020", 300);  // never returns
  b.GpuDropped(g, now + 1, 5);
  b.Capture(u, now + 2, false, fmt::CaptureReason::kDuration);
  b.GpuStatus(t, now + 3, fmt::GpuState::kFlushed, 0, 18, 12040, "flushed at exit");
  return b;
}

size_t RecordsOf(const ReadResult& r) { return r.image ? r.image->records : 0; }

TEST(TraceDamage, EmptyFile) {
  StringPool pool;
  ReadResult r = ReadBytes({}, &pool);
  EXPECT_FALSE(r.status.usable);
  EXPECT_FALSE(r.image);
  EXPECT_EQ(r.status.errors, Errors{"empty file (0 bytes)"});
  EXPECT_EQ(DescribeDamage(r.status), "empty file (0 bytes)");
}

TEST(TraceDamage, WrongMagic) {
  std::vector<uint8_t> bytes = Sample().Build();
  bytes[3] = 'X';
  StringPool pool;
  ReadResult r = ReadBytes(bytes, &pool);
  EXPECT_FALSE(r.image);
  EXPECT_EQ(r.status.errors, Errors{"not a trainprof trace (wrong magic)"});
  std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o'};
  EXPECT_EQ(ReadBytes(text, &pool).status.errors[0], "not a trainprof trace (wrong magic)");
}

TEST(TraceDamage, UnsupportedVersion) {
  TraceBuilder b = Sample();
  b.Version(fmt::kFormatVersion + 1);
  StringPool pool;
  ReadResult r = ReadBytes(b.Build(), &pool);
  EXPECT_FALSE(r.image);
  EXPECT_EQ(r.status.errors, Errors{"unsupported format version 6 (this trainprof reads versions 1 to 5)"});
  b.Version(0);
  EXPECT_EQ(ReadBytes(b.Build(), &pool).status.errors[0],
            "unsupported format version 0 (this trainprof reads versions 1 to 5)");
}

TEST(TraceDamage, HeaderTruncatedAtSeveralOffsets) {
  std::vector<uint8_t> full = Sample().Build();
  for (size_t cut : {1, 4, 8, 11, 12, 40, 100, 159}) {
    std::vector<uint8_t> bytes(full.begin(), full.begin() + cut);
    StringPool pool;
    ReadResult r = ReadBytes(bytes, &pool);
    EXPECT_FALSE(r.image) << cut;
    EXPECT_EQ(r.status.errors,
              Errors{"header truncated at byte " + std::to_string(cut) + " (the file header is 160 bytes)"})
        << cut;
    EXPECT_EQ(r.status.bytes_read, 0u);
    EXPECT_EQ(r.status.pid.has_value(), cut >= 28) << cut;  // pid is bytes 24..27
  }
}

TEST(TraceDamage, TruncatedInsideMetadataAndHeaderRegion) {
  TraceBuilder b = Sample();
  std::vector<uint8_t> full = b.Build();
  std::vector<uint8_t> bytes(full.begin(), full.begin() + 170);  // inside the metadata
  StringPool pool;
  ReadResult r = ReadBytes(bytes, &pool);
  ASSERT_TRUE(r.image);  // the header is enough to know the process
  EXPECT_TRUE(r.status.truncated);
  ASSERT_EQ(r.status.errors.size(), 1u);
  EXPECT_EQ(r.status.errors[0].rfind("header truncated at byte 170 (metadata ends at byte ", 0), 0u) << r.status.errors[0];
  EXPECT_EQ(r.image->pid, 77);

  bytes.assign(full.begin(), full.begin() + 1000);  // after the metadata, before chunk 0
  r = ReadBytes(bytes, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.image->host, "node0");
  EXPECT_EQ(r.status.errors, Errors{"file truncated at byte 1000, inside the header region (1024 bytes)"});
}

// The cuts CheckEveryCut tries: every byte within kNear bytes of a non-zero byte (the header, the
// metadata, every record and chunk header, and the start of each run of padding), and every
// kStride-th byte of the long zero runs between (the unused tail of a chunk, the header region's
// padding: 90 % of a default-layout file, where every cut reads the same), and the byte before, at
// and after every record's end. Quadratic reads made every byte of a 200 KiB file 7 minutes under
// ASan.
std::vector<size_t> CutsOf(const std::vector<uint8_t>& full, const std::vector<uint64_t>& ends) {
  constexpr size_t kNear = 64, kStride = 97;
  std::vector<bool> near(full.size() + 1, false);
  for (size_t i = 0; i < full.size(); ++i) {
    if (full[i] == 0) continue;
    const size_t lo = i >= kNear ? i - kNear : 0, hi = std::min(full.size(), i + kNear);
    for (size_t j = lo; j <= hi; ++j) near[j] = true;
  }
  for (uint64_t end : ends) {
    for (uint64_t j = end > 0 ? end - 1 : 0; j <= std::min<uint64_t>(end + 1, full.size()); ++j) near[j] = true;
  }
  std::vector<size_t> cuts;
  for (size_t cut = 0; cut <= full.size(); ++cut) {
    if (near[cut] || cut % kStride == 0 || cut == full.size()) cuts.push_back(cut);
  }
  return cuts;
}

// The core durability property: cut anywhere, the reader returns exactly the records that end
// before the cut (whole records only), the count never decreases as the cut moves on, and it
// never crashes.
void CheckEveryCut(const TraceBuilder& b) {
  const std::vector<uint8_t> full = b.Build();
  const std::vector<uint64_t> ends = b.RecordEnds();
  ASSERT_EQ(ends.size(), b.records());
  const std::vector<size_t> cuts = CutsOf(full, ends);
  ASSERT_GT(cuts.size(), ends.size());
  size_t previous = 0;
  for (size_t cut : cuts) {
    StringPool pool;
    ReadResult r = ReadTraceBytes(std::span<const uint8_t>(full.data(), cut), "cut.trace", &pool);
    const size_t expected = static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin());
    ASSERT_EQ(RecordsOf(r), expected) << "cut at " << cut;
    ASSERT_GE(RecordsOf(r), previous) << "cut at " << cut;
    previous = RecordsOf(r);
    if (cut < full.size()) {
      ASSERT_TRUE(r.status.damaged()) << "cut at " << cut;
      if (r.image) {
        ASSERT_TRUE(r.status.truncated) << "cut at " << cut;
      }
      ASSERT_LE(r.status.bytes_read, cut);
    } else {
      ASSERT_FALSE(r.status.damaged()) << r.status.errors[0];
      ASSERT_EQ(r.status.bytes_read, full.size());
    }
  }
  EXPECT_EQ(previous, b.records());
}

TEST(TraceDamage, TruncatedAtEveryByteSmallChunks) { CheckEveryCut(Sample(1024, 256)); }

TEST(TraceDamage, TruncatedAtEveryByteDefaultLayout) {
  CheckEveryCut(Sample(fmt::kHeaderRegionSize, fmt::kDefaultChunkSize));
}

TEST(TraceDamage, TruncatedAtEveryByteWithCudaRecords) { CheckEveryCut(CudaSample(1024, 256)); }

TEST(TraceDamage, TruncatedAtEveryByteWithCudaRecordsDefaultLayout) {
  CheckEveryCut(CudaSample(fmt::kHeaderRegionSize, fmt::kDefaultChunkSize));
}

// What a cut leaves of CUDA data: the whole records before the cut, a call whose exit was cut off
// kept as never returned, and never an invalid time.
TEST(TraceDamage, CutCudaTraceKeepsWholeRecords) {
  TraceBuilder b = CudaSample(1024, 256);
  const std::vector<uint8_t> full = b.Build();
  StringPool pool;
  ReadResult whole = ReadBytes(full, &pool);
  ASSERT_TRUE(whole.image);
  ASSERT_TRUE(whole.status.errors.empty()) << whole.status.errors[0];
  const CudaData& w = whole.image->cuda;
  EXPECT_EQ(w.calls.size(), 13u);
  EXPECT_EQ(w.kernels.size(), 6u);
  EXPECT_EQ(w.memcpys.size(), 6u);
  EXPECT_EQ(w.memsets.size(), 1u);
  EXPECT_EQ(w.invalid_timestamps, 1u);
  EXPECT_EQ(w.records_dropped, 5u);
  EXPECT_EQ(std::count_if(w.calls.begin(), w.calls.end(), [](const CudaCall& c) { return !c.returned; }), 1);
  for (size_t cut = 1024; cut < full.size(); cut += 7) {
    ReadResult r = ReadTraceBytes(std::span<const uint8_t>(full.data(), cut), "cut.trace", &pool);
    ASSERT_TRUE(r.image) << cut;
    const CudaData& c = r.image->cuda;
    ASSERT_LE(c.calls.size(), w.calls.size()) << cut;
    ASSERT_LE(c.kernels.size(), w.kernels.size()) << cut;
    ASSERT_LE(c.memcpys.size(), w.memcpys.size()) << cut;
    for (const GpuKernel& k : c.kernels) ASSERT_TRUE(k.start_ns > 0 && k.end_ns >= k.start_ns) << cut;
    for (const CudaCall& call : c.calls) ASSERT_GE(call.end_ns, call.begin_ns) << cut;
  }
}

// A CUDA record with an over-long varint inside committed bytes is damage; the records before it
// stay.
TEST(TraceDamage, MalformedCudaRecord) {
  TraceBuilder b(5, 1, 0);
  int g = b.Thread(5);
  b.Kernel(g, {.start = 10, .end = 20, .name = "_Z1kv"});
  std::vector<uint8_t> bad = {static_cast<uint8_t>(fmt::RecordTag::kGpuMemcpy), 2, 4};
  bad.insert(bad.end(), 11, 0xFF);
  b.Raw(g, bad);
  StringPool pool;
  ReadResult r = ReadBytes(b.Build(), &pool);
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.status.errors.size(), 1u);
  EXPECT_EQ(r.status.errors[0].rfind("malformed record (tag 51) at byte ", 0), 0u) << r.status.errors[0];
  EXPECT_EQ(r.image->cuda.kernels.size(), 1u);
  EXPECT_TRUE(r.image->cuda.memcpys.empty());
}

TEST(TraceDamage, TruncatedChunkIsNamed) {
  TraceBuilder b = Sample(1024, 256);
  std::vector<uint8_t> full = b.Build();
  const size_t cut = 1024 + 256 + 64 + 20;  // 20 bytes into chunk 1's records
  std::vector<uint8_t> bytes(full.begin(), full.begin() + cut);
  StringPool pool;
  ReadResult r = ReadBytes(bytes, &pool);
  ASSERT_TRUE(r.image);
  ASSERT_GE(r.status.errors.size(), 1u);
  EXPECT_EQ(r.status.errors[0].rfind("chunk 1 truncated at byte " + std::to_string(cut) + " (its records end at byte ", 0), 0u)
      << r.status.errors[0];
  EXPECT_TRUE(r.status.truncated);
  // Cut between whole records: every byte it has is usable.
  EXPECT_NE(DescribeDamage(r.status).find(" (all " + std::to_string(cut) + " bytes it has usable)"), std::string::npos)
      << DescribeDamage(r.status);
}

TEST(TraceDamage, MissingClaimedChunks) {
  TraceBuilder b = Sample(1024, 256);
  std::vector<uint8_t> full = b.Build();
  const size_t cut = 1024 + 2 * 256;  // exactly at a slot boundary
  std::vector<uint8_t> bytes(full.begin(), full.begin() + cut);
  StringPool pool;
  ReadResult r = ReadBytes(bytes, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_TRUE(r.status.truncated);
  EXPECT_EQ(r.status.errors[0], "file truncated at byte 1536 (" + std::to_string(b.chunks()) +
                                    " chunks claimed end at byte " + std::to_string(full.size()) + ")");
  // Every byte it has is usable: said so, not "1536 of 1536 bytes usable", which reads as no loss.
  const std::string said = DescribeDamage(r.status);
  EXPECT_EQ(said.substr(said.find(" (all ")), " (all 1536 bytes it has usable)") << said;
}

TEST(TraceDamage, OneMissingClaimedChunkIsSingular) {
  TraceBuilder b(5, 1, 0);
  b.Layout(1024, 256).ChunksClaimed(1);
  std::vector<uint8_t> bytes = b.Build();  // the header region only: no chunk yet
  ASSERT_EQ(bytes.size(), 1024u);
  StringPool pool;
  ReadResult r = ReadBytes(bytes, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.errors, Errors{"file truncated at byte 1024 (1 chunk claimed ends at byte 1280)"});
}

TEST(TraceDamage, CommittedBeyondChunk) {
  TraceBuilder b(5, 1, 0);
  b.Layout(1024, 256);
  int t = b.Thread(5);
  b.Push(t, 10, "a");
  b.Pop(t, 20);
  b.NewChunk(t);
  b.Mark(t, 30, "m");
  b.SetCommitted(0, 100'000);
  StringPool pool;
  ReadResult r = ReadBytes(b.Build(), &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.errors, Errors{"chunk 0: committed count 100000 beyond chunk size 256 (at byte 1048)"});
  EXPECT_EQ(r.image->records, b.records());  // read up to the chunk's end: every record is there
  EXPECT_FALSE(r.status.truncated);
}

TEST(TraceDamage, BadRecordTagKeepsEarlierRecordsAndOtherChunks) {
  TraceBuilder b(5, 1, 0);
  b.Layout(1024, 256);
  int t = b.Thread(5), u = b.Thread(6);
  b.Mark(t, 10, "a");           // kString(3+1) + kMark(5): 9 bytes
  b.Raw(t, {200, 1, 2, 3});     // at byte 1024 + 64 + 9
  b.Mark(t, 20, "a");
  b.Mark(u, 30, "b");
  StringPool pool;
  ReadResult r = ReadBytes(b.Build(), &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.errors, Errors{"bad record tag 200 at byte 1097"});
  ASSERT_EQ(r.image->nvtx.size(), 2u);  // thread t's first mark, thread u's mark
  EXPECT_EQ(r.image->nvtx[0].time_ns, 10u);
  EXPECT_EQ(r.image->nvtx[1].time_ns, 30u);
  EXPECT_EQ(r.status.bytes_read, r.status.bytes - (4 + 5));  // the bad record and the mark after it
}

TEST(TraceDamage, MalformedVarintInsideCommittedBytes) {
  TraceBuilder b(5, 1, 0);
  int t = b.Thread(5);
  b.Mark(t, 10, "a");
  std::vector<uint8_t> bad = {static_cast<uint8_t>(fmt::RecordTag::kRangePop)};
  bad.insert(bad.end(), 11, 0xFF);  // an 11-byte varint
  b.Raw(t, bad);
  StringPool pool;
  ReadResult r = ReadBytes(b.Build(), &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.errors, Errors{"malformed record (tag 2) at byte " + std::to_string(fmt::kHeaderRegionSize + 64 + 9)});
  EXPECT_EQ(r.image->records, 2u);
}

TEST(TraceDamage, HugeStringLengths) {
  TraceBuilder b(5, 1, 0);
  int t = b.Thread(5), u = b.Thread(6);
  b.RawFields(t, static_cast<uint8_t>(fmt::RecordTag::kString), {9, 1ull << 40});  // slot 0
  b.Mark(u, 5, "ok");
  b.Mark(t, 10, "lost");
  StringPool pool;
  ReadResult r = ReadBytes(b.Build(), &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.errors, Errors{"string of 1099511627776 bytes at byte " + std::to_string(fmt::kHeaderRegionSize + 64) +
                                    " (longer than kMaxStringBytes 4096)"});
  EXPECT_EQ(r.image->records, 2u);  // thread u's string and mark

  // One byte over the limit, with the bytes really there: still refused.
  TraceBuilder c(5, 1, 0);
  int tc = c.Thread(5);
  std::vector<uint8_t> rec = {static_cast<uint8_t>(fmt::RecordTag::kString), 1};
  uint8_t len[10];
  rec.insert(rec.end(), len, fmt::PutVarint(len, fmt::kMaxStringBytes + 1));
  rec.insert(rec.end(), fmt::kMaxStringBytes + 1, 'x');
  c.Raw(tc, rec);
  r = ReadBytes(c.Build(), &pool);
  ASSERT_EQ(r.status.errors.size(), 1u);
  EXPECT_NE(r.status.errors[0].find("longer than kMaxStringBytes"), std::string::npos);

  // A metadata length field of 4 GiB.
  TraceBuilder d(5, 1, 0);
  d.RawMeta(static_cast<uint16_t>(fmt::MetaKey::kHost), "h", 0xFFFFFFFFu);
  r = ReadBytes(d.Build(), &pool);
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.status.errors.size(), 1u);
  EXPECT_NE(r.status.errors[0].find("runs past the metadata (length 4294967295)"), std::string::npos);
  EXPECT_EQ(r.image->host, "node0");  // entries before it were read
}

// A time delta that would wrap the clock past 2^64 ns is damage: the chunk is read up to it.
TEST(TraceDamage, TimeOverflowIsDamage) {
  TraceBuilder b(7);
  int t = b.Thread(7);
  b.Push(t, b.start_ns() + 10, "a");
  b.Pop(t, b.start_ns() + 20);
  for (int i = 0; i < 3; ++i) b.RawFields(t, static_cast<uint8_t>(fmt::RecordTag::kRangePop), {(1ull << 63) + 5, 0});
  StringPool pool;
  ReadResult r = ReadTraceBytes(b.Build(), "t.trace", &pool);
  ASSERT_TRUE(r.image);
  ASSERT_EQ(r.status.errors.size(), 1u);
  EXPECT_EQ(r.status.errors[0].rfind("time overflow (delta 9223372036854775813 ns) at byte ", 0), 0u) << r.status.errors[0];
  EXPECT_EQ(r.image->records, 4u);  // "a" defined, push, pop, the first huge pop; not the one that wraps
  EXPECT_EQ(r.image->nvtx_summary.ranges.size(), 2u);  // "a" and the pop without push
}

TEST(TraceDamage, BadChunkMagicSkipsOnlyThatChunk) {
  TraceBuilder b(5, 1, 0);
  b.Layout(1024, 256);
  int t = b.Thread(5);
  b.Mark(t, 10, "a");
  b.NewChunk(t);
  b.Mark(t, 20, "a");
  std::vector<uint8_t> bytes = b.Build();
  bytes[1024] ^= 0x40;
  StringPool pool;
  ReadResult r = ReadBytes(bytes, &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.errors[0], "chunk 0: bad chunk magic 0x4b435014 at byte 1024");
  ASSERT_EQ(r.image->nvtx.size(), 1u);
  EXPECT_EQ(r.image->nvtx[0].time_ns, 20u);
}

TEST(TraceDamage, ImpossibleHeaderFields) {
  StringPool pool;
  TraceBuilder b(5, 1, 0);
  b.Layout(1024, 0);
  EXPECT_EQ(ReadBytes(b.Build(), &pool).status.errors[0], "bad header: chunk_size 0 (at byte 16)");
  b.Layout(1024, 256);
  std::vector<uint8_t> bytes = b.Build();
  const uint32_t region = 100;  // smaller than the file header itself
  std::memcpy(bytes.data() + offsetof(fmt::FileHeader, header_region_size), &region, 4);
  ReadResult r = ReadBytes(bytes, &pool);
  EXPECT_FALSE(r.image);
  EXPECT_EQ(r.status.errors[0], "bad header: header_region_size 100 (at byte 12)");
}

// Header clock values no writer takes (0xFF bytes; an end before the start): each said, naming
// the field and its byte, and left unknown, so that no wall time or export time is years off.
TEST(TraceDamage, HeaderClocksNoWriterTakesAreSaid) {
  auto read = [](TraceBuilder& b, size_t offset, uint64_t value) {
    std::vector<uint8_t> bytes = b.Build();
    std::memcpy(bytes.data() + offset, &value, sizeof value);
    StringPool pool;
    return ReadBytes(bytes, &pool);
  };
  TraceBuilder b(5, 1, 1'000'000);
  b.HeaderEnd(fmt::EndKind::kExit, 0, 9'000'000);
  int t = b.Thread(5);
  b.Push(t, 2'000'000, "a");
  b.Pop(t, 3'000'000);
  const size_t realtime_at = offsetof(fmt::FileHeader, start_realtime_ns);
  ReadResult r = read(b, realtime_at, UINT64_MAX);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.errors, Errors{"bad header: start_realtime_ns 18446744073709551615 is no wall-clock time, the process "
                                    "is placed by its host's other processes (at byte " + std::to_string(realtime_at) + ")"});
  EXPECT_EQ(r.image->start_realtime_ns, 0u);
  EXPECT_EQ(r.image->end_ns, 9'000'000u);  // the rest of the header as written

  const size_t end_at = offsetof(fmt::FileHeader, end_monotonic_ns);
  r = read(b, end_at, UINT64_MAX);
  EXPECT_EQ(r.status.errors, Errors{"bad header: end_monotonic_ns 18446744073709551615 is no CLOCK_MONOTONIC time, the end "
                                    "is taken from the records (at byte " + std::to_string(end_at) + ")"});
  EXPECT_EQ(r.image->end_ns, 0u);
  r = read(b, end_at, 999'999);
  EXPECT_EQ(r.status.errors, Errors{"bad header: end_monotonic_ns 999999 is before the start (1000000), the end is "
                                    "taken from the records (at byte " + std::to_string(end_at) + ")"});

  const size_t start_at = offsetof(fmt::FileHeader, start_monotonic_ns);
  r = read(b, start_at, UINT64_MAX);
  EXPECT_EQ(r.status.errors, Errors{"bad header: start_monotonic_ns 18446744073709551615 is no CLOCK_MONOTONIC time, the "
                                    "start is taken from the first record (at byte " + std::to_string(start_at) + ")"});
  EXPECT_EQ(r.image->start_ns, 2'000'000u);
  EXPECT_EQ(r.image->end_ns, 9'000'000u);

  // In a report: the process's wall time is its records' and end's, not 5124093 h.
  std::vector<uint8_t> bytes = b.Build();
  const uint64_t ones = UINT64_MAX;
  std::memcpy(bytes.data() + end_at, &ones, sizeof ones);
  Trace trace = LoadTraceBytes({{"pid-5.trace", bytes}});
  ASSERT_EQ(trace.processes.size(), 1u);
  EXPECT_EQ(trace.processes[0].wall_ns, 2'000'000u);  // start to the last record
}

// Header clocks that pass the 2^62 bound but disagree with the records (found by a helper): a
// start after the first record, an end away from the PROCESS_END record written with it.
TEST(TraceDamage, HeaderClocksThatDisagreeWithTheRecordsAreSaid) {
  TraceBuilder b(5, 1, 1'000'000);
  b.HeaderEnd(fmt::EndKind::kExit, 0, 9'000'000);
  int t = b.Thread(5);
  b.Push(t, 2'000'000, "a");
  b.Pop(t, 3'000'000);
  b.ProcessEnd(t, 9'000'000, fmt::EndKind::kExit, 0);
  auto read = [&](size_t offset, uint64_t value) {
    std::vector<uint8_t> bytes = b.Build();
    std::memcpy(bytes.data() + offset, &value, sizeof value);
    StringPool pool;
    return ReadBytes(bytes, &pool);
  };
  StringPool pool;
  EXPECT_TRUE(ReadBytes(b.Build(), &pool).status.errors.empty());
  const size_t start_at = offsetof(fmt::FileHeader, start_monotonic_ns), end_at = offsetof(fmt::FileHeader, end_monotonic_ns);
  // The start an hour later: after the first record, not blamed on the end.
  ReadResult r = read(start_at, 3'600'000'000'000ull);
  EXPECT_EQ(r.status.errors, Errors{"bad header: start_monotonic_ns 3600000000000 is after the first record (2000000), the "
                                    "start is taken from the first record (at byte " + std::to_string(start_at) + ")"});
  EXPECT_EQ(r.image->start_ns, 2'000'000u);
  EXPECT_EQ(r.image->end_ns, 9'000'000u);
  EXPECT_EQ(r.image->header_start_ns, 3'600'000'000'000ull);
  // The end 10 h later than the PROCESS_END record.
  r = read(end_at, 9'000'000 + 36'000'000'000'000ull);
  EXPECT_EQ(r.status.errors, Errors{"bad header: end_monotonic_ns 36000009000000 is not the PROCESS_END record's time "
                                    "(9000000), the end is taken from the records (at byte " + std::to_string(end_at) + ")"});
  Trace trace = LoadTraceBytes({{"pid-5.trace", [&] {
                                  std::vector<uint8_t> bytes = b.Build();
                                  const uint64_t v = 9'000'000 + 36'000'000'000'000ull;
                                  std::memcpy(bytes.data() + end_at, &v, sizeof v);
                                  return bytes;
                                }()}});
  ASSERT_EQ(trace.processes.size(), 1u);
  EXPECT_EQ(trace.processes[0].wall_ns, 8'000'000u);  // to the PROCESS_END record
}

// A process whose wall-clock start is damaged, read alone: its child known only from the fork
// record took the parent's unknown realtime (0) plus the fork's offset, 115 ms after 1970, and
// the report placed the whole run there ("from 1970-01-01 00:00:00.115 UTC").
TEST(TraceDamage, AnUnknownWallClockStartIsSaidNotPlacedIn1970) {
  TraceBuilder b(5, 1, 1'000'000'000);
  b.Flags(fmt::kFlagFollowChildren).StartRealtime(UINT64_MAX).HeaderEnd(fmt::EndKind::kExit, 0, 1'200'000'000);
  int t = b.Thread(5);
  b.Mark(t, 1'010'000'000, "m");
  b.Fork(t, 1'115'000'000, 99);
  b.ChildExit(t, 1'150'000'000, 99, fmt::EndKind::kExit, 0);
  Trace trace = LoadTraceBytes({{"pid-5.trace", b.Build()}});
  ASSERT_EQ(trace.processes.size(), 2u);
  for (const Process& p : trace.processes) EXPECT_EQ(p.start_realtime_ns, 0u) << p.pid;
  const Report report = Analyze(trace, {true, 0});
  EXPECT_EQ(report.start_realtime_ns, 0u);
  EXPECT_EQ(report.span_ns, 200'000'000u);  // on CLOCK_MONOTONIC
  const std::string text = RenderText(report);
  EXPECT_NE(text.find(", 200 ms (wall-clock start unknown)\n"), std::string::npos) << text.substr(0, 300);
  EXPECT_EQ(text.find("1970"), std::string::npos);
}

// A thread's chunk 0 zeroed (its STRING definitions with it): before, only the names it defined
// showing as "<string #N>" hinted at it. The thread's chunk numbers start at 1: said.
TEST(TraceDamage, ChunksMissingFromAThreadsSequenceAreSaid) {
  TraceBuilder b(5, 1, 0);
  b.Layout(1024, 256);
  int t = b.Thread(5), u = b.Thread(6);
  b.Mark(t, 10, "a");
  b.Mark(u, 11, "b");
  b.NewChunk(t);
  b.Mark(t, 20, "a");
  b.NewChunk(t);
  b.Mark(t, 30, "a");
  std::vector<uint8_t> bytes = b.Build();
  std::fill(bytes.begin() + 1024, bytes.begin() + 1024 + 256, 0);  // chunk 0: thread t's number 0
  StringPool pool;
  ReadResult r = ReadBytes(bytes, &pool);
  ASSERT_TRUE(r.image);
  ASSERT_FALSE(r.status.errors.empty());
  EXPECT_EQ(r.status.errors[0], "1 chunk missing from their thread's sequence (zeroed or overwritten), with the records and "
                                "definitions they held: thread 0 (tid 5) number 0");
  EXPECT_EQ(r.status.losses[Loss::chunk_errors], 1u);

  // Numbers 1 and 2 of a thread with 4 chunks (a gap in the middle), and a bad chunk magic
  // elsewhere: the magic is said, and the gap too (2 missing, 1 explained).
  TraceBuilder c(5, 1, 0);
  c.Layout(1024, 256);
  int tc = c.Thread(5);
  for (int i = 0; i < 4; ++i) {
    c.Mark(tc, 10 + i, "m");
    c.NewChunk(tc);
  }
  bytes = c.Build();
  std::fill(bytes.begin() + 1024 + 256, bytes.begin() + 1024 + 3 * 256, 0);
  r = ReadBytes(bytes, &pool);
  EXPECT_EQ(r.status.errors, Errors{"2 chunks missing from their thread's sequence (zeroed or overwritten), with the records "
                                    "and definitions they held: thread 0 (tid 5) numbers 1-2"});
  // A chunk with a bad magic is said once, not again as a number missing.
  bytes = c.Build();
  bytes[1024 + 256] ^= 0x40;
  r = ReadBytes(bytes, &pool);
  ASSERT_EQ(r.status.errors.size(), 1u);
  EXPECT_EQ(r.status.errors[0].rfind("chunk 1: bad chunk magic", 0), 0u) << r.status.errors[0];

  // A copy of chunk 1 in a fifth slot: said, and read once (its marks not counted twice).
  c.ChunksClaimed(5);
  bytes = c.Build();
  bytes.insert(bytes.end(), bytes.begin() + 1024 + 256, bytes.begin() + 1024 + 2 * 256);
  r = ReadBytes(bytes, &pool);
  EXPECT_EQ(r.status.errors, Errors{"chunks 1 and 4 are both sequence 1 of thread 0: chunk 4 not read"});
  EXPECT_EQ(r.image->records, 5u);

  // A sequence number past every slot of the file is a damaged number, not lost chunks.
  c.ChunksClaimed(4);
  bytes = c.Build();
  const uint32_t huge = 0xFFFFFFFFu;
  std::memcpy(bytes.data() + 1024 + 2 * 256 + offsetof(fmt::ChunkHeader, thread_seq), &huge, 4);
  r = ReadBytes(bytes, &pool);
  EXPECT_EQ(r.status.errors, Errors{"chunk 2: thread_seq 4294967295 is past the file's 4 chunks (at byte " +
                                    std::to_string(1024 + 2 * 256 + offsetof(fmt::ChunkHeader, thread_seq)) + ")"});
  EXPECT_EQ(r.image->records, 5u);  // every chunk read
}

// PROCESS_ENV records naming 200,000 different variables (ids no STRING defines: "<string #N>"),
// then one that sets a header variable again. Each name was once looked up among all the
// earlier ones: quadratic, minutes for a 1 MiB file (tests/fuzz/regressions/reader-timeout-*).
TEST(TraceDamage, ManyProcessEnvRecordsStayLinear) {
  TraceBuilder b(5, 1, 0);
  b.Env("RANK", "0");
  const int t = b.Thread(5);
  constexpr uint64_t kNames = 200'000;
  for (uint64_t n = 1; n <= kNames; ++n) {
    b.RawFields(t, static_cast<uint8_t>(fmt::RecordTag::kProcessEnv), {1'000'000 + n});
  }
  b.ProcessEnv(t, "RANK=3");
  StringPool pool;
  const auto start = std::chrono::steady_clock::now();
  ReadResult r = ReadBytes(b.Build(), &pool);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));  // linear: well under 1 s
  ASSERT_TRUE(r.image);
  // The first 65536 undefined ids keep their "<string #N>"; further ones (a forged file: memory
  // would grow with every record) share "<undefined strings>", and the file counts as damaged.
  EXPECT_LE(r.image->env.size(), 1 + 65'536 + 1);
  EXPECT_EQ(r.image->env[1].first, "<string #1000001>");
  ASSERT_FALSE(r.status.errors.empty());
  EXPECT_NE(r.status.errors.front().find("more than 65536 string ids used before any definition"), std::string::npos)
      << r.status.errors.front();
  ASSERT_NE(r.image->Env("RANK"), nullptr);
  EXPECT_EQ(*r.image->Env("RANK"), "3");
}

// Seeded mutations: bit flips anywhere (biased to the header and chunk headers), sometimes with a
// cut. Whatever the reader returns must go through the whole report without crashing.
void MutateAndReport(const std::vector<uint8_t>& full, int rounds, uint64_t seed) {
  std::mt19937_64 rng(seed);
  size_t usable = 0;
  for (int round = 0; round < rounds; ++round) {
    std::vector<uint8_t> bytes = full;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < flips; ++i) {
      size_t pos;
      switch (rng() % 4) {
        case 0: pos = rng() % 160; break;                          // file header
        case 1: pos = 1024 + (rng() % 8) * 256 + rng() % 64; break; // a chunk header
        default: pos = rng() % bytes.size(); break;
      }
      if (pos >= bytes.size()) continue;
      if (rng() % 3 == 0) {
        bytes[pos] = static_cast<uint8_t>(rng());
      } else {
        bytes[pos] ^= static_cast<uint8_t>(1u << (rng() % 8));
      }
    }
    if (rng() % 5 == 0) bytes.resize(rng() % bytes.size());

    Trace trace;
    ReadResult r = ReadTraceBytes(bytes, "fuzz.trace", &trace.strings);
    ASSERT_LE(r.status.bytes_read, bytes.size());
    ASSERT_LE(RecordsOf(r), bytes.size());
    std::vector<TraceImage> images;
    if (r.image) {
      ++usable;
      images.push_back(std::move(*r.image));
    }
    trace.files.push_back(r.status);
    trace.processes = BuildProcesses(std::move(images), trace.strings);
    Report report = Analyze(trace, {true, 0});
    ASSERT_FALSE(RenderText(report).empty());
    ASSERT_FALSE(RenderJson(report).empty());
    ASSERT_FALSE(RenderCsv(report).empty());
  }
  EXPECT_GT(usable, static_cast<size_t>(rounds) / 20);  // the mutations did not all just break the magic
  // A hang is ctest's timeout to catch, not a wall-clock bound here: the TSan build of these -O0
  // tests on a loaded 2-core machine took 65-89 s for what takes 2 s in the normal build.
}

// Rounds of the two tests below. The TSan build runs a tenth: one thread reads and reports each
// mutated file, so there is no race for the mutations to find, and 2000 rounds took 49 s and 39 s
// there (the normal and the ASan+UBSan builds, where damage shows, run them all).
#if defined(__SANITIZE_THREAD__)  // GCC's -fsanitize=thread
#define TRAINPROF_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)  // clang's
#define TRAINPROF_TSAN 1
#endif
#endif
#ifdef TRAINPROF_TSAN
constexpr int kMutationRounds = 200;
#else
constexpr int kMutationRounds = 2000;
#endif

TEST(TraceDamage, RandomMutationsNeverCrashOrHang) {
  MutateAndReport(Sample(1024, 256).Build(), kMutationRounds, 20240501);
}

TEST(TraceDamage, RandomMutationsOfCudaRecordsNeverCrashOrHang) {
  MutateAndReport(CudaSample(1024, 256).Build(), kMutationRounds, 20260101);
}

}  // namespace
}  // namespace trainprof::collector
