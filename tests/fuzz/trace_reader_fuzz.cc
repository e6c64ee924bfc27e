// Fuzz target "reader": any bytes are read as trace files (fuzz_input.h) the way `trainprof report`
// reads them — ReadTraceBytes on each, then the merge into processes (BuildProcesses) — and each
// file's damage is described as the report's warnings do. Fast (thousands of inputs a second), so
// it goes deep into the reader; trace_report_fuzz.cc adds the analyses and renderers behind it.
// Built with libFuzzer (TRAINPROF_FUZZ=ON, scripts/fuzz) and as a replay test (replay_main.cc).
#include <cstddef>
#include <cstdint>
#include <string>

#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainprof;
  fuzz::Observe(collector::LoadTraceBytes(fuzz::SplitFiles(fuzz::Input(data, size))));
  return 0;
}
