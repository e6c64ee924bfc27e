// Python processes in which trainprof's shim could not load: the interpreter was started with -E,
// -I or -S, which the injection library wrote into the trace header (MetaKey::kPythonShimOff,
// inject/python_options.h). Such a process records no Python phases, and the report says why
// instead of advising to run the script under `trainprof run`, which the user already did.
//
//   TraceImage::python_shim_off (header) ─► PythonShimOff(process) ─► processes[].python_shim_off
//                                          ─► DescribePythonShimOff ─► a warning line; the
//                                             bottleneck's "no_phases" message
#pragma once

#include <string>

#include "collector/model/model.h"

namespace trainprof::collector {

/// The options that kept the shim out of `p` ("-I", "-E -S", ...): those of its last image that
/// recorded any; "" when the shim was not kept out (or the trace predates the note).
std::string PythonShimOff(const Process& p);

/// "Python phases not recorded: python -I ignores PYTHONPATH (isolated mode), so trainprof's
/// shim (its sitecustomize) could not load; run Python without -I to record them" for the
/// options PythonShimOff returned.
std::string DescribePythonShimOff(const std::string& options);

/// Why the options kept the shim out, without advice: "python -I ignores PYTHONPATH (isolated
/// mode)", "python -E ignores PYTHONPATH and python -S skips `import site`, which imports
/// sitecustomize".
std::string PythonShimOffReason(const std::string& options);

}  // namespace trainprof::collector
