// The floor of a bounded-memory CUDA report: the trace files decoded with a CudaSink that only
// counts (collector/model/cuda_sink.h) and no CUDA record kept (ReadOptions::keep_cuda =
// KeepCuda::kNone), files decoded in parallel, one per core, as LoadTrace does. scripts/bench's cuda_report
// runs it beside `trainprof report` on the same files.
//   tp_cuda_decode_floor FILE...      prints "calls N gpu_records N" (calls: whole calls seen)
#include <algorithm>
#include <cstdio>
#include <thread>
#include <vector>

#include "collector/read/trace_reader.h"

namespace {

using namespace trainprof::collector;

// A cache line each: the sinks of two decoding threads side by side would share one (false
// sharing made two thirds of this floor's CPU time: docs/performance.md).
struct alignas(64) Count final : CudaSink {
  uint64_t calls = 0, gpu = 0, ns = 0;  // ns: summed durations, so that nothing is optimised away
  void Call(const CudaCall& c) override { ++calls, ns += c.duration(); }
  void Kernel(const GpuKernel& k, const KernelConfig&) override { ++gpu, ns += k.duration(); }
  void Memcpy(const GpuMemcpy& m) override { ++gpu, ns += m.duration(); }
  void Memset(const GpuMemset& m) override { ++gpu, ns += m.duration(); }
  void Sync(const GpuSync&) override { ++gpu; }
  void Overhead(const GpuOverhead&) override {}
  void Resolve(const std::vector<StringId>&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  const size_t files = argc > 1 ? static_cast<size_t>(argc - 1) : 0;
  std::vector<Count> sinks(files);
  std::vector<DecodedTrace> decoded(files);
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> running;
  for (size_t i = 0; i < files; ++i) {
    running.emplace_back([&, i] {
      const ReadOptions o{.keep = KeepNvtx::kPhases, .cuda_sink = &sinks[i], .keep_cuda = KeepCuda::kNone};
      decoded[i] = DecodeTraceFile(argv[i + 1], o);
    });
    if (running.size() == cores) {
      for (std::thread& t : running) t.join();
      running.clear();
    }
  }
  for (std::thread& t : running) t.join();
  StringPool pool;
  uint64_t calls = 0, gpu = 0;
  for (size_t i = 0; i < files; ++i) {
    const ReadResult r = decoded[i].Finish(&pool);
    if (!r.status.usable) fprintf(stderr, "%s: not usable\n", argv[i + 1]);
    calls += sinks[i].calls;
    gpu += sinks[i].gpu;
  }
  printf("calls %llu gpu_records %llu\n", static_cast<unsigned long long>(calls), static_cast<unsigned long long>(gpu));
  return 0;
}
