// Spinning on the CPU for the sampling test programs (tests/programs/sample_*.cc).
#pragma once

#include <time.h>

/// Spins until the calling thread has used `ms` more milliseconds of CPU time (its CPU clock).
inline void SpinCpuMs(double ms) {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  const double end = t.tv_sec * 1e3 + t.tv_nsec / 1e6 + ms;
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  } while (t.tv_sec * 1e3 + t.tv_nsec / 1e6 < end);
}
