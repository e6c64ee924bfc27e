// Writes the synthetic seeds of tests/fuzz/corpus/ (tests/fuzz/make_corpus runs it): traces built
// with the unit tests' TraceBuilder for what the real seeds rarely hold — every record kind, many
// small chunks per thread, NVTX misuse, DDP ranks with a straggler, an exec'd image chain.
//
//   trainprof_fuzz_seeds DIR     writes DIR/builder-*.trace (one file) and DIR/builder-*.traces
//                                (several files concatenated: the fuzz entry splits them again)
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "phase_builder.h"
#include "trace_builder.h"

namespace {

using trainprof::test::kMs;
using trainprof::test::PhaseThread;
using trainprof::test::TraceBuilder;
namespace fmt = trainprof::format;
using fmt::Phase;

constexpr uint64_t T0 = 1'000'000'000;

// One process, two threads, every record tag, in a small layout (1 KiB header region, 256-byte
// chunks) so that each thread's records spread over many interleaved chunks.
std::vector<uint8_t> EveryRecord() {
  TraceBuilder b(77, 1, T0);
  b.Layout(1024, 256).Env("RANK", "0").Env("WORLD_SIZE", "1").HeaderEnd(fmt::EndKind::kExit, 0, T0 + 90 * kMs);
  const int t0 = b.Thread(77), t1 = b.Thread(78);
  b.ThreadName(t0, 77, "main");
  b.ThreadName(t1, 78, "pt_data_worker");
  b.Role(t0, "main");
  b.ProcessEnv(t0, "LOCAL_RANK=0");
  const uint64_t dom = b.Domain(t0, "torch");
  const uint64_t unnamed = b.UnnamedDomain(t1);
  b.RawFields(t0, static_cast<uint8_t>(fmt::RecordTag::kCategoryName), {dom, 7, b.String(t0, "checkpoints")});
  uint64_t now = T0 + kMs;
  for (int i = 0; i < 24; ++i) {
    const int t = i % 3 == 0 ? t1 : t0;
    const uint64_t d = i % 4 == 0 ? unnamed : (i % 2 ? dom : 0);
    b.Push(t, now, "step " + std::to_string(i % 4), d, static_cast<uint64_t>(i % 8));
    b.Push(t, now + 10, "inner");
    b.Mark(t, now + 20, "mark", d, 7);
    b.Pop(t, now + 100 + i);
    b.Pop(t, now + 200 + i, d);
    b.Start(t, now + 300, "io", 1000 + i, d);
    b.EndRange(t == t0 ? t1 : t0, now + 400 + i, 1000 + i);
    now += kMs;
  }
  b.Pop(t0, now);                         // a pop on an empty stack
  b.Push(t1, now, "left_open");           // never closed
  b.EndRange(t0, now + 1, 99'999);        // an end without a start
  b.Misuse(t0, now + 2, fmt::MisuseKind::kNullName);
  b.Misuse(t0, now + 3, fmt::MisuseKind::kNameTruncated, 5000);
  b.Misuse(t1, now + 4, fmt::MisuseKind::kBadAttributes, 3);
  b.RawFields(t0, static_cast<uint8_t>(fmt::RecordTag::kDomainDestroy), {5, dom});
  b.Fork(t0, now + 10, 79);
  b.ChildExit(t0, now + 20, 79, fmt::EndKind::kSignal, 9);
  b.Exec(t1, now + 30, "/bin/true");
  b.ProcessEnd(t0, now + 40, fmt::EndKind::kExit, 0);
  return b.Build();
}

void Append(std::vector<uint8_t>* out, const TraceBuilder& b) {
  const std::vector<uint8_t> bytes = b.Build();
  out->insert(out->end(), bytes.begin(), bytes.end());
}

// The run's files use a compact layout (1 KiB header region, 4 KiB chunks), as make_corpus gives
// the real seeds: the seeds stay small and most of their bytes matter.
constexpr uint32_t kRegion = 1024, kChunk = 4096;

// torchrun (pid 400, exec'd from a shell image) starting two DDP ranks; rank 1 is late by 15 ms
// each step and learns its RANK after start (PROCESS_ENV); rank 0 has a DataLoader worker whose
// start-up runs worker_init_fn; rank 1 is killed by a signal, which only its parent saw.
std::vector<uint8_t> DdpRun() {
  std::vector<uint8_t> out;
  const uint64_t end = T0 + 900 * kMs;

  TraceBuilder shell(400, 1, T0);
  shell.Layout(kRegion, kChunk).Command({"/bin/sh", "-c", "torchrun train.py"}).Executable("/bin/sh");
  const int st = shell.Thread(400);
  shell.Exec(st, T0 + kMs, "/usr/bin/torchrun");
  shell.HeaderEnd(fmt::EndKind::kExec, 0, T0 + kMs);
  Append(&out, shell);

  TraceBuilder launcher(400, 1, T0 + 2 * kMs);
  launcher.Layout(kRegion, kChunk).ImageIndex(1).Command({"/usr/bin/python3", "/usr/bin/torchrun", "train.py"});
  const int lt = launcher.Thread(400);
  launcher.Role(lt, "launcher");
  launcher.Fork(lt, T0 + 5 * kMs, 401);
  launcher.Fork(lt, T0 + 6 * kMs, 402);
  launcher.ChildExit(lt, end - 10 * kMs, 402, fmt::EndKind::kSignal, 15);
  launcher.ChildExit(lt, end - 5 * kMs, 401, fmt::EndKind::kExit, 0);
  launcher.HeaderEnd(fmt::EndKind::kExit, 1, end);
  Append(&out, launcher);

  TraceBuilder r0(401, 400, T0 + 5 * kMs), r1(402, 400, T0 + 6 * kMs);
  r0.Layout(kRegion, kChunk).Env("RANK", "0").Env("LOCAL_RANK", "0").Env("WORLD_SIZE", "2");
  r0.Flags(fmt::kFlagFollowChildren);
  r0.HeaderEnd(fmt::EndKind::kExit, 0, end - 5 * kMs);
  r1.Layout(kRegion, kChunk).Env("WORLD_SIZE", "2").Flags(fmt::kFlagFollowChildren);
  PhaseThread a(r0, 401), b(r1, 402);
  r1.ProcessEnv(b.thread(), "RANK=1");
  uint64_t t = T0 + 20 * kMs;
  for (int i = 0; i < 8; ++i) {
    t = a.Step(t, {.wait = 2 * kMs, .zero_grad = kMs / 10, .forward = 8 * kMs});
    a.Push(t, Phase::kBackward);  // rank 0 waits for rank 1 in the all-reduce inside backward
    a.Range(t + 5 * kMs, t + 24 * kMs, Phase::kCollective, "all_reduce");
    a.Pop(t + 25 * kMs);
    b.Range(t - 8 * kMs - kMs / 10 - 2 * kMs, t - 8 * kMs - kMs / 10, Phase::kDataWait);
    b.Range(t - 8 * kMs, t + 15 * kMs, Phase::kForward);
    b.Range(t + 15 * kMs, t + 25 * kMs, Phase::kBackward);
    a.Range(t + 25 * kMs, t + 27 * kMs, Phase::kOptimizerStep);
    b.Range(t + 25 * kMs, t + 27 * kMs, Phase::kOptimizerStep);
    t += 30 * kMs;
  }
  a.EpochEnd(t, kMs);
  Append(&out, r0);
  Append(&out, r1);

  TraceBuilder w(403, 401, T0 + 12 * kMs);
  w.Layout(kRegion, kChunk).Flags(fmt::kFlagForkedChild | fmt::kFlagFollowChildren);
  w.HeaderEnd(fmt::EndKind::kExit, 0, t);
  PhaseThread pw(w, 403);
  w.Role(pw.thread(), "DataLoader worker");
  uint64_t f = pw.builder().start_ns() + kMs;
  pw.Range(f, f + 3 * kMs, Phase::kWorkerInit);
  f += 3 * kMs;
  for (int k = 0; k < 8; ++k) f = pw.Fetch(f, 4, kMs / 2, kMs / 4, kMs) + 20 * kMs;
  Append(&out, w);
  return out;
}

bool Write(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  bool ok = f != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (f != nullptr && std::fclose(f) != 0) ok = false;
  if (!ok) std::fprintf(stderr, "trainprof_fuzz_seeds: cannot write %s\n", path.c_str());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: trainprof_fuzz_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  try {
    bool ok = Write(dir + "/builder-every-record.trace", EveryRecord());
    ok = Write(dir + "/builder-ddp-straggler.traces", DdpRun()) && ok;
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainprof_fuzz_seeds: %s\n", e.what());
    return 1;
  }
}
