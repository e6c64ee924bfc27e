// C entry points for the Python shim (python/_trainprof/ calls them through ctypes). They
// record into the same per-thread buffers as NVTX, in the same trace. Every function is a no-op
// returning 0 when this process does not record.
#include <cstdint>

#include "ranges.h"
#include "recorder.h"
#include "runtime.h"
#include "string_table.h"

using namespace trainprof::inject;

namespace {

ThreadState* RecordingThread() {
  if (Rt().file.load(std::memory_order_acquire) == nullptr) return nullptr;
  return CurrentThread();
}

// A definition record R (format::rec::Role, ProcessEnv) naming one interned string `s`; 1 if
// recorded, 0 if not recording or s is null.
template <typename R>
int DefineString(const char* s) {
  ThreadState* t = RecordingThread();
  if (t == nullptr || s == nullptr) return 0;
  RecordDefinition(t, R{.name = InternCString(t, s)});
  return 1;
}

}  // namespace

extern "C" {

/// Names this process's role in the report (e.g. "DataLoader worker"). Returns 1 if recorded,
/// 0 if this process does not record. `role` is UTF-8, NUL-terminated.
__attribute__((visibility("default"))) int trainprof_set_role(const char* role) {
  return DefineString<trainprof::format::rec::Role>(role);
}

/// Records a rank variable learned after start ("NAME=value", e.g. "RANK=1" once
/// torch.distributed.init_process_group() returned). Returns 1 if recorded.
__attribute__((visibility("default"))) int trainprof_set_env(const char* name_value) {
  return DefineString<trainprof::format::rec::ProcessEnv>(name_value);
}

/// 1 if this process is recording into a trace file, else 0.
__attribute__((visibility("default"))) int trainprof_is_recording() { return Rt().recording.load() ? 1 : 0; }

/// Id of the domain named `name` (created on first use, like nvtxDomainCreateA); 0 if not recording.
__attribute__((visibility("default"))) uint32_t trainprof_domain(const char* name) {
  ThreadState* t = RecordingThread();
  if (t == nullptr || Rt().strings == nullptr) return 0;
  return Rt().strings->Domain(t, InternCString(t, name));
}

/// Id of an interned string (like nvtxDomainRegisterStringA); 0 if not recording.
__attribute__((visibility("default"))) uint32_t trainprof_string(const char* s) {
  ThreadState* t = RecordingThread();
  return t != nullptr ? InternCString(t, s) : 0;
}

/// Names category `category` of `domain` (like nvtxDomainNameCategoryA).
__attribute__((visibility("default"))) void trainprof_category(uint32_t domain, uint32_t category, const char* name) {
  ThreadState* t = RecordingThread();
  if (t != nullptr && domain <= trainprof::format::kMaxDomainIds) NameCategory(t, domain, category, InternCString(t, name));
}

/// Pushes a range named by string id `name` (like nvtxDomainRangePushEx). Returns its level.
__attribute__((visibility("default"))) int trainprof_push(uint32_t domain, uint32_t name, uint32_t category) {
  ThreadState* t = RecordingThread();
  if (t == nullptr || domain > trainprof::format::kMaxDomainIds) return -1;
  return PushRange(t, domain, name, category);
}

/// Pops the innermost range of `domain` on this thread. Returns the level ended, -1 if none.
__attribute__((visibility("default"))) int trainprof_pop(uint32_t domain) {
  ThreadState* t = RecordingThread();
  if (t == nullptr || domain > trainprof::format::kMaxDomainIds) return -1;
  return PopRange(t, domain);
}

/// Records a mark named by string id `name`.
__attribute__((visibility("default"))) void trainprof_mark(uint32_t domain, uint32_t name, uint32_t category) {
  ThreadState* t = RecordingThread();
  if (t != nullptr && domain <= trainprof::format::kMaxDomainIds) MarkEvent(t, domain, name, category);
}

}  // extern "C"
