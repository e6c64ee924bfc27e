// Whether a CPython interpreter was started with options that keep trainprof's Python shim out.
// The shim is the `sitecustomize` module on PYTHONPATH (python/README.md): -E and -I (isolated
// mode) make Python ignore PYTHONPATH, and -S skips `import site`, which imports sitecustomize.
// The trace header then says so (MetaKey::kPythonShimOff), and the report explains the missing
// phases instead of advising the command the user already ran.
//
// The command line is parsed as CPython parses it (Python/getopt.c, Python/initconfig.c; 3.8 to
// 3.13): short options cluster ("-IE", "-bE"); -W and -X take an argument, attached ("-Xdev") or
// the next word ("-X dev"); --check-hash-based-pycs takes the next word; the options end at -c or
// -m (their argument and everything after belong to the program), at "--", at "-" and at the first
// word that does not start with '-' (the script).
// Pure functions on caller-provided buffers (no allocation): unit-tested in tests/unit/inject.
#pragma once

#include <cstddef>

namespace trainprof::inject {

/// Minimum `cap` of PythonShimBlockers' output buffer: "-E -I -S" and its NUL.
inline constexpr size_t kPythonShimBlockersCap = 12;

/// The options of a CPython command line that keep the shim from loading, as "-I", "-E -S", ...
/// (each once, in the order first seen) written NUL-terminated into out (cap bytes, at least
/// kPythonShimBlockersCap). `cmdline` is argv as /proc/self/cmdline holds it: words each ended by
/// a NUL byte (the last NUL may be missing), argv[0] first. Returns the length written; 0 when no
/// such option is there (or cap is too small).
size_t PythonShimBlockers(const char* cmdline, size_t len, char* out, size_t cap);

/// Whether the executable at `exe_path` (readlink of /proc/self/exe) is named like CPython's
/// interpreter: its base name starts with "python" ("python3", "python3.11", "python3.12d").
bool LooksLikePythonExecutable(const char* exe_path);

}  // namespace trainprof::inject
