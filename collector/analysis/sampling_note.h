// What `trainprof run --sample` could not sample in a process (issue 35): threads that got no
// CPU timer (SAMPLE_THREAD_LOST: RLIMIT_SIGPENDING, `ulimit -i`, or a failed timer_create), and
// the CPU time of threads while they blocked the sampling signal (SAMPLE_PAUSED). The report's
// warnings, its stats (threads_not_sampled, samples_blocked_cpu_ms) and the function table's
// title say them, so that a table of 4 threads' samples does not read as the process's.
//
//   ImageStacks::threads_not_sampled ─► ThreadsNotSampled ─► DescribeThreadsNotSampled
//   ImageStacks::paused_cpu_ns       ─► BlockedCpuMs
#pragma once

#include <cstdint>
#include <string>

#include "collector/model/model.h"

namespace trainprof::collector {

/// Distinct threads of `p` (over its images) that were never sampled.
uint64_t ThreadsNotSampled(const Process& p);

/// "29 of the 33 threads in its trace were not sampled (no CPU timer: 25 because ..., 4 because
/// timer_create failed with EAGAIN, ...): the function table counts the others"; "none of the 33
/// threads in its trace was sampled (no CPU timer: ...)" when none was; "" when all were.
std::string DescribeThreadsNotSampled(const Process& p);

/// CPU time (ms, rounded down) of `p`'s threads that blocked the sampling signal, not sampled.
uint64_t BlockedCpuMs(const Process& p);

}  // namespace trainprof::collector
