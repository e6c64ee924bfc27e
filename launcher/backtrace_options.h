// `trainprof run --backtrace=LIST` (docs/cli.md, "Call stacks"): which events record the call
// stack where they happened. Parsed and checked here, passed to the library as TRAINPROF_BACKTRACE
// (inject/stacks/backtrace_settings.h reads it).
//
//   LIST    comma-separated, replacing the default:
//     cuda[:THRESHOLD_NS]  CUDA calls that block the host (synchronisation, copies that are not
//                          Async, cudaMalloc/cudaFree and the driver's equivalents) lasting at least
//                          THRESHOLD_NS (default 1000), as Nsight Systems' --cudabacktrace
//     nvtx                 every NVTX range push/start and mark (Python phase ranges too)
//     none                 no stacks
//   not given: cuda:1000
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainprof::launcher {

/// The default when --backtrace is not given.
inline constexpr const char* kDefaultBacktrace = "cuda:1000";

/// Checks LIST and returns it normalised ("cuda:THRESHOLD" first, then "nvtx"; or "none"); an
/// empty text gives the default. nullopt with a usage message in *error for an unknown word, an
/// empty entry, a threshold that is not a whole number of ns up to 1e15, or none with others.
std::optional<std::string> ParseBacktraceList(const std::string& text, std::string* error);

/// Sets TRAINPROF_BACKTRACE in `env` to the normalised list.
void ApplyBacktraceEnvironment(std::vector<std::string>* env, const std::string& normalised);

}  // namespace trainprof::launcher
