// The windowed CUDA read (read/cuda_chunk_index.h): a window's calls, kernels, copies and memsets
// decoded again from the chunks that hold them are those SliceWindow takes out of the whole read,
// field for field and in the same order, for traces written the way the recorder writes them
// (calls across chunks, nested driver calls, stacks after exits, GPU records queued behind their
// launches in a drainer thread's chunks), and damaged ones.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <random>
#include <stdexcept>
#include <tuple>

#include "collector/model/cuda_calls.h"
#include "collector/model/cuda_window.h"
#include "collector/read/cuda_chunk_index.h"
#include "collector/read/trace_reader.h"
#include "collector/stats/kernel_launches.h"
#include "test_util.h"
#include "trace_builder.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
namespace fmt = trainprof::format;

template <typename T>
void ExpectSameRecords(const std::vector<T>& want, const std::vector<T>& got, const std::string& where) {
  ASSERT_EQ(got.size(), want.size()) << where;
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(got[i] == want[i]) << where << ", record " << i;
}

// Every window of every cut of the image's records, read again, against SliceWindow of the
// whole read. Returns how many windows it compared.
size_t ExpectWindowsAsSliced(const TraceImage& img, uint64_t process_end_ns, const std::string& what) {
  EXPECT_NE(img.cuda_index, nullptr) << what;
  if (img.cuda_index == nullptr) return 0;
  std::vector<uint64_t> starts;
  AppendStarts(img.cuda, &starts);
  size_t compared = 0;
  for (size_t budget : {1, 2, 5, 17, 100000}) {
    for (const TimeWindow& w : CutWindows(starts, budget)) {
      const std::string where = what + ", budget " + std::to_string(budget) + ", window [" +
                                std::to_string(w.begin_ns) + ", " + std::to_string(w.end_ns) + ")";
      const CudaData want = SliceWindow(img.cuda, w, process_end_ns);
      CudaData got;
      const std::string error = ReadCudaWindow(*img.cuda_index, w, process_end_ns, &got);
      EXPECT_EQ(error, "") << where;
      ExpectSameRecords(want.calls, got.calls, where + ", calls");
      ExpectSameRecords(want.kernels, got.kernels, where + ", kernels");
      ExpectSameRecords(want.memcpys, got.memcpys, where + ", memcpys");
      ExpectSameRecords(want.memsets, got.memsets, where + ", memsets");
      ++compared;
    }
  }
  return compared;
}

ReadResult ReadIndexed(const std::vector<uint8_t>& bytes, StringPool* strings) {
  return ReadTraceBytes(bytes, "test.trace", strings, {.cuda_index = true});
}

// A training process as the recorder writes it, at random: two host threads launching kernels
// and copies (runtime calls with the driver call inside, an EVENT_STACK after some exits, NVTX
// ranges between them, a call that never returns, a correlation id reused while open, calls
// whose exit lands in a later chunk) and the thread that drains CUPTI's buffers, writing the GPU
// records in batches, out of time order, some long enough to span many windows.
TraceBuilder RandomProcess(uint64_t seed, uint64_t* end_ns) {
  std::mt19937_64 rng(seed);
  auto pick = [&](uint64_t n) { return rng() % n; };
  TraceBuilder b(100 + static_cast<int32_t>(seed % 1000));
  b.Layout(4096, 256 + static_cast<uint32_t>(pick(3)) * 128);  // small chunks: many of them
  const int host[2] = {b.Thread(100), b.Thread(101)};
  const int drainer = b.Thread(999);
  uint64_t stacks[3];
  for (uint64_t i = 0; i < 3; ++i) stacks[i] = b.Stack(host[i % 2], {0x401000 + 16 * i}, {{"train_step", "train.py", 10 + i}});
  uint64_t correlation = 1;
  struct Gpu {
    uint64_t start, end, correlation;
    int kind;  // 0 kernel, 1 memcpy, 2 memset
  };
  std::vector<Gpu> gpu;
  uint64_t last = 0;
  for (int h = 0; h < 2; ++h) {
    const int th = host[h];
    uint64_t t = 1'000'000'000 + pick(5'000);
    const int calls = 20 + static_cast<int>(pick(60));
    for (int i = 0; i < calls; ++i) {
      t += 1 + pick(2'000);
      if (pick(3) == 0) {
        b.Push(th, t, "forward");
        t += 1 + pick(300);
        b.Pop(th, t);
      }
      const uint64_t corr = correlation++;
      const uint64_t enter = t;
      b.ApiEnter(th, t, pick(4) == 0 ? "cudaMemcpyAsync_v3020" : "cudaLaunchKernel_v7000", corr, fmt::CudaApi::kRuntime,
                 static_cast<uint32_t>(pick(300)));
      if (pick(8) == 0) b.NewChunk(th);  // the exit lands in the next chunk
      if (pick(2) == 0) {                 // the driver call inside
        const uint64_t inner = correlation++;
        t += pick(3);  // sometimes at the same nanosecond
        b.ApiEnter(th, t, "cuLaunchKernel", inner, fmt::CudaApi::kDriver, 307);
        t += pick(400);
        b.ApiExit(th, t, inner, pick(10) == 0 ? 700 : 0);
      }
      if (i == calls / 2 && h == 0) continue;  // never returns (the process ended in it)
      if (pick(30) == 0) {  // the id comes again while the call is open: this one never returns
        t += 1 + pick(50);
        b.ApiEnter(th, t, "cudaStreamSynchronize", corr, fmt::CudaApi::kRuntime, 131);
      }
      t += pick(1'000);
      b.ApiExit(th, t, corr, 0);
      if (pick(3) == 0) b.EventStack(th, stacks[pick(3)]);
      const int kind = pick(5) == 0 ? 1 : pick(9) == 0 ? 2 : 0;
      const uint64_t start = enter + pick(40'000) - (pick(10) == 0 ? pick(50) : 0);  // a few before the call
      const uint64_t len = pick(40) == 0 ? 200'000 + pick(100'000) : pick(3'000);
      gpu.push_back({start, start + len, corr, kind});
      if (pick(20) == 0) gpu.push_back({start + 5, start + 5 + pick(100), corr, 0});  // a second kernel (a graph)
    }
    last = std::max(last, t);
  }
  // The drainer writes the records in buffers: each buffer sorted, buffers in random order.
  std::shuffle(gpu.begin(), gpu.end(), rng);
  for (size_t i = 0; i < gpu.size(); ++i) {
    const Gpu& g = gpu[i];
    const uint32_t stream = 7 + static_cast<uint32_t>(pick(3));
    if (g.kind == 0) {
      TraceBuilder::KernelSpec k{.start = g.start, .end = g.end, .name = pick(2) ? "_Z4gemmv" : "_Z4reluv",
                                 .correlation = g.correlation, .stream = stream};
      k.grid[0] = 1 + static_cast<uint32_t>(pick(4));
      b.Kernel(drainer, k);
    } else if (g.kind == 1) {
      b.Memcpy(drainer, {.start = g.start, .end = g.end, .kind = pick(2) ? fmt::MemcpyKind::kHtoD : fmt::MemcpyKind::kDtoH,
                         .bytes = 4096 * (1 + pick(100)), .correlation = g.correlation, .stream = stream});
    } else {
      b.Memset(drainer, {.start = g.start, .end = g.end, .bytes = 64, .correlation = g.correlation, .stream = stream});
    }
  }
  *end_ns = last + 1'000'000;
  b.HeaderEnd(fmt::EndKind::kReturned, 0, *end_ns);
  return b;
}

TEST(CudaChunkIndex, EveryWindowReadAgainIsTheWholeReadsSlice) {
  size_t windows = 0, chunks = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    uint64_t end_ns = 0;
    const TraceBuilder b = RandomProcess(seed, &end_ns);
    StringPool strings;
    const ReadResult r = ReadIndexed(b.Build(), &strings);
    ASSERT_TRUE(r.status.usable && r.image);
    ASSERT_FALSE(r.status.damaged()) << "seed " << seed << ": " << DescribeDamage(r.status);
    ASSERT_NE(r.image->cuda_index, nullptr);
    EXPECT_GT(r.image->cuda_index->unreturned.size(), 0u) << "seed " << seed;
    chunks += r.image->cuda_index->chunks.size();
    windows += ExpectWindowsAsSliced(*r.image, end_ns, "seed " + std::to_string(seed));
  }
  EXPECT_GT(chunks, 30u * 5);  // the calls and GPU records are spread over many chunks
  EXPECT_GT(windows, 30u * 100);
}

template <typename T>
std::vector<T> WithIds(const std::vector<T>& all, const std::vector<uint64_t>& ids) {
  std::vector<T> out;
  for (const T& r : all) {
    if (std::binary_search(ids.begin(), ids.end(), r.correlation)) out.push_back(r);
  }
  return out;
}

std::vector<uint64_t> SortedIds(std::vector<uint64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

TEST(CudaChunkIndex, AWindowsPartnersGiveTheWholeImagesCorrelation) {
  size_t looked_up = 0, extra_reads = 0, full_reads = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    uint64_t end_ns = 0;
    StringPool strings;
    const ReadResult r = ReadIndexed(RandomProcess(seed, &end_ns).Build(), &strings);
    ASSERT_TRUE(r.image && r.image->cuda_index);
    const CudaData& all = r.image->cuda;
    const IdMap<uint64_t> enter = EnterByCorrelation(all);
    const IdMap<LaunchCall> launches = LaunchCallsOf(all, strings);
    const Correlated correlated = CorrelateGpuRecords(all);
    std::vector<uint64_t> starts;
    AppendStarts(all, &starts);
    for (const TimeWindow& w : CutWindows(starts, 9)) {
      CudaData window;
      ASSERT_EQ(ReadCudaWindow(*r.image->cuda_index, w, end_ns, &window), "");
      // The calls of the window's GPU records, the GPU records of its calls.
      std::vector<uint64_t> call_ids, gpu_ids;
      for (const GpuKernel& k : window.kernels) call_ids.push_back(k.correlation);
      for (const GpuMemcpy& m : window.memcpys) call_ids.push_back(m.correlation);
      for (const GpuMemset& m : window.memsets) call_ids.push_back(m.correlation);
      for (const CudaCall& c : window.calls) gpu_ids.push_back(c.correlation);
      call_ids = SortedIds(call_ids);
      gpu_ids = SortedIds(gpu_ids);
      CudaData partners;
      ASSERT_EQ(ReadCudaPartners(*r.image->cuda_index, call_ids, gpu_ids, &partners), "");
      const std::string where = "seed " + std::to_string(seed);
      // The same in one pass: each chunk decoded once for both.
      CudaData both_records, both_partners;
      ASSERT_EQ(ReadCudaWindowAndPartners(*r.image->cuda_index, w, end_ns, &both_records, &both_partners), "");
      ExpectSameRecords(window.calls, both_records.calls, where + ", one pass, calls");
      ExpectSameRecords(window.kernels, both_records.kernels, where + ", one pass, kernels");
      ExpectSameRecords(window.memcpys, both_records.memcpys, where + ", one pass, memcpys");
      ExpectSameRecords(window.memsets, both_records.memsets, where + ", one pass, memsets");
      ExpectSameRecords(partners.calls, both_partners.calls, where + ", one pass, partner calls");
      ExpectSameRecords(partners.kernels, both_partners.kernels, where + ", one pass, partner kernels");
      ExpectSameRecords(partners.memcpys, both_partners.memcpys, where + ", one pass, partner memcpys");
      ExpectSameRecords(partners.memsets, both_partners.memsets, where + ", one pass, partner memsets");
      ExpectSameRecords(WithIds(all.calls, call_ids), partners.calls, where + ", calls");
      ExpectSameRecords(WithIds(all.kernels, gpu_ids), partners.kernels, where + ", kernels");
      ExpectSameRecords(WithIds(all.memcpys, gpu_ids), partners.memcpys, where + ", memcpys");
      ExpectSameRecords(WithIds(all.memsets, gpu_ids), partners.memsets, where + ", memsets");
      // The ids in any order, with repeats: the same partners.
      std::vector<uint64_t> call_again(call_ids.rbegin(), call_ids.rend()), gpu_again(gpu_ids.rbegin(), gpu_ids.rend());
      call_again.insert(call_again.end(), call_ids.begin(), call_ids.end());
      gpu_again.insert(gpu_again.end(), gpu_ids.begin(), gpu_ids.end());
      CudaData again;
      ASSERT_EQ(ReadCudaPartners(*r.image->cuda_index, call_again, gpu_again, &again), "");
      ExpectSameRecords(partners.calls, again.calls, where + ", ids in any order, calls");
      ExpectSameRecords(partners.kernels, again.kernels, where + ", ids in any order, kernels");
      // Ids spread thin (the set sorts them instead of a bit per id): the first, the last, one far past.
      if (!call_ids.empty() && !gpu_ids.empty()) {
        const std::vector<uint64_t> thin_calls = {call_ids.front(), call_ids.back(), uint64_t{1} << 40};
        const std::vector<uint64_t> thin_gpu = {gpu_ids.front(), gpu_ids.back(), uint64_t{1} << 40};
        CudaData thin;
        ASSERT_EQ(ReadCudaPartners(*r.image->cuda_index, thin_calls, thin_gpu, &thin), "");
        ExpectSameRecords(WithIds(all.calls, thin_calls), thin.calls, where + ", thin ids, calls");
        ExpectSameRecords(WithIds(all.kernels, thin_gpu), thin.kernels, where + ", thin ids, kernels");
        ExpectSameRecords(WithIds(all.memcpys, thin_gpu), thin.memcpys, where + ", thin ids, memcpys");
      }
      // The look-ups the analyses make, from the partners alone.
      const IdMap<uint64_t> p_enter = EnterByCorrelation(partners);
      const IdMap<LaunchCall> p_launches = LaunchCallsOf(partners, strings);
      const Correlated p_correlated = CorrelateGpuRecords(partners);
      // The report's read: only the partners the records are not, where no id is in both (a graph's
      // kernels on both sides of the window's edge are: then every partner). The look-ups over
      // the records, then those, must be the same.
      CudaData x_records, x_partners;
      bool extra = false;
      ASSERT_EQ(ReadCudaWindowAndPartners(*r.image->cuda_index, w, end_ns, &x_records, &x_partners, &extra), "");
      ExpectSameRecords(window.calls, x_records.calls, where + ", extra read, calls");
      const std::vector<const CudaData*> sources =
          extra ? std::vector<const CudaData*>{&x_records, &x_partners} : std::vector<const CudaData*>{&x_partners};
      ++(extra ? extra_reads : full_reads);
      if (!extra) ExpectSameRecords(partners.calls, x_partners.calls, where + ", every partner, calls");
      if (extra) EXPECT_LE(x_partners.calls.size(), partners.calls.size()) << where;
      const IdMap<uint64_t> x_enter = EnterByCorrelation(sources);
      const IdMap<LaunchCall> x_launches = LaunchCallsOf(sources, strings);
      const Correlated x_correlated = CorrelateGpuRecords(sources);
      for (uint64_t id : call_ids) {
        const uint64_t* a = enter.Find(id);
        const uint64_t* b = p_enter.Find(id);
        ASSERT_EQ(a == nullptr, b == nullptr) << where << ", id " << id;
        if (a != nullptr) {
          EXPECT_EQ(*a, *b) << where << ", id " << id;
        }
        const uint64_t* x = x_enter.Find(id);
        ASSERT_EQ(a == nullptr, x == nullptr) << where << ", extra, id " << id;
        if (a != nullptr) {
          EXPECT_EQ(*a, *x) << where << ", extra, id " << id;
        }
        const LaunchCall* lx = x_launches.Find(id);
        const LaunchCall* la = launches.Find(id);
        ASSERT_EQ(la == nullptr, lx == nullptr) << where << ", extra, id " << id;
        if (la != nullptr) {
          EXPECT_EQ(std::tie(la->begin, la->end), std::tie(lx->begin, lx->end)) << where << ", extra, id " << id;
        }
        const LaunchCall* lb = p_launches.Find(id);
        ASSERT_EQ(la == nullptr, lb == nullptr) << where << ", id " << id;
        if (la != nullptr) {
          EXPECT_EQ(std::tie(la->begin, la->end), std::tie(lb->begin, lb->end)) << where << ", id " << id;
        }
        ++looked_up;
      }
      for (uint64_t id : gpu_ids) {
        const GpuKernel* const* kx = x_correlated.kernels.Find(id);
        const GpuKernel* const* ka = correlated.kernels.Find(id);
        ASSERT_EQ(ka == nullptr, kx == nullptr) << where << ", extra, id " << id;
        if (ka != nullptr) {
          EXPECT_TRUE(**ka == **kx) << where << ", extra, id " << id;
        }
        const GpuMemcpy* const* mx = x_correlated.copies.Find(id);
        ASSERT_EQ(correlated.copies.Find(id) == nullptr, mx == nullptr) << where << ", extra, id " << id;
        if (mx != nullptr) {
          EXPECT_TRUE(**correlated.copies.Find(id) == **mx) << where << ", extra, id " << id;
        }
        const GpuKernel* const* kb = p_correlated.kernels.Find(id);
        ASSERT_EQ(ka == nullptr, kb == nullptr) << where << ", id " << id;
        if (ka != nullptr) {
          EXPECT_TRUE(**ka == **kb) << where << ", id " << id;
        }
        const GpuMemcpy* const* ma = correlated.copies.Find(id);
        const GpuMemcpy* const* mb = p_correlated.copies.Find(id);
        ASSERT_EQ(ma == nullptr, mb == nullptr) << where << ", id " << id;
        if (ma != nullptr) {
          EXPECT_TRUE(**ma == **mb) << where << ", id " << id;
        }
      }
    }
  }
  EXPECT_GT(looked_up, 1000u);
  EXPECT_GT(extra_reads, 100u);  // most windows
  EXPECT_GT(full_reads, 0u);     // a graph's kernels on both sides of an edge
}

TEST(CudaChunkIndex, MadeTheSameWhenTheReadKeepsNoRecord) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    uint64_t end_ns = 0;
    const std::vector<uint8_t> bytes = RandomProcess(seed, &end_ns).Build();
    StringPool kept_strings, none_strings;
    const ReadResult kept = ReadIndexed(bytes, &kept_strings);
    const ReadResult none =
        ReadTraceBytes(bytes, "test.trace", &none_strings, {.keep_cuda = KeepCuda::kNone, .cuda_index = true});
    ASSERT_TRUE(kept.image && none.image);
    ASSERT_TRUE(none.image->cuda.calls.empty() && none.image->cuda.kernels.empty());
    ASSERT_NE(none.image->cuda_index, nullptr);
    std::vector<uint64_t> starts;
    AppendStarts(kept.image->cuda, &starts);
    for (const TimeWindow& w : CutWindows(starts, 7)) {
      const CudaData want = SliceWindow(kept.image->cuda, w, end_ns);
      CudaData got;
      ASSERT_EQ(ReadCudaWindow(*none.image->cuda_index, w, end_ns, &got), "");
      const std::string where = "seed " + std::to_string(seed);
      ExpectSameRecords(want.calls, got.calls, where + ", calls");
      ExpectSameRecords(want.kernels, got.kernels, where + ", kernels");
      ExpectSameRecords(want.memcpys, got.memcpys, where + ", memcpys");
      ExpectSameRecords(want.memsets, got.memsets, where + ", memsets");
    }
  }
}

TEST(CudaChunkIndex, DamageIsMetAgainAtTheSameByte) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    uint64_t end_ns = 0;
    TraceBuilder b = RandomProcess(seed, &end_ns);
    std::vector<uint8_t> bytes = b.Build();
    std::mt19937_64 rng(seed * 77);
    // A few bytes of the chunks' records damaged: the whole read stops those chunks there, and
    // marks the open calls of their threads as having lost their exits.
    const uint64_t data = 4096;
    for (int i = 0; i < 3; ++i) {
      const uint64_t at = data + rng() % (bytes.size() - data);
      bytes[at] = static_cast<uint8_t>(rng());
    }
    StringPool strings;
    const ReadResult r = ReadIndexed(bytes, &strings);
    ASSERT_TRUE(r.status.usable && r.image);
    if (r.image->cuda_index == nullptr) continue;  // e.g. a damaged string id overflowed
    ExpectWindowsAsSliced(*r.image, end_ns, "damaged seed " + std::to_string(seed));
  }
}

TEST(CudaChunkIndex, ALostChunkLosesTheExitsOfItsThreadsOpenCalls) {
  TraceBuilder b(7);
  b.Layout(4096, 256);
  const int th = b.Thread(7), drainer = b.Thread(8);
  const uint64_t t0 = 2'000'000'000;
  b.ApiEnter(th, t0, "cudaDeviceSynchronize", 1);
  for (uint64_t i = 0; i < 40; ++i) {  // fills chunks
    b.Push(th, t0 + 1 + 2 * i, "x");
    b.Pop(th, t0 + 2 + 2 * i);
  }
  b.ApiExit(th, t0 + 9'000, 1);
  b.ApiCall(th, t0 + 9'100, t0 + 9'200, "cudaLaunchKernel_v7000", 2);
  b.Kernel(drainer, {.start = t0 + 9'300, .end = t0 + 9'400, .name = "_Z1kv", .correlation = 2});
  std::vector<uint8_t> bytes = b.Build();
  // The second chunk of the thread lost (its magic overwritten): a gap in its sequence.
  bytes[4096 + 256 + 0] ^= 0xff;
  StringPool strings;
  const ReadResult r = ReadIndexed(bytes, &strings);
  ASSERT_TRUE(r.status.damaged());
  ASSERT_EQ(r.image->cuda.calls.size(), 2u);
  EXPECT_TRUE(r.image->cuda.calls[0].exit_lost);
  EXPECT_GT(ExpectWindowsAsSliced(*r.image, t0 + 20'000, "a lost chunk"), 0u);
}

TEST(CudaChunkIndex, AFileChangedSinceItWasReadIsNotReadAgain) {
  test::ScratchDir dir;
  uint64_t end_ns = 0;
  const TraceBuilder b = RandomProcess(3, &end_ns);
  const std::string path = b.WriteTo(dir.path());
  StringPool strings;
  const ReadResult r = ReadTraceFile(path, &strings, {.cuda_index = true});
  ASSERT_NE(r.image->cuda_index, nullptr);
  EXPECT_GT(ExpectWindowsAsSliced(*r.image, end_ns, "from the file"), 0u);

  // Rewritten in place, the same size, its mtime put back: the status change time still says so.
  {
    struct stat before {};
    ASSERT_EQ(::stat(path.c_str(), &before), 0);
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(before.st_size / 2));
    f.put('\x5a');
    f.close();
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
    struct stat after {};
    ASSERT_EQ(::stat(path.c_str(), &after), 0);
    ASSERT_EQ(after.st_size, before.st_size);
    ASSERT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    CudaData out;
    const std::string error = ReadCudaWindow(*r.image->cuda_index, {}, end_ns, &out);
    EXPECT_NE(error.find("changed since it was read"), std::string::npos) << error;
  }

  std::ofstream(path, std::ios::app) << "more";
  CudaData out;
  const std::string error = ReadCudaWindow(*r.image->cuda_index, {}, end_ns, &out);
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("changed since it was read"), std::string::npos) << error;

  // The windows of a report say so, once, and are sliced out of what the image kept.
  std::vector<Process> processes(1);
  processes[0].images.push_back(*r.image);
  processes[0].end_ns = end_ns;
  const CudaWindows w(processes, 40, ChunkIndexWindowReader(), ChunkIndexStartCounter());
  ASSERT_GT(w.size(), 2u);
  for (size_t k = 0; k < w.size(); ++k) w.Read(k, processes[0]);
  EXPECT_EQ(w.sliced_count(), w.size());
  ASSERT_EQ(w.Errors().size(), 1u);
  EXPECT_EQ(w.Errors()[0], error);
}

TEST(CudaChunkIndex, NoneUnlessAskedFor) {
  uint64_t end_ns = 0;
  StringPool strings;
  EXPECT_EQ(ReadTraceBytes(RandomProcess(1, &end_ns).Build(), "t", &strings).image->cuda_index, nullptr);
}

TEST(CudaChunkIndex, TooManyCallsOpenAtOnceMakeNoIndex) {
  TraceBuilder b(9);
  const int th = b.Thread(9);
  const uint64_t t0 = 2'000'000'000;
  for (uint64_t i = 1; i <= CudaChunkIndex::kMaxOpenCalls + 1; ++i) b.ApiEnter(th, t0 + i, "cudaFree", i);
  b.NewChunk(th);
  b.ApiExit(th, t0 + 100'000, 1);
  StringPool strings;
  const ReadResult r = ReadIndexed(b.Build(), &strings);
  EXPECT_EQ(r.image->cuda.calls.size(), CudaChunkIndex::kMaxOpenCalls + 1);
  EXPECT_EQ(r.image->cuda_index, nullptr);
}

TEST(CudaChunkIndex, TooManyCallsThatNeverReturnedMakeNoIndex) {
  // Every enter reuses one correlation id, with no exit: each call before the last never returned,
  // and would be in every window after its enter.
  TraceBuilder b(9);
  const int th = b.Thread(9);
  const uint64_t t0 = 2'000'000'000;
  for (uint64_t i = 1; i <= CudaChunkIndex::kMaxOpenCalls + 2; ++i) b.ApiEnter(th, t0 + i, "cudaFree", 5);
  StringPool strings;
  const ReadResult r = ReadIndexed(b.Build(), &strings);
  EXPECT_EQ(r.image->cuda.calls.size(), CudaChunkIndex::kMaxOpenCalls + 2);
  EXPECT_EQ(r.image->cuda_index, nullptr);
}

TEST(CudaWindows, OnePassGivesEachWindowOfEachProcessInOrderWithOrWithoutReadingAhead) {
  Trace trace;
  uint64_t end_ns = 0;
  for (uint64_t seed : {6, 7}) {
    Process p;
    p.images.push_back(*ReadIndexed(RandomProcess(seed, &end_ns).Build(), &trace.strings).image);
    p.end_ns = end_ns;
    trace.processes.push_back(std::move(p));
  }
  const CudaWindows w(trace.processes, 50, ChunkIndexWindowReader(), ChunkIndexStartCounter());
  ASSERT_GT(w.size(), 5u);
  const std::vector<size_t> aheads = {0, 1, 3, kMaxReadThreads + 5};  // reading threads: none, 1, 3, past the cap
  for (size_t ahead : aheads) {
    std::vector<size_t> order;
    ForEachCudaWindow(w, trace.processes, ahead, [&](size_t k, const std::vector<const CudaWindowData*>& data) {
      order.push_back(k);
      ASSERT_EQ(data.size(), trace.processes.size());
      for (size_t p = 0; p < data.size(); ++p) {
        const Process& proc = trace.processes[p];
        const CudaData want = SliceWindow(proc.images[0].cuda, w.window(k), proc.end_ns);
        ExpectSameRecords(want.calls, data[p]->records()[0]->calls, "calls");
        ExpectSameRecords(want.kernels, data[p]->records()[0]->kernels, "kernels");
      }
    });
    std::vector<size_t> every(w.size());
    for (size_t k = 0; k < every.size(); ++k) every[k] = k;
    EXPECT_EQ(order, every) << "threads " << ahead;
  }
  EXPECT_EQ(w.read_count(), aheads.size() * 2 * w.size());  // each window of each process once a pass

  // A read that throws, on the thread reading ahead or not, reaches the caller; no window after it
  // is visited.
  for (size_t ahead : aheads) {
    const CudaWindows failing(trace.processes, 50,
                              [](const TraceImage&, const TimeWindow& window, uint64_t, CudaData*, CudaData*, bool*,
                                 std::string*) -> bool {
                                if (window.begin_ns > 0) throw std::runtime_error("read failed");
                                return false;
                              },
                              ChunkIndexStartCounter());
    size_t visited = 0;
    EXPECT_THROW(ForEachCudaWindow(failing, trace.processes, ahead,
                                   [&](size_t, const std::vector<const CudaWindowData*>&) { ++visited; }),
                 std::runtime_error);
    EXPECT_EQ(visited, 1u) << "threads " << ahead;
  }
}

TEST(CudaWindows, ReadTheWindowsAgainWhereTheImagesHaveAnIndex) {
  Trace trace;
  uint64_t end_ns = 0;
  StringPool& strings = trace.strings;
  for (uint64_t seed : {4, 5}) {
    Process p;
    p.images.push_back(*ReadIndexed(RandomProcess(seed, &end_ns).Build(), &strings).image);
    p.end_ns = end_ns;
    trace.processes.push_back(std::move(p));
  }
  trace.processes[1].images[0].cuda_index.reset();  // this one is sliced, its starts from its records
  const CudaWindows w(trace.processes, 50, ChunkIndexWindowReader(), ChunkIndexStartCounter());
  ASSERT_GT(w.size(), 5u);
  EXPECT_EQ(w.read_count(), 0u);  // nothing is read before it is asked for
  for (size_t k = 0; k < w.size(); ++k) {
    for (const Process& p : trace.processes) {
      const CudaWindowData data = w.Read(k, p);
      const CudaData want = SliceWindow(p.images[0].cuda, w.window(k), p.end_ns);
      ExpectSameRecords(want.calls, data.records()[0]->calls, "calls");
      ExpectSameRecords(want.kernels, data.records()[0]->kernels, "kernels");
      // The second's look-ups read the whole image; the first's, the window's partners.
      const std::vector<const CudaData*> sources = data.PartnerSources(0);
      if (&p == &trace.processes[1]) {
        EXPECT_EQ(sources, std::vector<const CudaData*>{&p.images[0].cuda});
      } else {
        ASSERT_FALSE(sources.empty());
        EXPECT_NE(sources.back(), &p.images[0].cuda);
        if (sources.size() == 2) EXPECT_EQ(sources[0], data.records()[0]);  // the records, then the rest
      }
    }
  }
  EXPECT_EQ(w.read_count(), w.size());
  EXPECT_EQ(w.sliced_count(), w.size());
  // The windows are cut by the counts: the first process's chunks, the second's records.
  std::vector<StartCount> starts;
  ASSERT_TRUE(ChunkIndexStartCounter()(trace.processes[0].images[0], &starts));
  EXPECT_FALSE(ChunkIndexStartCounter()(trace.processes[1].images[0], &starts));
  uint64_t counted = 0;
  for (const StartCount& s : starts) counted += s.count;
  const CudaData& first = trace.processes[0].images[0].cuda;
  EXPECT_EQ(counted, first.calls.size() + first.kernels.size() + first.memcpys.size() + first.memsets.size());
  std::vector<StartCount> both;
  ASSERT_TRUE(ChunkIndexStartCounter()(trace.processes[0].images[0], &both));
  std::vector<uint64_t> second;
  AppendStarts(trace.processes[1].images[0].cuda, &second);
  for (uint64_t t : second) both.push_back({t, 1});
  const std::vector<TimeWindow> cut = CutWindows(both, 50);
  ASSERT_EQ(cut.size(), w.size());
  for (size_t k = 0; k < cut.size(); ++k) EXPECT_EQ(cut[k].begin_ns, w.window(k).begin_ns);
}

}  // namespace
}  // namespace trainprof::collector
