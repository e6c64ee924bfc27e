// Messages from the injection library: one line on stderr, prefixed "trainprof:", written with
// write(2) only, so it may be called from fork children, exit paths and signal context.
// Never writes to stdout: the profiled program owns it.
#pragma once

namespace trainprof::inject {

/// Writes "trainprof: <parts...>\n" to fd 2 with a single write(2). Parts are NUL-terminated;
/// the list ends with nullptr. Longer than 1 KiB is cut. Async-signal-safe.
void LogLine(const char* first, ...);

/// Formats an unsigned decimal into buf (at least 21 bytes); returns buf. Async-signal-safe.
const char* FormatU64(unsigned long long v, char* buf);

}  // namespace trainprof::inject
