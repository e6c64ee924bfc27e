// Fuzz target "kineto": any bytes are read as a torch.profiler (Kineto) JSON trace, the way
// `trainprof report` reads a file whose content looks like one (collector/read/kineto_reader.h):
// plain, and gzip-compressed when the input starts with gzip's magic; then merged into processes
// (LoadTraceBytes) and each file's damage described as the report's warnings do. Inputs that do
// not start with '{' or gzip's magic are given a '{' in front, so that the SAX parser and the
// mapping see every input. Seeds: corpus-kineto/ (small real traces, cut and damaged variants).
// Built with libFuzzer (TRAINPROF_FUZZ=ON, scripts/fuzz) and as a replay test (replay_main.cc).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collector/read/kineto_reader.h"
#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainprof;
  std::span<const uint8_t> in = fuzz::Input(data, size);
  std::vector<uint8_t> braced;
  if (!collector::LooksLikeKineto(in.first(std::min<size_t>(in.size(), 64)))) {
    braced.reserve(in.size() + 1);
    braced.push_back('{');
    braced.insert(braced.end(), in.begin(), in.end());
    in = braced;
  }
  fuzz::Observe(collector::LoadTraceBytes({{"fuzz.pt.trace.json", in}}));
  return 0;
}
