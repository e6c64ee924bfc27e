// Test-only library, loaded by Python programs with ctypes (tests/e2e/test_python_async.py): a
// SIGPROF handler that reads the interrupted thread's Python frames with the sampler's walk
// (inject/stacks/python_async_walk.h), as the CPU sampler's handler does, and keeps them for the
// test to compare with what the interpreter itself says. Names are interned in a small table of
// its own (lock-free: a busy table refuses, as StringTable::TryIntern does).
//
//   tp_probe_init()           finds the interpreter (1: a supported one, process_vm_readv works)
//   tp_probe_capture_now()    SIGPROF to this thread; returns the frames the handler read
//   tp_probe_frame(i, ...)    frame i of the last capture (innermost first)
//   tp_probe_missed()         its missed count
//   tp_probe_profile(us)      ITIMER_PROF every `us` of CPU time (0: off); each tick counts the
//                             innermost frame's function (tp_probe_count(name))
//   tp_probe_offset(field)    a layout offset, for the test's own check of it
//   tp_probe_cost(n)          mean ns of a walk of this thread's frames
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "stacks/python_api.h"
#include "stacks/python_async_walk.h"

namespace {

using trainprof::inject::stacks::AsyncPythonWalker;
using trainprof::inject::stacks::PyProcess;
using trainprof::inject::stacks::SafeReader;

constexpr size_t kStrings = 4096;
constexpr size_t kArena = 1 << 20;

char g_arena[kArena];
size_t g_arena_used = 0;
const char* g_str[kStrings];  // id → bytes (NUL-terminated), id 0 unused
uint32_t g_len[kStrings];
uint32_t g_count = 1;
std::atomic_flag g_busy = ATOMIC_FLAG_INIT;

uint32_t Intern(void*, const char* s, uint32_t n) {
  if (g_busy.test_and_set(std::memory_order_acquire)) return 0;
  uint32_t id = 0;
  for (uint32_t i = 1; i < g_count; ++i) {
    if (g_len[i] == n && memcmp(g_str[i], s, n) == 0) id = i;
  }
  if (id == 0 && g_count < kStrings && g_arena_used + n + 1 <= kArena) {
    char* p = g_arena + g_arena_used;
    memcpy(p, s, n);
    p[n] = 0;
    g_arena_used += n + 1;
    id = g_count;
    g_str[id] = p;
    g_len[id] = n;
    g_count = id + 1;
  }
  g_busy.clear(std::memory_order_release);
  return id;
}

PyProcess g_py;
constinit AsyncPythonWalker g_walker;
uint64_t g_out[3 * 64];
size_t g_values = 0;
uint32_t g_missed = 0;
std::atomic<bool> g_profiling{false};
uint64_t g_hits[kStrings];  // by function id of the innermost frame
uint64_t g_ticks = 0, g_ticks_missed = 0, g_ticks_empty = 0;

void OnProf(int, siginfo_t*, void*) {
  const int saved = errno;
  uint64_t out[3 * 64];
  uint32_t missed = 0;
  size_t n = g_walker.Capture(g_py, SafeReader(getpid()), Intern, nullptr, 1, out, 3 * 64, &missed);
  if (g_profiling.load(std::memory_order_relaxed)) {
    ++g_ticks;
    if (missed != 0) ++g_ticks_missed;
    if (n == 0) ++g_ticks_empty;
    if (n >= 3 && (out[0] >> 1) < kStrings) ++g_hits[out[0] >> 1];
  } else {
    memcpy(g_out, out, n * sizeof(uint64_t));
    g_values = n;
    g_missed = missed;
  }
  errno = saved;
}

}  // namespace

extern "C" {

int tp_probe_init() {
  g_py = trainprof::inject::stacks::ResolvePyProcess(trainprof::inject::stacks::DlsymDefault);
  if (g_py.layout == nullptr || !trainprof::inject::stacks::SafeReadWorks()) return 0;
  struct sigaction sa {};
  sa.sa_sigaction = OnProf;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGPROF, &sa, nullptr) == 0 ? 1 : 0;
}

int tp_probe_capture_now() {
  g_values = 0;
  g_missed = 0;
  pthread_kill(pthread_self(), SIGPROF);  // handled before pthread_kill returns (unblocked here)
  return static_cast<int>(g_values / 3);
}

/// Frame i of the last capture: function and file bytes (NUL-terminated) and line; 0 if none.
int tp_probe_frame(int i, const char** function, const char** file, int* line) {
  if (i < 0 || static_cast<size_t>(i) * 3 + 3 > g_values) return 0;
  const uint64_t* f = g_out + i * 3;
  *function = g_str[f[0] >> 1];
  *file = g_str[f[1]];
  *line = static_cast<int>(f[2]);
  return 1;
}

unsigned tp_probe_missed() { return g_missed; }

int tp_probe_profile(int us) {
  itimerval t{};
  t.it_interval.tv_usec = us;
  t.it_value.tv_usec = us;
  g_profiling.store(us > 0, std::memory_order_relaxed);
  return setitimer(ITIMER_PROF, &t, nullptr);
}

/// Ticks whose innermost frame was `function` (a name the probe interned), and totals.
unsigned long tp_probe_count(const char* function) {
  for (uint32_t i = 1; i < g_count; ++i) {
    if (strcmp(g_str[i], function) == 0) return g_hits[i];
  }
  return 0;
}
unsigned long tp_probe_ticks() { return g_ticks; }
unsigned long tp_probe_ticks_missed() { return g_ticks_missed; }
unsigned long tp_probe_ticks_empty() { return g_ticks_empty; }
unsigned long tp_probe_name_misses() { return g_walker.name_misses(); }

/// Mean ns of one walk of this thread's frames (called directly, `n` times: the handler's cost
/// without the signal's).
double tp_probe_cost(int n) {
  uint64_t out[3 * 64];
  uint32_t missed = 0;
  timespec a{}, b{};
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < n; ++i) g_walker.Capture(g_py, SafeReader(getpid()), Intern, nullptr, 1, out, 3 * 64, &missed);
  clock_gettime(CLOCK_MONOTONIC, &b);
  return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
}

/// An offset of the layout in use, by field name (-1: unknown field or no layout).
long tp_probe_offset(const char* field) {
  if (g_py.layout == nullptr) return -1;
  const auto& l = *g_py.layout;
  struct {
    const char* name;
    size_t value;
  } fields[] = {{"code_firstlineno", l.code_firstlineno}, {"code_filename", l.code_filename},
                {"code_qualname", l.code_qualname},       {"code_linetable", l.code_linetable},
                {"code_adaptive", l.code_adaptive},       {"str_ascii_size", l.str_ascii_size},
                {"str_compact_size", l.str_compact_size}, {"str_utf8", l.str_utf8},
                {"code_code", l.code_code}};
  for (const auto& f : fields) {
    if (strcmp(f.name, field) == 0) return static_cast<long>(f.value);
  }
  return -1;
}

}  // extern "C"
