// Writes the input traces of the golden-output cases (tests/golden/README.md), deterministically:
// fixed pids, hosts, clocks and timings, through the test trace builder
// (tests/unit/collector/trace_builder.h), which writes files exactly as
// format/trainprof/trace_format.h describes.
//
//   make_golden_traces --list       prints the case names, one a line
//   make_golden_traces CASE DIR     writes CASE's pid-*.trace files into DIR (created if needed)
//
// Each case mirrors what the library records for a real program (the planted programs in
// tests/programs/ and the workloads in tests/workloads/, as `trainprof run --follow-children`
// records them): thread names, the phase domain's category names, fork/exec/child-exit events,
// rank variables, CUDA API names with their correlation ids. Exit status 0, or 1 with a
// `make_golden_traces: ` message on stderr.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "phase_builder.h"
#include "trace_builder.h"

namespace {

using trainprof::format::Phase;
using trainprof::test::kMs;
using trainprof::test::PhaseThread;
using trainprof::test::StepPlan;
using trainprof::test::TraceBuilder;
namespace fmt = trainprof::format;

constexpr uint64_t kUs = 1'000;
/// CLOCK_MONOTONIC of the first process start in every case.
constexpr uint64_t T0 = 5'000'000'000;
/// CLOCK_REALTIME at T0: 2025-03-04 05:06:07 UTC.
constexpr uint64_t kRealtimeAtT0 = 1'741'064'767'000'000'000ull;

/// A process image starting at `start` (CLOCK_MONOTONIC), with the header fields `trainprof run
/// --follow-children` writes; `realtime` is read with the same offset for every process of a case.
std::unique_ptr<TraceBuilder> Process(int32_t pid, int32_t ppid, uint64_t start, std::vector<std::string> argv,
                                      std::string exe, uint32_t flags = fmt::kFlagFollowChildren) {
  auto b = std::make_unique<TraceBuilder>(pid, ppid, start);
  b->StartRealtime(kRealtimeAtT0 + (start - T0)).Command(std::move(argv)).Executable(std::move(exe)).Flags(flags);
  b->Host("gpu-node-01");
  return b;
}

/// The category names the Python shim defines in the phase domain (format/trainprof/phases.h).
void PhaseCategories(TraceBuilder& b, int th, uint64_t domain) {
  static const char* const kNames[] = {"data wait",   "data end",   "batch fetch",    "dataset item",  "collate",
                                       "worker start-up", "forward", "backward",   "optimizer step", "zero_grad",
                                       "collective",  "training step", "validation step"};
  for (uint64_t c = 0; c < std::size(kNames); ++c) b.CategoryName(th, domain, c + 1, kNames[c]);
}

using Case = std::vector<std::unique_ptr<TraceBuilder>>;

// ----- nvtx_workload: tests/programs/nvtx_workload.cc --------------------------------------------
// main (pid 4100): 20 x "step" { "inner" }, an extra pop on an empty stack, 3 marks "checkpoint",
// the category name "checkpoints", 5 x "io" in domain "trainprof_test" (then destroyed), 4 x
// "async_copy" started on the main thread and ended by a second thread, a forked child (4108: 10 x
// "child_work"), an exec'd child (4109: image 0 execs tp_nvtx_child, image 1: 7 x "exec_work",
// exit 3), and "left_open" pushed just before exit.
Case NvtxWorkload() {
  const std::vector<std::string> argv = {"build/tests/programs/tp_nvtx_workload",
                                         "build/tests/programs/tp_nvtx_child"};
  const std::string exe = "/home/ci/trainprof/build/tests/programs/tp_nvtx_workload";
  Case c;
  c.push_back(Process(4100, 4099, T0, argv, exe));
  TraceBuilder& m = *c.back();
  const int t = m.Thread(4100);
  m.ThreadName(t, 4100, "tp_nvtx_workloa");  // every thread is named by its comm (15 bytes) first
  m.ThreadName(t, 4100, "trainer-main");
  uint64_t now = T0 + 180 * kUs;
  m.Push(t, now, "step");
  m.Push(t, now + 2 * kUs, "inner");
  m.Pop(t, now + 3 * kUs);
  m.Pop(t, now + 4 * kUs);
  m.Pop(t, now + 5 * kUs);  // on an empty stack
  now += 5'080 * kUs;
  for (int i = 1; i < 20; ++i) {
    const uint64_t jitter = (i % 4) * 61 * kUs;  // sleeps overshoot a little, by varying amounts
    m.Push(t, now, "step");
    m.Push(t, now + 4'060 * kUs + jitter, "inner");
    m.Pop(t, now + 5'120 * kUs + jitter);
    m.Pop(t, now + 5'122 * kUs + jitter);
    now += 5'130 * kUs + jitter;
  }
  for (int i = 0; i < 3; ++i) m.Mark(t, now + i * kUs, "checkpoint");
  now += 10 * kUs;
  m.CategoryName(t, 0, 7, "checkpoints");
  const uint64_t d = m.Domain(t, "trainprof_test");
  for (int i = 0; i < 5; ++i) {
    m.Push(t, now, "io", d);
    m.Pop(t, now + 1'070 * kUs + i * 13 * kUs, d);
    now += 1'080 * kUs + i * 13 * kUs;
  }
  m.DomainDestroy(t, now, d);
  const uint64_t kRangeIds = uint64_t{1} << 40;  // the library's range ids: 1 << 40, then a counter
  for (uint64_t id = 1; id <= 4; ++id) m.Start(t, now + id * kUs, "async_copy", kRangeIds + id);
  const int ender = m.Thread(4107);
  m.ThreadName(ender, 4107, "tp_nvtx_workloa");
  for (uint64_t id = 1; id <= 4; ++id) m.EndRange(ender, now + 3'090 * kUs + id * kUs, kRangeIds + id);
  now += 3'200 * kUs;
  m.Fork(t, now, 4108);
  m.Fork(t, now + 240 * kUs, 4109);
  const uint64_t fork_at = now;

  // The forked child: the parent's thread, as a new process; _exit(0) writes its end.
  c.push_back(Process(4108, 4100, fork_at + 40 * kUs, argv, exe, fmt::kFlagFollowChildren | fmt::kFlagForkedChild));
  TraceBuilder& f = *c.back();
  const int ft = f.Thread(4108);
  f.ThreadName(ft, 4108, "tp_nvtx_workloa");
  uint64_t ct = fork_at + 90 * kUs;
  for (int i = 0; i < 10; ++i) {
    f.Push(ft, ct, "child_work");
    f.Pop(ft, ct + 2'070 * kUs + (i % 3) * 20 * kUs);
    ct += 2'080 * kUs + (i % 3) * 20 * kUs;
  }
  f.ProcessEnd(ft, ct + 10 * kUs, fmt::EndKind::kExit, 0);
  f.HeaderEnd(fmt::EndKind::kExit, 0, ct + 10 * kUs);
  const uint64_t forked_end = ct + 10 * kUs;

  // The exec'd child: image 0 (forked) execs tp_nvtx_child; image 1 is tp_nvtx_child.
  const uint64_t e0 = fork_at + 240 * kUs + 35 * kUs;
  c.push_back(Process(4109, 4100, e0, argv, exe, fmt::kFlagFollowChildren | fmt::kFlagForkedChild));
  TraceBuilder& x0 = *c.back();
  const int xt0 = x0.Thread(4109);
  x0.ThreadName(xt0, 4109, "tp_nvtx_workloa");
  x0.Exec(xt0, e0 + 60 * kUs, "build/tests/programs/tp_nvtx_child");
  x0.HeaderEnd(fmt::EndKind::kExec, 0, e0 + 60 * kUs);
  const uint64_t e1 = e0 + 900 * kUs;
  c.push_back(Process(4109, 4100, e1, {"build/tests/programs/tp_nvtx_child"},
                      "/home/ci/trainprof/build/tests/programs/tp_nvtx_child"));
  TraceBuilder& x1 = *c.back();
  x1.ImageIndex(1);
  const int xt1 = x1.Thread(4109);
  x1.ThreadName(xt1, 4109, "tp_nvtx_child");
  uint64_t xt = e1 + 150 * kUs;
  for (int i = 0; i < 7; ++i) {
    x1.Push(xt1, xt, "exec_work");
    x1.Pop(xt1, xt + 1'060 * kUs + i * 5 * kUs);
    xt += 1'070 * kUs + i * 5 * kUs;
  }
  // main returned 3: the library's destructor sees no status (the parent's CHILD_EXIT has it).
  x1.ProcessEnd(xt1, xt + 20 * kUs, fmt::EndKind::kReturned, 0);
  x1.HeaderEnd(fmt::EndKind::kReturned, 0, xt + 20 * kUs);
  const uint64_t exec_end = xt + 20 * kUs;

  // The parent reaps the forked child, then the exec'd one, pushes "left_open" and returns 0.
  m.ChildExit(t, forked_end + 70 * kUs, 4108, fmt::EndKind::kExit, 0);
  m.ChildExit(t, std::max(exec_end, forked_end) + 90 * kUs, 4109, fmt::EndKind::kExit, 3);
  const uint64_t end = std::max(exec_end, forked_end) + 150 * kUs;
  m.Push(t, end - 30 * kUs, "left_open");
  m.ProcessEnd(t, end, fmt::EndKind::kReturned, 0);
  m.HeaderEnd(fmt::EndKind::kExit, 0, end);  // the launcher saw exit 0
  return c;
}

// ----- pytorch_dataloader: tests/workloads/dataloader_train.py --workers 2 --batches 12 ----------
// The main process (pid 5200) trains nn.Linear with SGD on batches from 2 DataLoader workers
// (5230, 5231); each batch is 8 Slow.__getitem__ (sleep 2 ms, a bit more) and default_collate.
// Input-bound: the workers deliver a batch every ~10 ms, a step computes ~1.3 ms.
Case PytorchDataloader() {
  const std::vector<std::string> argv = {"/usr/bin/python3", "tests/workloads/dataloader_train.py", "--workers", "2",
                                         "--batches", "12"};
  const std::string exe = "/usr/bin/python3.11";
  Case c;
  c.push_back(Process(5200, 5198, T0, argv, exe));
  TraceBuilder& mb = *c.back();
  PhaseThread m(mb, 5200);
  mb.ThreadName(m.thread(), 5200, "python3");
  const uint64_t fork0 = T0 + 1'410 * kMs;  // after `import torch`
  mb.Fork(m.thread(), fork0, 5230);
  mb.Fork(m.thread(), fork0 + 9 * kMs, 5231);
  PhaseCategories(mb, m.thread(), 1);

  // Workers: fetch batches back to back, worker w fetching batches w, w + 2, ...
  std::vector<uint64_t> ready(12);
  for (int w = 0; w < 2; ++w) {
    const int32_t pid = 5230 + w;
    const uint64_t start = fork0 + w * 9 * kMs + 300 * kUs;
    c.push_back(Process(pid, 5200, start, argv, exe, fmt::kFlagFollowChildren | fmt::kFlagForkedChild));
    TraceBuilder& wb = *c.back();
    const int th = wb.Thread(static_cast<uint32_t>(pid));
    wb.ThreadName(th, static_cast<uint32_t>(pid), "python3");
    wb.Role(th, "DataLoader worker");
    PhaseThread pw(wb, static_cast<uint32_t>(pid));
    PhaseCategories(wb, th, 1);
    uint64_t t = start + 62 * kMs;
    for (int k = w; k < 12; k += 2) {
      const uint64_t item = 2'080 * kUs + (k % 3) * 45 * kUs;
      t = pw.Fetch(t, 8, item, 1'150 * kUs, 40 * kUs);
      ready[k] = t + 600 * kUs;  // pickled and through the queue
      t += 900 * kUs;            // the next index arrives
    }
    // After the loop the main process sends None; the worker exits normally.
    const uint64_t end = T0 + 1'410 * kMs + 260 * kMs + w * 2 * kMs;
    wb.ProcessEnd(th, end, fmt::EndKind::kExit, 0);
    wb.HeaderEnd(fmt::EndKind::kExit, 0, end);
  }

  uint64_t t = fork0 + 12 * kMs;
  for (int k = 0; k < 12; ++k) {
    const uint64_t got = std::max(ready[k], t + 50 * kUs);
    m.Range(t, got, Phase::kDataWait);
    t = got + 60 * kUs;
    t = m.Step(t, {.zero_grad = 95 * kUs, .forward = 330 * kUs + (k == 0 ? 8 * kMs : 0), .backward = 510 * kUs,
                   .optimizer = 270 * kUs, .other = 120 * kUs});
  }
  const uint64_t exits = T0 + 1'410 * kMs + 263 * kMs;
  mb.ChildExit(m.thread(), exits, 5230, fmt::EndKind::kExit, 0);
  mb.ChildExit(m.thread(), exits + 110 * kUs, 5231, fmt::EndKind::kExit, 0);
  mb.ProcessEnd(m.thread(), exits + 1'900 * kMs, fmt::EndKind::kExit, 0);  // interpreter shutdown
  mb.HeaderEnd(fmt::EndKind::kExit, 0, exits + 1'900 * kMs);
  return c;
}

// ----- cuda: tests/workloads/gpu_train.py-like loop on one GPU -----------------------------------
// pid 6300 trains 8 steps on a TensorDataset (DataLoader, num_workers=0, batch 16): each step copies
// the batch to the GPU (pageable HtoD, cudaMemcpyAsync), zero_grad (cudaMemsetAsync), forward (2
// kernels), backward (3 kernels), optimizer (1 kernel), and loss.item() (DtoH copy of 4 B, then
// cudaStreamSynchronize while the GPU finishes). Before the loop: cudaMalloc, cudaMemcpy of the
// weights, cudaDeviceSynchronize. The CUPTI drainer thread (6342) writes the GPU activity.
Case Cuda() {
  const std::string exe = "/usr/bin/python3.11";
  Case c;
  c.push_back(Process(6300, 6297, T0, {"/usr/bin/python3", "train_gpu.py", "--steps", "8"}, exe));
  TraceBuilder& b = *c.back();
  PhaseThread m(b, 6300);
  const int t = m.thread();
  b.ThreadName(t, 6300, "python3");
  PhaseCategories(b, t, 1);
  const int g = b.Thread(6342);
  uint64_t corr = 1;
  uint64_t now = T0 + 2'100 * kMs;  // cuInit inside the first CUDA call
  b.GpuStatus(t, now, fmt::GpuState::kOn, 0, 18, 12040);
  b.Device(g, 0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85'028'896'768ull);
  b.Context(g, 1, 0);
  auto api = [&](uint64_t at, uint64_t dur, const char* name) {
    b.ApiCall(t, at, at + dur, name, corr);
    return corr++;
  };
  const char* const kGemm = "_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_128x128_8x4_nn_align1EEvNT_6ParamsE";
  const char* const kRelu =
      "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_21clamp_min_kernel_cudaERNS_18TensorIteratorBaseERKN3c106"
      "ScalarEENKUlvE_clEvENKUlvE5_clEvEUlfE_NS_6detail5ArrayIPcLi2EEEEEviT0_T1_";
  const char* const kFill =
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_";
  const char* const kSgd =  // SGD(foreach=True): param.add_(grad, alpha=-lr) over the parameter list
      "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi3EEENS1_"
      "24BinaryOpListAlphaFunctorIfLi3ELi2ELi2EEEJSt4plusIfEfEEEvT_T0_DpT1_";
  // Set-up: weights to the GPU.
  uint64_t k = api(now + 10 * kUs, 1'850 * kUs, "cudaMalloc_v3020");
  now += 2 * kMs;
  k = api(now, 410 * kUs, "cudaMemcpy_v3020");
  b.Memcpy(g, {.start = now + 30 * kUs, .end = now + 390 * kUs, .kind = fmt::MemcpyKind::kHtoD, .bytes = 8'437'800,
               .correlation = k, .src = fmt::MemoryKind::kPageable, .dst = fmt::MemoryKind::kDevice, .async = false});
  now += 500 * kUs;
  k = api(now, 40 * kUs, "cudaDeviceSynchronize_v3020");
  b.Sync(g, now + 5 * kUs, now + 35 * kUs, fmt::SyncType::kContextSynchronize, k, -1);
  now += 3 * kMs;

  for (int s = 0; s < 8; ++s) {
    const uint64_t step = now;
    // next(it): the main process fetches the batch itself (num_workers=0): 16 items and collate.
    m.Push(step, Phase::kDataWait, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
    m.Push(step + 20 * kUs, Phase::kFetch);
    for (int i = 0; i < 16; ++i) {
      m.Range(step + 30 * kUs + i * 41 * kUs, step + 68 * kUs + i * 41 * kUs, Phase::kGetItem,
              "TensorDataset.__getitem__");
    }
    m.Range(step + 700 * kUs, step + 870 * kUs, Phase::kCollate);
    m.Pop(step + 880 * kUs);
    m.Pop(step + 900 * kUs);
    now = step + 950 * kUs;
    k = api(now, 25 * kUs, "cudaMemcpyAsync_v3020");  // x.to(dev): pageable, so the call waits for the copy
    uint64_t gpu = now + 30 * kUs;
    b.Memcpy(g, {.start = gpu, .end = gpu + 22 * kUs, .kind = fmt::MemcpyKind::kHtoD, .bytes = 262'144,
                 .correlation = k, .src = fmt::MemoryKind::kPageable, .dst = fmt::MemoryKind::kDevice});
    gpu += 22 * kUs;
    now += 60 * kUs;
    m.Push(now, Phase::kZeroGrad);
    k = api(now + 5 * kUs, 9 * kUs, "cudaMemsetAsync_v3020");
    b.Memset(g, {.start = std::max(gpu, now + 20 * kUs), .end = std::max(gpu, now + 20 * kUs) + 3 * kUs,
                 .bytes = 8'437'800, .correlation = k});
    gpu = std::max(gpu, now + 20 * kUs) + 3 * kUs;
    m.Pop(now + 20 * kUs);
    now += 30 * kUs;
    auto launch = [&](const char* name, uint64_t call, uint64_t run, uint32_t grid) {
      k = api(now, call, "cudaLaunchKernel_v7000");
      const uint64_t start = std::max(gpu + 2 * kUs, now + call);
      b.Kernel(g, {.start = start, .end = start + run, .name = name, .correlation = k, .grid = {grid, 1, 1},
                   .block = {256, 1, 1}, .registers = 64});
      gpu = start + run;
      now += call + 4 * kUs;
    };
    m.Push(now, Phase::kForward, "Sequential.forward");
    launch(kGemm, 7 * kUs, 610 * kUs, 256);
    launch(kRelu, 5 * kUs, 6 * kUs, 512);
    launch(kGemm, 6 * kUs, 12 * kUs, 16);
    m.Pop(now);
    now += 15 * kUs;
    m.Push(now, Phase::kBackward);
    launch(kFill, 5 * kUs, 2 * kUs, 1);
    launch(kGemm, 6 * kUs, 14 * kUs, 16);
    launch(kGemm, 6 * kUs, 1'180 * kUs, 256);
    m.Pop(now);
    m.Push(now + 5 * kUs, Phase::kOptimizerStep);
    now += 10 * kUs;
    launch(kSgd, 8 * kUs, 40 * kUs, 108);
    m.Pop(now);
    // loss.item(): DtoH 4 B into pageable memory, synchronous.
    k = api(now + 10 * kUs, 6 * kUs, "cudaMemcpyAsync_v3020");
    b.Memcpy(g, {.start = gpu + 3 * kUs, .end = gpu + 5 * kUs, .kind = fmt::MemcpyKind::kDtoH, .bytes = 4,
                 .correlation = k, .src = fmt::MemoryKind::kDevice, .dst = fmt::MemoryKind::kPageable});
    const uint64_t sync_at = now + 16 * kUs;
    const uint64_t sync_end = std::max(sync_at + 4 * kUs, gpu + 8 * kUs);
    k = api(sync_at, sync_end - sync_at, "cudaStreamSynchronize_v3020");
    b.Sync(g, sync_at + 2 * kUs, sync_end - 1 * kUs, fmt::SyncType::kStreamSynchronize, k);
    now = sync_end + 140 * kUs;  // the Python loop: the loss into a list, the next index
  }
  m.Range(now, now + 120 * kUs, Phase::kDataWait, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  m.DataEnd(now + 120 * kUs);  // StopIteration: the epoch ends
  now += 2 * kMs;
  b.GpuStatus(t, now, fmt::GpuState::kFlushed, 0, 18, 12040);
  b.ProcessEnd(t, now + 300 * kMs, fmt::EndKind::kExit, 0);
  b.HeaderEnd(fmt::EndKind::kExit, 0, now + 300 * kMs);
  return c;
}

// ----- ddp_straggler: torchrun --nproc-per-node 2 tests/workloads/ddp_straggler.py --steps 6 ------
// torchrun (7000) starts ranks 7010 and 7011 (exec'd python, RANK/LOCAL_RANK/WORLD_SIZE in their
// environment); rank 1 computes ~60 ms more before each backward, so rank 0 waits for it in the
// backward's all-reduce.
Case DdpStraggler() {
  Case c;
  c.push_back(Process(7000, 6990, T0,
                      {"/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc-per-node", "2",
                       "tests/workloads/ddp_straggler.py", "--steps", "6"},
                      "/usr/bin/python3.11"));
  TraceBuilder& l = *c.back();
  const int lt = l.Thread(7000);
  l.ThreadName(lt, 7000, "python3");
  const uint64_t spawn = T0 + 800 * kMs;
  const std::vector<std::string> rank_argv = {"/usr/bin/python3", "-u", "tests/workloads/ddp_straggler.py", "--steps",
                                              "6"};
  uint64_t rank_end[2] = {};
  for (int r = 0; r < 2; ++r) {
    const int32_t pid = 7010 + r;
    const uint64_t start = spawn + r * 4 * kMs;
    c.push_back(Process(pid, 7000, start, rank_argv, "/usr/bin/python3.11"));
    TraceBuilder& b = *c.back();
    b.Env("RANK", std::to_string(r)).Env("LOCAL_RANK", std::to_string(r)).Env("WORLD_SIZE", "2");
    PhaseThread p(b, static_cast<uint32_t>(pid));
    b.ThreadName(p.thread(), static_cast<uint32_t>(pid), "python3");
    PhaseCategories(b, p.thread(), 1);
    // init_process_group: the rendezvous, both ranks leave it together.
    p.Range(start + 1'300 * kMs - r * 4 * kMs, spawn + 1'420 * kMs, Phase::kCollective, "init_process_group");
    uint64_t t = spawn + 1'500 * kMs;
    for (int s = 0; s < 6; ++s) {
      const uint64_t extra = r == 1 ? 60 * kMs + (s % 2) * 3 * kMs : 0;
      const uint64_t wait = r == 0 ? 60 * kMs + (s % 2) * 3 * kMs : 0;  // inside the all-reduce
      p.Range(t, t + 400 * kUs, Phase::kDataWait, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
      p.Range(t + 450 * kUs, t + 600 * kUs, Phase::kZeroGrad);
      p.Range(t + 650 * kUs, t + 12'650 * kUs, Phase::kForward, "DistributedDataParallel.forward");
      const uint64_t bw = t + 12'700 * kUs + extra;  // rank 1's busy() before backward is not a phase
      p.Range(bw, bw + 21 * kMs + wait, Phase::kBackward);
      p.Range(bw + 21'050 * kUs + wait, bw + 22'850 * kUs + wait, Phase::kOptimizerStep);
      t = bw + 23 * kMs + wait;
    }
    rank_end[r] = t + 210 * kMs + r * 1 * kMs;  // destroy_process_group, exit
    b.ProcessEnd(p.thread(), rank_end[r], fmt::EndKind::kExit, 0);
    b.HeaderEnd(fmt::EndKind::kExit, 0, rank_end[r]);
  }
  // torchrun uses subprocess.Popen (posix_spawn: no fork record) and waits for both ranks.
  l.ChildExit(lt, rank_end[0] + 90 * kMs, 7010, fmt::EndKind::kExit, 0);
  l.ChildExit(lt, rank_end[1] + 90 * kMs + 20 * kUs, 7011, fmt::EndKind::kExit, 0);
  l.ProcessEnd(lt, rank_end[1] + 140 * kMs, fmt::EndKind::kExit, 0);
  l.HeaderEnd(fmt::EndKind::kExit, 0, rank_end[1] + 140 * kMs);
  return c;
}

// ----- many_ranks: torchrun --nproc-per-node 20 train.py: one rank's input is slow --------------
// torchrun (7100) starts ranks 0..19 (7110..7129); rank 13 waits ~20 ms for each batch (its
// DataLoader is slow), so it reaches every backward late and the other ranks wait for it in the
// all-reduce; rank 19 exits with 1 after its steps. Each forward launches one kernel on the rank's
// GPU (device = local rank). More ranks than the text report lists in full.
Case ManyRanks() {
  constexpr int kRanks = 20;
  Case c;
  c.push_back(Process(7100, 7090, T0,
                      {"/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc-per-node", "20", "train.py"},
                      "/usr/bin/python3.11"));
  TraceBuilder& l = *c.back();
  const int lt = l.Thread(7100);
  l.ThreadName(lt, 7100, "python3");
  const uint64_t spawn = T0 + 700 * kMs;
  const std::vector<std::string> rank_argv = {"/usr/bin/python3", "-u", "train.py"};
  std::vector<uint64_t> rank_end(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    const int32_t pid = 7110 + r;
    const uint64_t start = spawn + r * kMs;
    c.push_back(Process(pid, 7100, start, rank_argv, "/usr/bin/python3.11"));
    TraceBuilder& b = *c.back();
    b.Env("RANK", std::to_string(r)).Env("LOCAL_RANK", std::to_string(r % 8)).Env("WORLD_SIZE", "20");
    PhaseThread p(b, static_cast<uint32_t>(pid));
    b.ThreadName(p.thread(), static_cast<uint32_t>(pid), "python3");
    PhaseCategories(b, p.thread(), 1);
    const int gpu = b.Thread(static_cast<uint32_t>(pid) + 1);  // CUPTI's buffer drainer
    p.Range(start + 1'200 * kMs, spawn + 1'300 * kMs, Phase::kCollective, "init_process_group");
    uint64_t t = spawn + 1'400 * kMs;
    for (int s = 0; s < 6; ++s) {
      const uint64_t data = r == 13 ? 20 * kMs : 400 * kUs;
      const uint64_t wait = r == 13 ? 0 : 19'600 * kUs;  // in the all-reduce, for rank 13
      const uint64_t forward = 12 * kMs + static_cast<uint64_t>(r % 3) * 50 * kUs;
      p.Range(t, t + data, Phase::kDataWait, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
      p.Push(t + data + 50 * kUs, Phase::kForward, "DistributedDataParallel.forward");
      const uint64_t correlation = static_cast<uint64_t>(s) + 1;
      b.ApiCall(p.thread(), t + data + 100 * kUs, t + data + 105 * kUs, "cudaLaunchKernel_v7000", correlation);
      p.Pop(t + data + 12'050 * kUs);
      b.Kernel(gpu, {.start = t + data + 120 * kUs, .end = t + data + 8'120 * kUs, .name = "_Z6linearPfS_i",
                     .correlation = correlation, .device = static_cast<uint32_t>(r % 8)});
      const uint64_t bw = t + data + 12'100 * kUs + (forward - 12 * kMs);
      p.Range(bw, bw + 21 * kMs + wait, Phase::kBackward);
      p.Range(bw + 21'050 * kUs + wait, bw + 22'850 * kUs + wait, Phase::kOptimizerStep);
      t = bw + 23 * kMs + wait;
    }
    rank_end[r] = t + 200 * kMs;
    const int code = r == 19 ? 1 : 0;
    b.ProcessEnd(p.thread(), rank_end[r], fmt::EndKind::kExit, code);
    b.HeaderEnd(fmt::EndKind::kExit, code, rank_end[r]);
  }
  std::vector<int> order(kRanks);  // torchrun's waits return in the order the ranks end
  for (int r = 0; r < kRanks; ++r) order[static_cast<size_t>(r)] = r;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return rank_end[a] < rank_end[b]; });
  uint64_t last = 0;
  for (int r : order) {
    l.ChildExit(lt, rank_end[r] + 50 * kMs, 7110 + r, fmt::EndKind::kExit, r == 19 ? 1 : 0);
    last = std::max(last, rank_end[r] + 50 * kMs);
  }
  l.ProcessEnd(lt, last + 100 * kMs, fmt::EndKind::kExit, 1);
  l.HeaderEnd(fmt::EndKind::kExit, 1, last + 100 * kMs);
  return c;
}

// ----- two_hosts: torchrun --nnodes 2 --nproc-per-node 2 on node-a and node-b --------------------
// Ranks 0, 1 on node-a (torchrun 7200), ranks 2, 3 on node-b (torchrun 7300). node-b's CLOCK_REALTIME
// is 2.5 s ahead of node-a's (no NTP) and its CLOCK_MONOTONIC counts from another boot. The ranks
// leave init_process_group and each dist.barrier() together (within 0.15 ms); rank 3 computes 30 ms
// more before each backward, so the others wait for it in the all-reduce.
Case TwoHosts() {
  constexpr uint64_t kSkewB = 2'500 * kMs;       // node-b's wall clock minus node-a's
  constexpr uint64_t kMonoB = 800'000 * kMs;     // node-b's monotonic minus node-a's at the same instant
  const std::vector<std::string> rank_argv = {"/usr/bin/python3", "-u", "train.py"};
  Case c;
  std::vector<uint64_t> end(4);
  std::vector<std::pair<int, int>> launchers;  // (index in c, thread)
  for (int node = 0; node < 2; ++node) {
    const uint64_t mono = node == 0 ? 0 : kMonoB;  // added to node-a's monotonic times
    const uint64_t wall = node == 0 ? 0 : kSkewB;
    const std::string host = node == 0 ? "node-a" : "node-b";
    auto process = [&](int32_t pid, int32_t ppid, uint64_t start, std::vector<std::string> argv) {
      auto b = std::make_unique<TraceBuilder>(pid, ppid, start + mono);
      b->StartRealtime(kRealtimeAtT0 + (start - T0) + wall).Command(std::move(argv)).Executable("/usr/bin/python3.11");
      b->Flags(fmt::kFlagFollowChildren).Host(host);
      return b;
    };
    const int32_t lpid = node == 0 ? 7200 : 7300;
    c.push_back(process(lpid, 7190, T0 + node * 40 * kMs,
                        {"/usr/bin/python3", "/usr/local/bin/torchrun", "--nnodes", "2", "--nproc-per-node", "2",
                         "train.py"}));
    const int lt = c.back()->Thread(static_cast<uint32_t>(lpid));
    c.back()->ThreadName(lt, static_cast<uint32_t>(lpid), "python3");
    launchers.push_back({static_cast<int>(c.size()) - 1, lt});
    for (int local = 0; local < 2; ++local) {
      const int r = node * 2 + local;
      const int32_t pid = lpid + 10 + local;
      const uint64_t start = T0 + 600 * kMs + static_cast<uint64_t>(r) * 3 * kMs;
      c.push_back(process(pid, lpid, start, rank_argv));
      TraceBuilder& b = *c.back();
      b.Env("RANK", std::to_string(r)).Env("LOCAL_RANK", std::to_string(local)).Env("WORLD_SIZE", "4");
      PhaseThread p(b, static_cast<uint32_t>(pid));
      b.ThreadName(p.thread(), static_cast<uint32_t>(pid), "python3");
      PhaseCategories(b, p.thread(), 1);
      // Ranks leave a collective within 0.15 ms, in an order that is not the hosts'.
      const uint64_t skew = std::vector<uint64_t>{100, 0, 50, 150}[static_cast<size_t>(r)] * kUs;
      p.Range(start + 900 * kMs + mono, T0 + 1'600 * kMs + skew + mono, Phase::kInitProcessGroup,
              "init_process_group");
      p.Range(T0 + 1'610 * kMs + mono, T0 + 1'650 * kMs + skew + mono, Phase::kCollective, "barrier");
      uint64_t t = T0 + 1'700 * kMs;
      for (int s = 0; s < 6; ++s) {
        const uint64_t extra = r == 3 ? 30 * kMs : 0;
        const uint64_t wait = r == 3 ? 0 : 30 * kMs;
        p.Range(t + mono, t + 400 * kUs + mono, Phase::kDataWait, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
        p.Range(t + 500 * kUs + mono, t + 12'500 * kUs + mono, Phase::kForward, "DistributedDataParallel.forward");
        const uint64_t bw = t + 12'600 * kUs + extra;
        p.Range(bw + mono, bw + 20 * kMs + wait + mono, Phase::kBackward);
        p.Range(bw + 20'100 * kUs + wait + mono, bw + 22 * kMs + wait + mono, Phase::kOptimizerStep);
        t = bw + 22'100 * kUs + wait;
      }
      p.Range(t + 10 * kMs + mono, t + 60 * kMs + skew + mono, Phase::kCollective, "barrier");
      end[static_cast<size_t>(r)] = t + 200 * kMs + mono;
      b.ProcessEnd(p.thread(), end[static_cast<size_t>(r)], fmt::EndKind::kExit, 0);
      b.HeaderEnd(fmt::EndKind::kExit, 0, end[static_cast<size_t>(r)]);
    }
  }
  for (int node = 0; node < 2; ++node) {
    TraceBuilder& l = *c[static_cast<size_t>(launchers[static_cast<size_t>(node)].first)];
    const int lt = launchers[static_cast<size_t>(node)].second;
    const int32_t lpid = node == 0 ? 7200 : 7300;
    const uint64_t e0 = end[static_cast<size_t>(node * 2)], e1 = end[static_cast<size_t>(node * 2 + 1)];
    l.ChildExit(lt, std::min(e0, e1) + 30 * kMs, e0 <= e1 ? lpid + 10 : lpid + 11, fmt::EndKind::kExit, 0);
    l.ChildExit(lt, std::max(e0, e1) + 30 * kMs + kUs, e0 <= e1 ? lpid + 11 : lpid + 10, fmt::EndKind::kExit, 0);
    l.ProcessEnd(lt, std::max(e0, e1) + 80 * kMs, fmt::EndKind::kExit, 0);
    l.HeaderEnd(fmt::EndKind::kExit, 0, std::max(e0, e1) + 80 * kMs);
  }
  return c;
}

// ----- damaged: a killed run whose files were copied while it was being written ------------------
// The main process (8100, SIGKILLed: the launcher wrote its end) and a DataLoader worker (8101),
// NVTX ranges from the program; the main process was killed after claiming a second chunk slot and
// before writing its header (a zero slot), and the worker's file was copied mid-chunk (cut 3 bytes
// into a record) while it was still being written.
Case Damaged() {
  const std::vector<std::string> argv = {"/usr/bin/python3", "train.py", "--epochs", "1"};
  Case c;
  c.push_back(Process(8100, 8090, T0, argv, "/usr/bin/python3.11"));
  TraceBuilder& m = *c.back();
  const int t = m.Thread(8100);
  m.ThreadName(t, 8100, "python3");
  m.Fork(t, T0 + 900 * kMs, 8101);
  uint64_t now = T0 + 1'000 * kMs;
  for (int i = 0; i < 6; ++i) {
    m.Push(t, now, "train_step");
    m.Push(t, now + 1 * kMs, "forward");
    m.Pop(t, now + 9 * kMs + i * 100 * kUs);
    m.Pop(t, now + 15 * kMs + i * 100 * kUs);
    now += 16 * kMs + i * 100 * kUs;
  }
  m.Push(t, now, "train_step");  // killed inside it
  m.ZeroSlot();  // killed after claiming a chunk slot, before writing its header
  m.HeaderEnd(fmt::EndKind::kSignal, 9, now + 40 * kMs);  // SIGKILL; the launcher wrote the end
  c.push_back(Process(8101, 8100, T0 + 900 * kMs + 200 * kUs, argv, "/usr/bin/python3.11",
                      fmt::kFlagFollowChildren | fmt::kFlagForkedChild));
  TraceBuilder& w = *c.back();
  const int wt = w.Thread(8101);
  w.ThreadName(wt, 8101, "python3");
  w.Role(wt, "DataLoader worker");
  uint64_t wn = T0 + 950 * kMs;
  for (int i = 0; i < 8; ++i) {
    w.Push(wt, wn, "load_batch");
    w.Pop(wt, wn + 7 * kMs + i * 50 * kUs);
    wn += 8 * kMs;
  }
  return c;
}

/// Writes the damaged case: the main file as built, the worker's cut.
void WriteDamaged(const Case& c, const std::string& dir) {
  c[0]->WriteTo(dir);
  std::vector<uint8_t> bytes = c[1]->Build();
  const std::vector<uint64_t> ends = c[1]->RecordEnds();
  bytes.resize(ends[ends.size() / 2] + 3);
  TraceBuilder::WriteBytes(dir + "/" + c[1]->FileName(), bytes);
}

// ----- capture_limited: tests/programs/capture.cc nvtx, run with --capture-range=nvtx:step
// --capture-range-end=repeat -----------------------------------------------------------------
// pid 9100, as the real run records it: recording starts off; each outermost "step" switches it on
// at its push and off after its pop. Step 0 holds 2 x "inner", mark "tick", a nested "step" {
// "inner" }, the start of "async_cross" and the worker thread's "worker"; "async_cross" ends while
// recording is off; step 2 is in the domain "capture_test". The last pop (the program's pop of
// "epoch", pushed before the capture) is recorded with nothing pushed: an unbalanced pop.
Case CaptureLimited() {
  Case c;
  c.push_back(Process(9100, 9090, T0, {"build/tests/programs/tp_capture", "nvtx"},
                      "/home/ci/trainprof/build/tests/programs/tp_capture", 0));
  TraceBuilder& b = *c.back();
  b.RawMeta(static_cast<uint16_t>(fmt::MetaKey::kCapture), std::string("range=nvtx:step\0range_end=repeat", 32));
  const int t = b.Thread(9100);
  b.ThreadName(t, 9100, "tp_capture");
  b.Capture(t, T0 + 140 * kUs, false, fmt::CaptureReason::kStart);
  const uint64_t d = b.Domain(t, "capture_test");
  const int w = b.Thread(9101);
  b.ThreadName(w, 9101, "tp_capture");
  const uint64_t kAsyncCross = (uint64_t{1} << 40) + 2;
  uint64_t now = T0 + 12 * kMs;
  auto inner = [&](uint64_t at, uint64_t dur) {
    b.Push(t, at, "inner");
    b.Pop(t, at + dur);
  };
  // Step 0.
  b.Capture(t, now, true, fmt::CaptureReason::kNvtxRange);
  b.Push(t, now, "step");
  inner(now + 240 * kUs, 1'100 * kUs);
  inner(now + 1'420 * kUs, 1'060 * kUs);
  b.Mark(t, now + 2'610 * kUs, "tick");
  b.Push(w, now + 2'700 * kUs, "worker");
  b.Push(t, now + 2'700 * kUs, "step");
  inner(now + 2'760 * kUs, 1'030 * kUs);
  b.Pop(t, now + 3'810 * kUs);
  b.Start(t, now + 9'420 * kUs, "async_cross", kAsyncCross);
  b.Pop(t, now + 9'510 * kUs);
  b.Capture(t, now + 9'540 * kUs, false, fmt::CaptureReason::kNvtxRange);
  b.Pop(w, now + 12'900 * kUs);
  b.EndRange(t, now + 17'410 * kUs, kAsyncCross);
  now += 17'520 * kUs;
  // Steps 1 and 2 (in the domain capture_test).
  for (int s = 1; s < 3; ++s) {
    const uint64_t dom = s == 2 ? d : 0;
    b.Capture(t, now, true, fmt::CaptureReason::kNvtxRange);
    b.Push(t, now, "step", dom);
    inner(now + 100 * kUs, 1'040 * kUs + s * 20 * kUs);
    inner(now + 1'210 * kUs + s * 20 * kUs, 1'030 * kUs);
    b.Mark(t, now + 2'330 * kUs + s * 20 * kUs, "tick");
    b.Pop(t, now + 2'400 * kUs + s * 20 * kUs, dom);
    b.Capture(t, now + 2'430 * kUs + s * 20 * kUs, false, fmt::CaptureReason::kNvtxRange);
    now += 2'790 * kUs + s * 20 * kUs;
  }
  b.Pop(t, now + 140 * kUs);
  const uint64_t end = now + 314 * kMs;
  b.ProcessEnd(t, end, fmt::EndKind::kReturned, 0);
  b.HeaderEnd(fmt::EndKind::kExit, 0, end);
  return c;
}

// ----- cpu_samples: a CPU training loop under `trainprof run --sample=1000` -----------------------
// pid 4500 trains 4 steps (DataLoader with one worker, pid 4501): each step a data wait, forward,
// backward, optimizer step and unrecorded logging, a sample every 1 ms of each with the Python
// stack of that code; a C++ extension's thread (4502) samples native frames only, in a module that
// is not on the machine (module+offset); one sample without a stack and one whose Python frames
// the sampler could not all read; 3 samples the sampler dropped (its header's samples_dropped);
// two threads (4503, 4504) that got no timer under `ulimit -i 8` (the signal-queue share, and
// timer_create's EAGAIN). The worker samples its __getitem__ and collate_fn, and blocked the
// sampling signal for 12.5 ms of its CPU time.
Case CpuSamples() {
  using PyFrame = TraceBuilder::PyFrame;
  const std::vector<std::string> argv = {"/usr/bin/python3", "train_cpu.py", "--sample-demo"};
  const std::string exe = "/usr/bin/python3.11";
  const std::string torch = "/usr/lib/python3/dist-packages/torch/";
  Case c;
  c.push_back(Process(4500, 4498, T0, argv, exe, fmt::kFlagFollowChildren));
  TraceBuilder& mb = *c.back();
  mb.SamplesDropped(3);
  PhaseThread m(mb, 4500);
  mb.ThreadName(m.thread(), 4500, "python3");
  PhaseCategories(mb, m.thread(), 1);
  const int ext = mb.Thread(4502);
  mb.ThreadName(ext, 4502, "python3");
  mb.Module(ext, 0x7f10'0000'0000, 0x7f10'0000'0000, 0x7f10'0002'0000,
            "/opt/venv/lib/python3.11/site-packages/fastops/_C.so", "5f1e2d3c4b5a69788796a5b4c3d2e1f001122334");
  const PyFrame top{"<module>", "train_cpu.py", 60};
  const PyFrame train{"train", "train_cpu.py", 44};
  auto in_train = [&](std::vector<PyFrame> inner, uint32_t line) {
    PyFrame t = train;
    t.line = line;
    inner.push_back(t);
    inner.push_back(top);
    return inner;
  };
  const int th = m.thread();
  const uint64_t interp = 0x55d0'0000'4000;  // the interpreter's native frames (left out: Python frames first)
  const uint64_t wait = mb.Stack(th, {interp}, in_train({{"_MultiProcessingDataLoaderIter._next_data", torch + "utils/data/dataloader.py", 1328}}, 40));
  const uint64_t fwd = mb.Stack(th, {interp}, in_train({{"Linear.forward", torch + "nn/modules/linear.py", 114}, {"Net.forward", "train_cpu.py", 18}}, 44));
  const uint64_t fwd_relu = mb.Stack(th, {interp}, in_train({{"Net.forward", "train_cpu.py", 19}}, 44));
  const uint64_t bwd = mb.Stack(th, {interp}, in_train({{"Tensor.backward", torch + "_tensor.py", 488}}, 46));
  const uint64_t opt = mb.Stack(th, {interp}, in_train({{"SGD.step", torch + "optim/sgd.py", 80}}, 47));
  const uint64_t log = mb.Stack(th, {interp}, in_train({{"log_loss", "train_cpu.py", 30}}, 48));
  const uint64_t kernel = mb.Stack(ext, {0x7f10'0000'1f40, 0x7f10'0000'2a00});
  auto samples = [&](int thread, uint64_t from, uint64_t to, uint64_t stack, uint64_t missed = 0) {
    for (uint64_t t = from + 500 * kUs; t < to; t += kMs) mb.Sample(thread, t, stack, missed);
  };
  const uint64_t fork = T0 + 900 * kMs;
  const int lost_share = mb.Thread(4503), lost_create = mb.Thread(4504);
  mb.SampleThreadLost(lost_share, fork - 5 * kMs, 1, 0, 8, 5);
  mb.SampleThreadLost(lost_create, fork - 4 * kMs, 2, 11, 8);
  mb.Fork(th, fork, 4501);
  uint64_t t = fork + 40 * kMs;
  for (int k = 0; k < 4; ++k) {
    m.Push(t, Phase::kDataWait);
    samples(th, t, t + 2 * kMs, wait);
    m.Pop(t + 2 * kMs);
    t += 2 * kMs;
    m.Push(t, Phase::kForward);
    samples(th, t, t + 4 * kMs, fwd);
    samples(th, t + 4 * kMs, t + 6 * kMs, fwd_relu, k == 3 ? 1 : 0);
    m.Pop(t + 6 * kMs);
    t += 6 * kMs;
    m.Push(t, Phase::kBackward);
    samples(th, t, t + 8 * kMs, bwd);
    if (k == 1) mb.Sample(th, t + 8 * kMs - 100 * kUs, 0);  // the sampler could not take the stack
    m.Pop(t + 8 * kMs);
    t += 8 * kMs;
    m.Push(t, Phase::kOptimizerStep);
    samples(th, t, t + 2 * kMs, opt);
    m.Pop(t + 2 * kMs);
    t += 2 * kMs;
    samples(th, t, t + kMs, log);  // unrecorded: "other"
    t += kMs;
    samples(ext, t - 19 * kMs, t - 16 * kMs, kernel);  // during the forward; its thread has no phases: "other"
  }
  const uint64_t exits = t + 3 * kMs;
  mb.ChildExit(th, exits, 4501, fmt::EndKind::kExit, 0);
  mb.ProcessEnd(th, exits + 50 * kMs, fmt::EndKind::kExit, 0);
  mb.HeaderEnd(fmt::EndKind::kExit, 0, exits + 50 * kMs);

  c.push_back(Process(4501, 4500, fork + 300 * kUs, argv, exe, fmt::kFlagFollowChildren | fmt::kFlagForkedChild));
  TraceBuilder& wb = *c.back();
  PhaseThread w(wb, 4501);
  wb.ThreadName(w.thread(), 4501, "python3");
  wb.Role(w.thread(), "DataLoader worker");
  PhaseCategories(wb, w.thread(), 1);
  const int wt = w.thread();
  const PyFrame fetch{"_MapDatasetFetcher.fetch", torch + "utils/data/_utils/fetch.py", 51};
  const uint64_t item = wb.Stack(wt, {}, {{"CpuData.__getitem__", "train_cpu.py", 25}, fetch});
  const uint64_t decode = wb.Stack(wt, {}, {{"decode", "train_cpu.py", 12}, {"CpuData.__getitem__", "train_cpu.py", 24}, fetch});
  const uint64_t collate = wb.Stack(wt, {}, {{"default_collate", torch + "utils/data/_utils/collate.py", 171}, fetch});
  uint64_t u = fork + 10 * kMs;
  for (int k = 0; k < 4; ++k) {
    w.Push(u, Phase::kFetch);
    for (int i = 0; i < 2; ++i) {
      w.Push(u, Phase::kGetItem, "CpuData.__getitem__");
      for (uint64_t s = u + 500 * kUs; s < u + 3 * kMs; s += kMs) wb.Sample(wt, s, s < u + kMs ? item : decode);
      w.Pop(u + 3 * kMs);
      u += 3 * kMs;
    }
    w.Push(u, Phase::kCollate, "default_collate");
    wb.Sample(wt, u + 500 * kUs, collate);
    w.Pop(u + kMs);
    u += kMs;
    w.Pop(u);
    u += 2 * kMs;
  }
  const uint64_t wend = exits - kMs;
  wb.SamplePaused(wt, wend - kMs, 12'500'000);
  wb.ProcessEnd(wt, wend, fmt::EndKind::kExit, 0);
  wb.HeaderEnd(fmt::EndKind::kExit, 0, wend);
  return c;
}

struct CaseDef {
  std::function<Case()> build;
  std::function<void(const Case&, const std::string&)> write;
};

void WriteAll(const Case& c, const std::string& dir) {
  for (const auto& b : c) b->WriteTo(dir);
}

const std::map<std::string, CaseDef>& Cases() {
  static const std::map<std::string, CaseDef> cases = {
      {"nvtx_workload", {NvtxWorkload, WriteAll}},
      {"pytorch_dataloader", {PytorchDataloader, WriteAll}},
      {"cuda", {Cuda, WriteAll}},
      {"ddp_straggler", {DdpStraggler, WriteAll}},
      {"many_ranks", {ManyRanks, WriteAll}},
      {"two_hosts", {TwoHosts, WriteAll}},
      {"damaged", {Damaged, WriteDamaged}},
      {"capture_limited", {CaptureLimited, WriteAll}},
      {"cpu_samples", {CpuSamples, WriteAll}},
  };
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const auto& [name, def] : Cases()) std::printf("%s\n", name.c_str());
    return 0;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_golden_traces --list | CASE DIR\n");
    return 1;
  }
  auto it = Cases().find(argv[1]);
  if (it == Cases().end()) {
    std::fprintf(stderr, "make_golden_traces: no case %s (--list names them)\n", argv[1]);
    return 1;
  }
  try {
    std::filesystem::create_directories(argv[2]);
    it->second.write(it->second.build(), argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_golden_traces: %s: %s\n", argv[1], e.what());
    return 1;
  }
  return 0;
}
