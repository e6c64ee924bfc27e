// How far CLOCK_MONOTONIC drifts from a straight line in TSC ticks over a run: the accuracy of
// the TSC recording clock's conversion (docs/performance.md, "The TSC"). Usage:
//   tp_clock_drift SECONDS INTERVAL_MS
// takes a calibration pair as the library does (TSC before, clock_gettime, TSC after, tightest of
// 3; inject/trace_clock.cc) every INTERVAL_MS for SECONDS, then prints:
//   fit_max_ns, fit_rms_ns     residuals of one least-squares line through all pairs (what a
//                              file with only its start and end pairs would be off by, at most
//                              about twice this)
//   interp_every_S_max_ns      the error of piecewise-linear interpolation between pairs S s
//                              apart, measured at the pairs between them (what the collector does
//                              with pairs that far apart)
//   width_max_ticks            the widest pair kept (its uncertainty)
#include <time.h>
#include <x86intrin.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

uint64_t Mono() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Pair {
  uint64_t ticks, ns, width;
};

Pair Take() {
  Pair best{0, 0, UINT64_MAX};
  for (int i = 0; i < 3; ++i) {
    unsigned aux;
    uint64_t a = __rdtscp(&aux), n = Mono(), b = __rdtscp(&aux);
    if (b - a < best.width) best = {a + (b - a) / 2, n, b - a};
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 60;
  const long interval_ms = argc > 2 ? atol(argv[2]) : 100;
  std::vector<Pair> pairs;
  const uint64_t end = Mono() + static_cast<uint64_t>(seconds * 1e9);
  while (true) {
    pairs.push_back(Take());
    if (pairs.back().ns >= end) break;
    timespec pause{interval_ms / 1000, (interval_ms % 1000) * 1000000};
    nanosleep(&pause, nullptr);
  }
  // Least squares ns = a + b * ticks, relative to the first pair (doubles keep ns exact here).
  const double t0 = static_cast<double>(pairs[0].ticks), n0 = static_cast<double>(pairs[0].ns);
  double st = 0, sn = 0, stt = 0, stn = 0;
  const double k = static_cast<double>(pairs.size());
  for (const Pair& p : pairs) {
    double t = p.ticks - t0, n = p.ns - n0;
    st += t, sn += n, stt += t * t, stn += t * n;
  }
  const double b = (k * stn - st * sn) / (k * stt - st * st), a = (sn - b * st) / k;
  double fit_max = 0, fit_sq = 0;
  uint64_t width_max = 0;
  for (const Pair& p : pairs) {
    double r = (p.ns - n0) - (a + b * (p.ticks - t0));
    fit_max = std::fmax(fit_max, std::fabs(r));
    fit_sq += r * r;
    if (p.width > width_max) width_max = p.width;
  }
  printf("{\"seconds\": %.1f, \"pairs\": %zu, \"ghz\": %.6f, \"fit_max_ns\": %.1f, \"fit_rms_ns\": %.1f, \"width_max_ticks\": %llu",
         seconds, pairs.size(), 1.0 / b, fit_max, std::sqrt(fit_sq / k), static_cast<unsigned long long>(width_max));
  for (double every_s : {1.0, 5.0, 10.0, 30.0}) {
    const size_t step = static_cast<size_t>(every_s * 1000 / interval_ms);
    if (step < 2 || step >= pairs.size()) continue;
    double worst = 0;
    for (size_t i = 0; i + step < pairs.size(); i += step) {
      const Pair &l = pairs[i], &h = pairs[i + step];
      const double slope = static_cast<double>(h.ns - l.ns) / static_cast<double>(h.ticks - l.ticks);
      for (size_t j = i + 1; j < i + step; ++j) {
        const double est = l.ns + slope * static_cast<double>(pairs[j].ticks - l.ticks);
        worst = std::fmax(worst, std::fabs(est - static_cast<double>(pairs[j].ns)));
      }
    }
    printf(", \"interp_every_%.0fs_max_ns\": %.1f", every_s, worst);
  }
  printf("}\n");
  return 0;
}
