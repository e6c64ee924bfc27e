#include "stacks/python_async.h"

#include <unistd.h>

#include <atomic>

#include "log.h"
#include "recorder.h"
#include "runtime.h"
#include "stacks/python_api.h"
#include "stacks/python_async_walk.h"
#include "stacks/sample_settings.h"
#include "string_table.h"

namespace trainprof::inject {

namespace {

stacks::PyProcess g_py;
// 0 not found, 1 finding, 2 found (g_py set), 3 refused (no safe read), 4 a CPython without a
// layout (g_py.unsupported says which; final: the process's interpreter does not change).
std::atomic<int> g_state{0};
std::atomic<bool> g_said{false};  // the stderr line was written (a fork child inherits it: said once)
constinit stacks::AsyncPythonWalker g_walker;

uint32_t Intern(void* ctx, const char* s, uint32_t n) {
  return ctx != nullptr ? TryInternBytes(static_cast<ThreadState*>(ctx), s, n) : 0;
}

void Resolve() {
  int s = g_state.load(std::memory_order_acquire);
  if (s != 0 || !g_state.compare_exchange_strong(s, 1, std::memory_order_acq_rel)) return;
  stacks::PyProcess p = stacks::ResolvePyProcess(stacks::DlsymDefault);
  if (p.layout == nullptr) {
    if (p.unsupported[0] != '\0') {
      g_py = p;
      g_state.store(4, std::memory_order_release);
    } else {
      g_state.store(0, std::memory_order_release);  // no CPython (yet): look again later
    }
    return;
  }
  g_py = p;
  g_state.store(stacks::SafeReadWorks() ? 2 : 3, std::memory_order_release);
}

__attribute__((constructor)) void PrepareAtLoad() { Resolve(); }

}  // namespace

void PreparePythonFramesAsync() {
  Resolve();
  if (g_state.load(std::memory_order_acquire) != 4 || g_said.exchange(true)) return;
  char pid[24];
  LogLine("pid ", FormatU64(static_cast<unsigned>(getpid()), pid), ": Python frames not read: ", g_py.unsupported,
          " is not supported; the samples show native frames only", nullptr);
}

const char* PythonFramesUnsupported() {
  Resolve();
  return g_state.load(std::memory_order_acquire) == 4 ? g_py.unsupported : "";
}

uint32_t FormatSampleMetadata(uint32_t hz, int signo, char* buf, size_t cap) {
  return FormatSampleMetadata(hz, signo, PythonFramesUnsupported(), buf, cap);
}

size_t CapturePythonFramesAsync(uint64_t* out, size_t max, uint32_t* missed, bool* cut) {
  *missed = 0;
  *cut = false;
  const int s = g_state.load(std::memory_order_acquire);
  if (s != 2 && s != 3) return 0;
  const Runtime& rt = Rt();
  // Where the kernel refuses process_vm_readv (s == 3), or the thread has no state to intern
  // names through, the walk still runs and counts the frames it cannot read or name as missed.
  const stacks::SafeReader reader(s == 2 ? rt.pid : 0);
  ThreadState* t = rt.strings != nullptr ? tls_thread : nullptr;
  return g_walker.Capture(g_py, reader, Intern, t, reinterpret_cast<uintptr_t>(rt.strings), out, max, missed, cut);
}

}  // namespace trainprof::inject
