// `trainprof run --backtrace=LIST` as the library receives it (TRAINPROF_BACKTRACE, set by
// launcher/backtrace_options.cc): which events get a call stack. Pure; unit-tested.
//
//   LIST   comma-separated: cuda[:THRESHOLD_NS] | nvtx | none
//   unset  the default: cuda:1000 (as Nsight Systems' --cudabacktrace: synchronising calls,
//          blocking copies, cudaMalloc/cudaFree taking at least 1 µs)
//   none   no stacks at all
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

inline constexpr uint64_t kDefaultCudaBacktraceNs = 1000;

struct BacktraceSettings {
  bool cuda = true;                               ///< stacks on the CUDA calls of CudaCallWantsStack
  uint64_t cuda_threshold_ns = kDefaultCudaBacktraceNs;  ///< ... lasting at least this long
  bool nvtx = false;                              ///< a stack at every range push/start and mark
  bool any() const { return cuda || nvtx; }
};

/// Parses TRAINPROF_BACKTRACE's value (nullptr: the default). false (and *out the default) for a
/// value the launcher would not have written: an unknown word, a bad threshold.
bool ParseBacktraceSettings(const char* text, BacktraceSettings* out);

/// The header's kStacks metadata ("backtrace=cuda:1000,nvtx"; "backtrace=none" when off) into
/// buf; returns its length (0 if it does not fit).
uint32_t FormatStacksMetadata(const BacktraceSettings& s, char* buf, size_t cap);

}  // namespace trainprof::inject
