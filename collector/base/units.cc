#include "collector/base/units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace trainprof::collector {
namespace {

struct Unit {
  const char* name;
  double scale;     ///< base units per one of this unit
  double from = 0;  ///< base value from which this unit is used (0: from `scale`)
  double start() const { return from > 0 ? from : scale; }
};

// Three significant digits: pick the largest unit the value reaches, then re-check after
// rounding (999.6 µs must print "1.00 ms", not "1000 µs"; 99.97 s must print "1.67 min", not
// "100 s").
std::string FormatScaled(double v, const Unit* units, int n, bool integer_base) {
  if (std::isnan(v)) return "-";
  std::string sign;
  if (v < 0) {
    sign = "-";
    v = -v;
  }
  if (v == 0) return "0 " + std::string(units[0].name);
  int u = 0;
  while (u + 1 < n && v >= units[u + 1].start()) ++u;
  char buf[64];
  for (;;) {
    double x = v / units[u].scale;
    int decimals = x < 9.995 ? 2 : x < 99.95 ? 1 : 0;
    if (u == 0 && integer_base && x == std::floor(x)) decimals = 0;
    std::snprintf(buf, sizeof(buf), "%.*f", decimals, x);
    double shown = std::strtod(buf, nullptr);
    if (u + 1 < n && shown * units[u].scale >= units[u + 1].start()) {
      ++u;
      continue;
    }
    break;
  }
  return sign + buf + " " + units[u].name;
}

}  // namespace

std::string FormatDuration(double ns) {
  // Seconds up to 99.9 s, then minutes (1.67 min) up to 59.9 min, then hours.
  static constexpr Unit kUnits[] = {{"ns", 1},  {"\xC2\xB5s", 1e3},          {"ms", 1e6},
                                    {"s", 1e9}, {"min", 60e9, /*from=*/100e9}, {"h", 3600e9}};
  return FormatScaled(ns, kUnits, 6, /*integer_base=*/true);
}

std::string FormatBytes(double bytes) {
  static constexpr Unit kUnits[] = {{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}};
  return FormatScaled(bytes, kUnits, 5, /*integer_base=*/true);
}

std::string FormatPercent(double percent) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", percent);
  return buf;
}

std::string FormatUtc(uint64_t realtime_ns) {
  time_t secs = static_cast<time_t>(realtime_ns / 1000000000u);
  unsigned ms = static_cast<unsigned>((realtime_ns / 1000000u) % 1000u);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof(buf) - n, ".%03u UTC", ms);
  return buf;
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace trainprof::collector
