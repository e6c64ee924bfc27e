// C entry points for the Python shim (python/sitecustomize.py calls them through ctypes).
#include "recorder.h"
#include "runtime.h"
#include "string_table.h"

using namespace trainprof::inject;

extern "C" {

/// Names this process's role in the report (e.g. "DataLoader worker"). Returns 1 if recorded,
/// 0 if this process does not record. `role` is UTF-8, NUL-terminated.
__attribute__((visibility("default"))) int trainprof_set_role(const char* role) {
  EnsureInit();
  if (Rt().file.load() == nullptr || role == nullptr) return 0;
  ThreadState* t = CurrentThread();
  if (t == nullptr) return 0;
  uint64_t f[1] = {InternCString(t, role)};
  RecordDefinition(t, trainprof::format::RecordTag::kRole, f, 1);
  return 1;
}

/// 1 if this process is recording into a trace file, else 0.
__attribute__((visibility("default"))) int trainprof_is_recording() {
  EnsureInit();
  return Rt().recording.load() ? 1 : 0;
}

}  // extern "C"
