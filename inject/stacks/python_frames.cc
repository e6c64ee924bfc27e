#include "stacks/python_frames.h"

#include <atomic>

#include "runtime.h"
#include "stacks/python_walk.h"
#include "string_table.h"

namespace trainprof::inject {

namespace {

stacks::PyApi g_api;
std::atomic<int> g_api_state{0};  // 0 unresolved, 1 resolving, 2 resolved (g_api set)
constinit stacks::PythonWalker g_walker;

uint32_t Intern(void* ctx, const char* s, uint32_t n) {
  return InternBytes(static_cast<ThreadState*>(ctx), s, n);
}

const stacks::PyApi* Api() {
  int s = g_api_state.load(std::memory_order_acquire);
  if (s == 2) return &g_api;
  if (s == 0 && g_api_state.compare_exchange_strong(s, 1, std::memory_order_acq_rel)) {
    g_api = stacks::ResolvePyApi(stacks::DlsymDefault);
    g_api_state.store(2, std::memory_order_release);
    return &g_api;
  }
  return nullptr;
}

// At load: the library's constructors run after every object the program needs, libpython among
// them (or the interpreter in the executable, Debian's python3), so the API is found here and
// dlsym, which is not async-signal-safe, stays out of a first capture made in a signal handler
// (NVTX from a handler). A process that loads Python later (dlopen) resolves at its first capture.
__attribute__((constructor)) void ResolveAtLoad() {
  stacks::PyApi a = stacks::ResolvePyApi(stacks::DlsymDefault);
  int s = 0;
  if (a.ok && g_api_state.compare_exchange_strong(s, 1, std::memory_order_acq_rel)) {
    g_api = a;
    g_api_state.store(2, std::memory_order_release);
  }
}

}  // namespace

size_t CapturePythonFrames(ThreadState* t, uint64_t* out, size_t max_values, bool* cut) {
  *cut = false;
  if (t == nullptr) return 0;
  const stacks::PyApi* api = Api();
  if (api == nullptr || !api->ok) return 0;
  return g_walker.Capture(*api, Intern, t, Rt().strings, out, max_values, cut);
}

}  // namespace trainprof::inject
