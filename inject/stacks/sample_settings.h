// `trainprof run --sample=HZ` as the library receives it (TRAINPROF_SAMPLE, set by
// launcher/sample_options.cc), and its part of the header's kStacks metadata. Pure but the last function; unit-tested.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

inline constexpr uint32_t kMaxSampleHz = 10000;  ///< 100 µs of thread CPU time between samples

/// Parses TRAINPROF_SAMPLE's value: decimal HZ, 1..kMaxSampleHz. nullptr or "0": off (0). Any
/// other text (a value the launcher would not write): off, and false.
bool ParseSampleHz(const char* text, uint32_t* hz);

/// "sample_hz=HZ\0sample_signal=SIGNO" (NUL-separated kStacks entries) into buf, then
/// "\0python_unsupported=TEXT" when `python_unsupported` is not empty (the CPython whose frames
/// the sampler cannot read: PythonFramesUnsupported(), python_async.h); returns its length
/// without a final NUL (0 if it does not fit or hz is 0).
uint32_t FormatSampleMetadata(uint32_t hz, int signo, const char* python_unsupported, char* buf, size_t cap);

/// The above with this process's PythonFramesUnsupported() (not pure: it may look the
/// interpreter up; not async-signal-safe). Defined in python_async.cc, beside it.
uint32_t FormatSampleMetadata(uint32_t hz, int signo, char* buf, size_t cap);

}  // namespace trainprof::inject
