// `trainprof run --sample=HZ` (docs/cli.md, "CPU samples"): a CPU-time sample of every thread HZ
// times per second of its CPU time. Checked here, passed to the library as TRAINPROF_SAMPLE
// (inject/stacks/sample_settings.h reads it). Off when not given.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trainprof::launcher {

inline constexpr unsigned kMaxSampleHz = 10000;  ///< as inject/stacks/sample_settings.h

/// HZ as given: empty (not given) or "0" → 0 (off); a whole number 1..kMaxSampleHz → it;
/// anything else → nullopt with a usage message in *error.
std::optional<unsigned> ParseSampleHz(const std::string& text, std::string* error);

/// Sets TRAINPROF_SAMPLE in `env` when hz > 0 (and removes an inherited one when it is 0).
void ApplySampleEnvironment(std::vector<std::string>* env, unsigned hz);

}  // namespace trainprof::launcher
