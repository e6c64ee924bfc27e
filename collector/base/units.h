// Human units for reports: durations (ns, µs, ms, s; min from 100 s, h from 1 h) and sizes (B, KB,
// MB, GB, TB; 1 KB = 1000 B, as nsys prints memory sizes), both with three significant digits:
// "830 ns", "5.12 ms", "1.20 s", "12.5 min", "16.2 h".
#pragma once

#include <cstdint>
#include <string>

namespace trainprof::collector {

/// "0 ns", "830 ns", "12.5 µs", "5.12 ms", "1.20 s", "99.9 s", "12.5 min", "16.2 h", "1234 h".
/// Negative values get "-".
std::string FormatDuration(double ns);
/// "512 B", "1.50 KB", "12.3 MB", "1.00 GB".
std::string FormatBytes(double bytes);
/// "1 file", "3 files": n and the noun for it (`one` or `many`).
std::string Plural(uint64_t n, const char* one, const char* many);
/// One decimal: "12.3".
std::string FormatPercent(double percent);
/// "2024-05-01 12:00:00.123 UTC" from CLOCK_REALTIME nanoseconds.
std::string FormatUtc(uint64_t realtime_ns);

}  // namespace trainprof::collector
