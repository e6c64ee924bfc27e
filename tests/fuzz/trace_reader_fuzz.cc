// Fuzz target "reader": any bytes are read as trace files (fuzz_input.h) the way `trainprof report`
// reads them — ReadTraceBytes on each, then the merge into processes (BuildProcesses) — and each
// file's damage is described as the report's warnings do. Fast (thousands of inputs a second), so
// it goes deep into the reader; trace_report_fuzz.cc adds the analyses and renderers behind it.
// It also checks the windowed CUDA read (read/cuda_chunk_index.h) against the whole read: every
// window's records decoded again must be SliceWindow's, field for field, or it aborts.
// Built with libFuzzer (TRAINPROF_FUZZ=ON, scripts/fuzz) and as a replay test (replay_main.cc).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "collector/model/cuda_window.h"
#include "collector/read/cuda_chunk_index.h"
#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
#include "fuzz_input.h"

namespace {

using namespace trainprof::collector;

template <typename T>
void CheckSame(const std::vector<T>& want, const std::vector<T>& got) {
  if (want.size() != got.size()) std::abort();
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(want[i] == got[i])) std::abort();
  }
}

// Up to 64 windows of each image with an index, read again and compared with the whole read.
void CheckWindows(const Trace& trace, size_t budget) {
  for (const Process& p : trace.processes) {
    for (const TraceImage& img : p.images) {
      if (img.cuda_index == nullptr) continue;
      std::vector<uint64_t> starts;
      AppendStarts(img.cuda, &starts);
      const size_t per_window = std::max(budget, starts.size() / 64);
      for (const TimeWindow& w : CutWindows(std::move(starts), per_window)) {
        CudaData got;
        if (!ReadCudaWindow(*img.cuda_index, w, p.end_ns, &got).empty()) std::abort();
        const CudaData want = SliceWindow(img.cuda, w, p.end_ns);
        CheckSame(want.calls, got.calls);
        CheckSame(want.kernels, got.kernels);
        CheckSame(want.memcpys, got.memcpys);
        CheckSame(want.memsets, got.memsets);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainprof;
  const collector::Trace trace =
      collector::LoadTraceBytes(fuzz::SplitFiles(fuzz::Input(data, size)), {.cuda_index = true});
  fuzz::Observe(trace);
  CheckWindows(trace, 1 + size % 5);
  return 0;
}
