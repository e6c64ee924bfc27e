// Per-process summaries (collector/summary/): a DurationSummary's state saved and loaded, a
// process summarised, written as a summary file's bytes and read back, and the errors of bytes
// that are not a summary.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <tuple>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/base/duration_summary.h"
#include "collector/stats/nvtx_stats.h"
#include "collector/summary/summarize.h"
#include "collector/summary/gpu_ops.h"
#include "collector/summary/summary_file.h"
#include "collector/report/run_places.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using namespace std::string_literals;
using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

DurationSummary Durations(uint64_t n, uint64_t base) {
  DurationSummary d;
  for (uint64_t i = 0; i < n; ++i) d.Add(base + (i * 7919) % 1000 * 13);
  return d;
}

void ExpectSameStats(const DurationSummary& a, const DurationSummary& b) {
  const SampleStats x = a.Stats(), y = b.Stats();
  EXPECT_EQ(x.count, y.count);
  EXPECT_EQ(x.total, y.total);
  EXPECT_EQ(x.min, y.min);
  EXPECT_EQ(x.max, y.max);
  EXPECT_EQ(x.mean, y.mean);
  EXPECT_EQ(x.std, y.std);
  EXPECT_EQ(x.median, y.median);
  EXPECT_EQ(x.p90, y.p90);
  EXPECT_EQ(x.exact, y.exact);
}

// Every mode (none, implicit values, exact values, histogram) loads as it was saved, and merges
// afterwards as the original does.
TEST(DurationSummaryState, LoadOfSaveIsTheSameSummary) {
  for (uint64_t n : {0u, 1u, 2u, 3u, 4u, 100u, 1024u, 1025u, 5000u}) {
    SCOPED_TRACE(n);
    const DurationSummary d = Durations(n, 1'000'000);
    DurationSummary loaded;
    ASSERT_TRUE(DurationSummary::Load(d.Save(), &loaded));
    ExpectSameStats(d, loaded);
    EXPECT_EQ(d.Quantile(0.25), loaded.Quantile(0.25));
    const DurationSummary other = Durations(700, 3'000'000);
    DurationSummary a = d, b = loaded;
    a.Merge(other);
    b.Merge(other);
    ExpectSameStats(a, b);
    loaded.Add(42);
    DurationSummary c = d;
    c.Add(42);
    ExpectSameStats(c, loaded);
  }
}

TEST(DurationSummaryState, LoadRefusesStatesNoSummaryHas) {
  DurationSummary out;
  auto refused = [&](DurationSummary::State s) { return !DurationSummary::Load(s, &out); };
  DurationSummary::State one = Durations(1, 500).Save();
  one.max = 501;  // one value: min == max == total
  EXPECT_TRUE(refused(one));
  DurationSummary::State three = Durations(3, 500).Save();
  three.total = three.min + three.max + three.max + 1;  // the middle value above max
  EXPECT_TRUE(refused(three));
  DurationSummary::State exact = Durations(100, 500).Save();
  exact.data.pop_back();
  EXPECT_TRUE(refused(exact));
  exact = Durations(100, 500).Save();
  exact.total += 1;
  EXPECT_TRUE(refused(exact));
  DurationSummary::State hist = Durations(5000, 500).Save();
  ASSERT_FALSE(hist.data.empty());
  hist.data.back() += 1;  // counts no longer sum to count
  EXPECT_TRUE(refused(hist));
  hist = Durations(5000, 500).Save();
  hist.first += 1;  // min's bucket is not the first counted
  EXPECT_TRUE(refused(hist));
  hist = Durations(5000, 500).Save();
  hist.first = 7424;  // past the last bucket
  EXPECT_TRUE(refused(hist));
  hist = Durations(5000, 500).Save();
  hist.data.push_back(0);  // an empty bucket past max's: Save writes none
  EXPECT_TRUE(refused(hist));
  hist = Durations(5000, 500).Save();
  hist.total = hist.count * hist.max + 1;  // a mean above max
  EXPECT_TRUE(refused(hist));
  exact = Durations(100, 500).Save();
  exact.shift = 3;  // exact values carry no shift
  EXPECT_TRUE(refused(exact));
  EXPECT_FALSE(refused(Durations(5000, 500).Save()));
}

// A process with a rank, a signal exit, named threads, NVTX ranges (one past the exact sample),
// marks, misuse, a capture window and dropped records: its summary's bytes read back into another
// pool give the same summary, field by field and byte for byte.
TEST(SummaryCodec, RoundTripKeepsEveryField) {
  TraceBuilder b(4242, 7, 1'000'000'000);
  b.Host("node-b").Command({"/usr/bin/python3", "train.py", "--lr", "0.1 0.2"}).Env("RANK", "3")
      .Env("WORLD_SIZE", "8").HeaderEnd(fmt::EndKind::kSignal, 15, 1'900'000'000).Dropped(5);
  b.RawMeta(static_cast<uint16_t>(fmt::MetaKey::kCapture), "range=nvtx:step\0range_end=repeat"s);
  int t = b.Thread(4242);
  b.ThreadName(t, 4242, "pt_main_thread");
  b.Capture(t, 1'000'000'100, true, fmt::CaptureReason::kNvtxRange);
  for (uint64_t i = 0; i < 1100; ++i) {
    b.Push(t, 1'000'001'000 + i * 1000, "forward");
    b.Pop(t, 1'000'001'000 + i * 1000 + 300 + i % 17);
  }
  b.Mark(t, 1'100'000'000, "epoch end");
  b.Misuse(t, 1'100'000'001, fmt::MisuseKind::kNullName);
  // CUDA: launches, a kernel in two grid shapes, a copy, a call that never returned.
  const int c = b.Thread(4243), g = b.Thread(4244);
  for (uint64_t i = 0; i < 6; ++i) {
    const uint64_t at = 1'010'000'000 + i * 100'000;
    b.ApiCall(c, at, at + 5'000 + i, "cudaLaunchKernel_v7000", 10 + i);
    TraceBuilder::KernelSpec k{.start = at + 8'000, .end = at + 40'000 + i * 10, .name = "_Z4gemmPfS_", .correlation = 10 + i};
    k.grid[0] = i % 2 == 0 ? 64 : 128;
    b.Kernel(g, k);
  }
  b.Memcpy(g, {.start = 1'020'000'000, .end = 1'020'050'000, .kind = fmt::MemcpyKind::kHtoD, .bytes = 1 << 20, .correlation = 30});
  b.ApiEnter(c, 1'150'000'000, "cudaStreamSynchronize_v3020", 40);
  b.Capture(t, 1'200'000'000, false, fmt::CaptureReason::kNvtxRange);
  Trace trace = TraceOf({&b});
  ASSERT_EQ(trace.processes.size(), 1u);
  Symbolizer symbols(trace.strings);
  ProcessSummary s =
      SummarizeProcess(trace, 0, CollectNvtx(trace.processes[0]), CollectCudaDigests(trace.processes[0]), &symbols);
  s.gpu_ops = SummarizeGpuOps(trace.processes[0], trace.strings);
  s.devices = DeviceUsesOf(trace.processes[0], trace.strings);
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].activity.size(), 7u);  // six kernels and a copy, apart
  RunView run;
  run.facts = {&s.facts};
  run.phases = {&s.phases};
  s.steps_gpu = SweepStepsGpu(trace, run).at(0);
  ASSERT_TRUE(s.steps_gpu.overlap.has_value());  // GPU activity, no steps: no training process
  EXPECT_FALSE(s.steps_gpu.idle.has_value());
  EXPECT_EQ(s.steps_gpu.overlap->temporal.compute_ns, 6 * 32'000u + 150u);  // the six gemm kernels
  EXPECT_EQ(s.info.pid, 4242);
  // Six kernels and a copy on one stream; the copy's launching call is not in the trace.
  ASSERT_EQ(s.gpu_ops.idle_kinds.size(), 1u);
  EXPECT_EQ(s.gpu_ops.idle_kinds[0].ops, 7u);
  EXPECT_EQ(s.gpu_ops.unlaunched.ops, 1u);
  EXPECT_EQ(s.gpu_ops.unlaunched.ns, 50'000u);
  ASSERT_EQ(s.gpu_ops.launches.size(), 1u);
  EXPECT_EQ(s.gpu_ops.launches[0].cpu.count(), 6u);
  EXPECT_EQ(s.info.rank, 3);
  EXPECT_EQ(s.info.exit_text, "signal 15 (SIGTERM)");
  EXPECT_EQ(s.info.command, "/usr/bin/python3 train.py --lr '0.1 0.2'");
  ASSERT_EQ(s.nvtx.ranges.size(), 1u);
  EXPECT_FALSE(s.nvtx.ranges[0].durations.exact());
  ASSERT_TRUE(s.capture.has_value());
  EXPECT_EQ(s.capture->intervals.size(), 1u);

  const std::vector<uint8_t> bytes = EncodeSummary(s, trace.strings);
  ASSERT_TRUE(LooksLikeSummary(bytes));
  StringPool other;
  other.Intern("a name the trace does not have");  // ids differ from the trace's
  const ProcessSummary d = DecodeSummary(bytes, &other);
  EXPECT_EQ(EncodeSummary(d, other), bytes);
  EXPECT_EQ(d.info.host, "node-b");
  EXPECT_EQ(d.info.world_size, 8);
  EXPECT_EQ(d.info.exit_code, 15);
  EXPECT_EQ(d.info.threads, s.info.threads);
  EXPECT_EQ(d.info.nvtx_misuse, s.info.nvtx_misuse);
  EXPECT_EQ(d.info.nvtx_misuse.null_names, 1u);
  EXPECT_EQ(d.info.gpu.state, s.info.gpu.state);
  EXPECT_EQ(d.recorded_ns, s.recorded_ns);
  EXPECT_EQ(d.losses, s.losses);
  EXPECT_EQ(d.capture, s.capture);
  ASSERT_EQ(d.nvtx.ranges.size(), 1u);
  EXPECT_EQ(other.Get(d.nvtx.ranges[0].key.name), "forward");
  ExpectSameStats(d.nvtx.ranges[0].durations, s.nvtx.ranges[0].durations);
  ASSERT_EQ(d.nvtx.marks.size(), 1u);
  EXPECT_EQ(other.Get(d.nvtx.marks[0].name), "epoch end");
  EXPECT_EQ(d.nvtx.marks[0].count, 1u);
  ASSERT_EQ(d.cuda.size(), 1u);
  const CudaDigest& dc = d.cuda[0];
  const CudaDigest& sc = s.cuda[0];
  ASSERT_EQ(dc.api().size(), 2u);
  EXPECT_EQ(dc.calls(), sc.calls());
  ASSERT_EQ(dc.kernels().size(), 1u);
  EXPECT_EQ(other.Get(dc.kernels()[0].name), "_Z4gemmPfS_");
  EXPECT_EQ(dc.kernels()[0].grids, sc.kernels()[0].grids);
  EXPECT_EQ(dc.kernels()[0].grids.size(), 2u);
  ExpectSameStats(dc.kernels()[0].time, sc.kernels()[0].time);
  ASSERT_EQ(dc.memory().size(), 1u);
  EXPECT_EQ(dc.memory()[0].size.total(), uint64_t{1} << 20);
  EXPECT_EQ(d.info.gpu.unfinished_calls, 1u);
  EXPECT_EQ(d.info.gpu.unfinished_names, std::vector<std::string>{"cudaStreamSynchronize"});
  ASSERT_EQ(d.devices.size(), 1u);
  EXPECT_EQ(d.devices[0].activity, s.devices[0].activity);
  EXPECT_EQ(std::tie(d.devices[0].kernels, d.devices[0].busy_ns, d.devices[0].active_ns, d.devices[0].active_begin),
            std::tie(s.devices[0].kernels, s.devices[0].busy_ns, s.devices[0].active_ns, s.devices[0].active_begin));
  ExpectSameStats(d.devices[0].latency, s.devices[0].latency);
  ASSERT_TRUE(d.steps_gpu.overlap.has_value());
  EXPECT_EQ(d.steps_gpu.overlap->temporal.active_span_ns, s.steps_gpu.overlap->temporal.active_span_ns);
  EXPECT_EQ(d.steps_gpu.overlap->temporal.compute_ns, s.steps_gpu.overlap->temporal.compute_ns);
  EXPECT_EQ(d.steps_gpu.overlap->temporal.idle_percent, s.steps_gpu.overlap->temporal.idle_percent);
  EXPECT_EQ(d.steps_gpu.overlap->categories.computation_ns, s.steps_gpu.overlap->categories.computation_ns);
  EXPECT_EQ(d.steps_gpu.overlap->categories.memory_ns, 50'000u);
  ASSERT_EQ(d.gpu_ops.idle_kinds.size(), 1u);
  const StreamIdleKinds& di = d.gpu_ops.idle_kinds[0];
  const StreamIdleKinds& si = s.gpu_ops.idle_kinds[0];
  EXPECT_EQ(std::tuple(di.device, di.stream, di.ops, di.idle_ns, di.host_wait_ns, di.kernel_wait_ns, di.other_ns),
            std::tuple(si.device, si.stream, si.ops, si.idle_ns, si.host_wait_ns, si.kernel_wait_ns, si.other_ns));
  EXPECT_EQ(di.host_wait_percent, si.host_wait_percent);
  EXPECT_EQ(di.other_percent, si.other_percent);
  EXPECT_EQ(d.gpu_ops.unlaunched.ops, 1u);
  EXPECT_EQ(d.gpu_ops.unlaunched.ns, 50'000u);
  ASSERT_EQ(d.gpu_ops.launches.size(), 1u);
  EXPECT_EQ(d.gpu_ops.launches[0].name, "_Z4gemmPfS_");
  EXPECT_FALSE(d.gpu_ops.launches[0].memory);
  ExpectSameStats(d.gpu_ops.launches[0].cpu, s.gpu_ops.launches[0].cpu);
  ExpectSameStats(d.gpu_ops.launches[0].delay, s.gpu_ops.launches[0].delay);
  bool dropped = false;
  for (const LossNote& n : d.losses) dropped = dropped || (n.kind == Loss::records_dropped && n.n == 5);
  EXPECT_TRUE(dropped);
}

TEST(SummaryFile, HoldsTheTraceFilesStatusesAndTheirProcesses) {
  TraceBuilder a(10), b(11);
  a.Push(a.Thread(10), a.start_ns() + 10, "step");
  b.Push(b.Thread(11), b.start_ns() + 10, "step");
  Trace trace = TraceOf({&a, &b});
  Symbolizer symbols(trace.strings);
  std::vector<ProcessSummary> made;
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    made.push_back(SummarizeProcess(trace, i, CollectNvtx(trace.processes[i]), CollectCudaDigests(trace.processes[i]),
                                    &symbols));
  }
  FileStatus damaged;
  damaged.path = "run/pid-10.trace";
  damaged.pid = 10;
  damaged.bytes = 4096;
  damaged.bytes_read = 4000;
  damaged.truncated = damaged.usable = true;
  damaged.errors = {"file truncated at byte 4000"};
  damaged.losses[Loss::chunk_errors] = 2;
  FileStatus kineto;
  kineto.path = "run/h_11.1.pt.trace.json";
  kineto.format = ImageSource::kKineto;
  const std::vector<uint8_t> bytes = EncodeSummaryFile({damaged, kineto}, 7, {&made[0], &made[1]}, trace.strings);
  StringPool names;
  const SummaryFile read = DecodeSummaryFile(bytes, &names);
  ASSERT_EQ(read.files.size(), 2u);
  EXPECT_EQ(read.files[0].path, damaged.path);
  EXPECT_EQ(read.files[0].pid, 10);
  EXPECT_EQ(read.files[0].bytes_read, 4000u);
  EXPECT_TRUE(read.files[0].truncated);
  EXPECT_EQ(read.files[0].errors, damaged.errors);
  EXPECT_EQ(read.files[0].losses, damaged.losses);
  EXPECT_EQ(read.files[1].format, ImageSource::kKineto);
  EXPECT_FALSE(read.files[1].pid.has_value());
  EXPECT_EQ(read.not_recorded_omitted, 7u);
  ASSERT_EQ(read.processes.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(read.processes[i].info.pid, made[i].info.pid);
    EXPECT_EQ(read.processes[i].place, made[i].place);
  }
  EXPECT_EQ(read.processes[0].place.key.pid, 10);
  // A file-scope loss only; an unreadable file comes back as one unusable file naming why.
  StringPool more;
  nlohmann::json j = nlohmann::json::from_cbor(std::vector<uint8_t>(bytes.begin() + 3, bytes.end() - 4));
  j["files"][0]["losses"] = {{"records_dropped", 1}};
  const std::vector<uint8_t> wrong = SealSummary(nlohmann::json::to_cbor(j));
  try {
    DecodeSummaryFile(wrong, &more);
    ADD_FAILURE() << "read";
  } catch (const SummaryError& e) {
    EXPECT_STREQ(e.what(), "files[0].losses.records_dropped: not a loss of a file");
  }
  const SummaryFile missing = ReadSummaryFile("/nonexistent/pid-1.summary", &more);
  ASSERT_EQ(missing.files.size(), 1u);
  EXPECT_FALSE(missing.files[0].usable);
  EXPECT_EQ(missing.files[0].errors, std::vector<std::string>{"cannot read the summary file: No such file or directory"});
}

// Summaries that name each other as parents (forged) still give every process, one of them a root.
TEST(PlaceRun, ParentsThatNameEachOtherLeaveNoProcessOut) {
  TraceBuilder a(10), b(11);
  a.Push(a.Thread(10), a.start_ns() + 10, "step");
  b.Push(b.Thread(11), b.start_ns() + 10, "step");
  Trace trace = TraceOf({&a, &b});
  RunSummaries run;
  Symbolizer symbols(trace.strings);
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    run.processes.push_back(SummarizeProcess(trace, i, CollectNvtx(trace.processes[i]),
                                             CollectCudaDigests(trace.processes[i]), &symbols));
  }
  run.processes[0].place.parent = run.processes[1].place.key;
  run.processes[1].place.parent = run.processes[0].place.key;
  const RunPlaces placed = PlaceRun(&run, {});
  ASSERT_EQ(placed.summaries.size(), 2u);
  EXPECT_EQ(placed.parent[0], -1);
  EXPECT_EQ(placed.parent[1], 0);
  EXPECT_EQ(placed.depth[1], 1);
  EXPECT_EQ(placed.summaries[0].facts.children, std::vector<int>{1});
}

// The error of reading `bytes`, a file of one process's summary; an error in that process's map
// without its "processes[0]." (the file-level test below checks it is there).
std::string DecodeError(const std::vector<uint8_t>& bytes) {
  StringPool strings;
  try {
    DecodeSummary(bytes, &strings);
  } catch (const SummaryError& e) {
    std::string what = e.what();
    return what.rfind("processes[0].", 0) == 0 ? what.substr(13) : what;
  }
  return "(no error)";
}

std::vector<uint8_t> SummaryBytes() {
  TraceBuilder b(10);
  int t = b.Thread(10);
  b.Push(t, b.start_ns() + 10, "step");
  b.Pop(t, b.start_ns() + 20);
  Trace trace = TraceOf({&b});
  Symbolizer symbols(trace.strings);
  return EncodeSummary(
      SummarizeProcess(trace, 0, CollectNvtx(trace.processes[0]), CollectCudaDigests(trace.processes[0]), &symbols),
      trace.strings);
}

// The summary file's bytes with `change` made to its map (`file`) or to its process's.
std::vector<uint8_t> Rewritten(const std::function<void(nlohmann::json*)>& change, bool file = false) {
  const std::vector<uint8_t> bytes = SummaryBytes();
  nlohmann::json j = nlohmann::json::from_cbor(std::vector<uint8_t>(bytes.begin() + 3, bytes.end() - 4));
  change(file ? &j : &j["processes"][0]);
  return SealSummary(nlohmann::json::to_cbor(j));
}

TEST(SummaryCodec, BytesThatAreNoSummaryAreRefusedWithWhatIsWrong) {
  const std::vector<uint8_t> good = SummaryBytes();
  EXPECT_EQ(DecodeError(good), "(no error)");
  EXPECT_EQ(DecodeError({'T', 'P', 'R', 'F'}), "not a trainprof summary (no CBOR magic 0xd9d9f7 at its start)");
  std::vector<uint8_t> cut(good.begin(), good.end() - 9);
  EXPECT_EQ(DecodeError(cut), "damaged or cut short: its CRC-32 does not match its bytes");
  std::vector<uint8_t> flipped = good;
  flipped[flipped.size() / 2] ^= 0x04;  // one bit of a value: found, not read as another number
  EXPECT_EQ(DecodeError(flipped), "damaged or cut short: its CRC-32 does not match its bytes");
  const std::vector<uint8_t> sealed_cut = SealSummary(std::span<const uint8_t>(good).subspan(3, good.size() - 3 - 4 - 9));
  EXPECT_EQ(DecodeError(sealed_cut).rfind("not readable as CBOR: ", 0), 0u) << DecodeError(sealed_cut);
  EXPECT_EQ(DecodeError(sealed_cut).find("json.exception"), std::string::npos) << DecodeError(sealed_cut);
  // Forged: nested past any summary (the reader recurses a level at a time), and more arrays than
  // the bytes allow (each costs ~70 bytes once read).
  std::vector<uint8_t> deep(100000, 0x81);
  deep.push_back(0x00);
  EXPECT_EQ(DecodeError(SealSummary(deep)), "not readable as CBOR: nested more than 32 levels deep (no summary is)");
  std::vector<uint8_t> wide = {0x9a, 0x00, 0x0f, 0x42, 0x40};  // an array of 1,000,000 empty arrays
  wide.insert(wide.end(), 1000000, 0x80);
  EXPECT_EQ(DecodeError(SealSummary(wide)), "not readable as CBOR: more arrays and maps than its size allows (125064)");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) { (*j)["trainprof_summary"] = 1; }, true)),
            "summary format version 1; this trainprof reads version 2 (summarise the trace again with it)");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) { (*j)["trainprof_summary"] = 3; }, true)),
            "summary format version 3; this trainprof reads version 2 (written by a newer trainprof: report it with that one)");
  {
    StringPool strings;
    try {
      DecodeSummary(Rewritten([](nlohmann::json* j) { (*j)["info"].erase("pid"); }), &strings);
      ADD_FAILURE() << "read";
    } catch (const SummaryError& e) {
      EXPECT_STREQ(e.what(), "processes[0].info: field \"pid\" is missing");
    }
  }
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) { (*j)["processes"].push_back((*j)["processes"][0]); }, true)),
            "processes: 2 summaries where one was expected");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) {
              (*j)["files"] = nlohmann::json::array({{{"path", "pid-1.trace"}, {"pid", 1}, {"bytes", 10}, {"bytes_read", 11},
                                                      {"truncated", false}, {"usable", true}, {"format", "trainprof"},
                                                      {"errors", nlohmann::json::array()}, {"losses", nlohmann::json::object()}}});
            }, true)),
            "files[0].bytes_read: more bytes read than the file has");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) { (*j)["info"]["rank"] = -5; })), "info.rank: a negative rank");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) { (*j)["place"]["file_start_realtime_ns"] = uint64_t{1} << 63; })),
            "place.file_start_realtime_ns: past any clock (2^62 ns)");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) { (*j)["place"]["run_ids"].push_back("x"); })),
            "place.run_ids: not one per file of `info`");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) { (*j)["place"]["key"][3] = 999999; })),
            "place.key: not the process of `info`");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) { (*j)["info"].erase("pid"); })),
            "info: field \"pid\" is missing");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) { (*j)["info"]["host"] = 5; })),
            "info.host: expected a string");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) {
              (*j)["losses"] = nlohmann::json::array({nlohmann::json::array({"no_such_loss", 1, "", true})});
            })),
            "losses[0].kind: unknown loss \"no_such_loss\"");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) { (*j)["nvtx"]["ranges"][0][7][1] = 11; })),
            "nvtx.ranges[0].durations: a duration statistic whose parts do not add up");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) {
              (*j)["nvtx"]["ranges"].push_back((*j)["nvtx"]["ranges"][0]);
            })),
            "nvtx.ranges[1]: a second row of the same domain, name, style and orphan");
  // Losses a process's summary cannot hold: a file's, the capture note (made at the merge), none.
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) {
              (*j)["losses"] = nlohmann::json::array({nlohmann::json::array({"damaged_files", 1, "x", true})});
            })),
            "losses[0].kind: \"damaged_files\" is not a loss a process's summary holds");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) {
              (*j)["losses"] = nlohmann::json::array({nlohmann::json::array({"capture_limited", 1, "x", true})});
            })),
            "losses[0].kind: \"capture_limited\" is not a loss a process's summary holds");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) {
              (*j)["losses"] = nlohmann::json::array({nlohmann::json::array({"records_dropped", 0, "", true})});
            })),
            "losses[0].n: a loss of 0");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) {
              (*j)["functions"]["phases"][""] = {{"samples", 0}, {"functions", nlohmann::json::array()}};
            })),
            "functions.phases.: not a phase label");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) {
              (*j)["phases"] = nlohmann::json::array({{{"image", 0}, {"thread", 0}, {"tid", 1},
                                                       {"ranges", nlohmann::json::array({nlohmann::json::array({1, 2, 0, "", false})})},
                                                       {"data_end_marks", nlohmann::json::array()},
                                                       {"loader_marks", nlohmann::json::array()}}});
            })),
            "phases[0].ranges[0].phase: not a training phase");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) {
              (*j)["steps_gpu"]["nccl"] = nlohmann::json::array({false, 3, 0});
            })),
            "steps_gpu.nccl: NCCL kernels counted without any");
  EXPECT_EQ(DecodeError(Rewritten([](nlohmann::json* j) {
              (*j)["steps_gpu"]["overlap"] = {{"temporal", nlohmann::json::array({100, 10, 50, 30})},
                                              {"categories", nlohmann::json::array({0, 0, 0, 0, 0, 0, 0, 0, 0})},
                                              {"steps", nlohmann::json::array()}};
            })),
            "steps_gpu.overlap.temporal: idle, compute and non-compute time do not make the active span");
  const nlohmann::json idle = {{"recorded", true}, {"why_not", ""}, {"steps", 4}, {"step_ns", 1000}, {"busy_ns", 600},
                               {"idle_ns", 400}, {"idle_by_cause", nlohmann::json::array({100, 100, 100, 100})},
                               {"sync_call", ""}, {"sync_call_idle_ns", 0}, {"sync_calls", 0},
                               {"sync_after_dtoh", false}, {"sync_copy_bytes", 0}, {"kernels", 8},
                               {"kernel_median_ns", 50.0}, {"launch_calls", 8}, {"launch_median_ns", 5.0},
                               {"medians_exact", true}};
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) { (*j)["steps_gpu"]["idle"] = idle; })), "(no error)");
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) {
              (*j)["steps_gpu"]["idle"] = idle;
              (*j)["steps_gpu"]["idle"]["busy_ns"] = 700;
            })),
            "steps_gpu.idle: busy and idle time do not make the steps' time");
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) {
              (*j)["steps_gpu"]["idle"] = idle;
              (*j)["steps_gpu"]["idle"]["idle_by_cause"][3] = 0;
            })),
            "steps_gpu.idle.idle_by_cause: the causes do not add up to the idle time");
  auto device = [](nlohmann::json activity, uint64_t active_ns, uint64_t filled) {
    const nlohmann::json none = nlohmann::json::array({0, 0, 0, 0, 0, 0.0, 0, nlohmann::json::array()});
    return nlohmann::json::array({nlohmann::json::array(
        {0, "", 1, 10, 0, 0, 0, 10, active_ns, 100, 130, none, std::move(activity), filled})});
  };
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) {
              (*j)["devices"] = device(nlohmann::json::array({100, 10, 5, 15}), 25, 0);
            })),
            "(no error)");
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) {
              (*j)["devices"] = device(nlohmann::json::array({100, 10, 5, 15}), 20, 0);
            })),
            "devices[0].activity: its length is not the active time and what was filled");
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) {
              (*j)["devices"] = device(nlohmann::json::array({100, 10, 0, 20}), 30, 0);
            })),
            "devices[0].activity: intervals that are empty, touch or pass 2^64 ns");
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) {
              (*j)["devices"] = device(nlohmann::json::array({100, 10, 5, 10}), 20, 0);
            })),
            "devices[0]: the active window is not the activity's span");
  const nlohmann::json stream = nlohmann::json::array({0, 7, 2, 10, 0, 0});
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) {
              (*j)["gpu_ops"]["idle_kinds"] = nlohmann::json::array({stream, stream});
            })),
            "gpu_ops.idle_kinds[1]: streams not in (device, stream) order, or one twice");
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) {
              (*j)["gpu_ops"]["idle_kinds"] = nlohmann::json::array({stream});
              (*j)["gpu_ops"]["unlaunched"] = nlohmann::json::array({3, 100});
            })),
            "gpu_ops.unlaunched.ops: more ops than the streams have");
  const nlohmann::json durations = nlohmann::json::array({2, 30, 10, 20, 0, 0.0, 0, nlohmann::json::array()});
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) {
              (*j)["gpu_ops"]["launches"] = nlohmann::json::array({nlohmann::json::array({true, "_Z1kv", durations, durations, 0, 0, 0})});
            })),
            "gpu_ops.launches[0].name: not a memcpy or memset");
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) {
              (*j)["gpu_ops"]["launches"] = nlohmann::json::array({nlohmann::json::array({false, "_Z1kv", durations, durations, 3, 0, 0})});
            })),
            "gpu_ops.launches[0]: more outliers than launches");
  EXPECT_EQ(DecodeError(Rewritten([&](nlohmann::json* j) {
              (*j)["gpu_ops"]["launches"] = nlohmann::json::array({nlohmann::json::array({false, "_Z1kv", durations, durations, 0, 0, 0})});
            })),
            "(no error)");
}

}  // namespace
}  // namespace trainprof::collector
