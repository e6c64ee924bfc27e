// The ITT collector for `--trace=torch-ops`: PyTorch's ITT emission
// (`torch.autograd.profiler.emit_itt()`, which the Python shim enters) calls
// __itt_task_begin/__itt_task_end around every operator in its domain "PyTorch". ittnotify's
// static part, linked into libtorch_cpu, dlopens the collector named by INTEL_LIBITTNOTIFY64 (the
// launcher names this library) at its first call and, since we export `__itt_api_init`, hands us
// its `__itt_global`: we point its function table at the handlers below and switch the domain on.
// Each task becomes a range push/pop in the domain format::kTorchOpsDomain on the calling thread.
//
// The layouts used are those of ittnotify.h / ittnotify_config.h (Intel ITT API 3.x, the
// "collector interface": __itt_global, __itt_api_info, __itt_domain, __itt_string_handle), checked
// by the global's magic and major version before anything is written. Handlers are the hot path:
// no lock and no allocation (string handles are slots of one mmap'ed array indexed by string id).
#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ranges.h"
#include "recorder.h"
#include "runtime.h"
#include "itt_layout.h"
#include "string_table.h"
#include "trainprof/torch_ops.h"

namespace trainprof::inject {
namespace {

using namespace itt;

// PyTorch's domain (torch/csrc/itt_wrapper.cpp). Other domains get flag 0: their tasks are skipped
// by the ITT macros without a call.
constexpr const char* kPyTorchDomain = "PyTorch";

// String handles by string id: one slot per id, mmap'ed once (MAP_NORESERVE: pages as used).
constexpr uint32_t kMaxHandles = 1u << 20;
std::atomic<IttStringHandle*> g_handles{nullptr};

// Domains we handed out (few: one per library that uses ITT); guarded by g_domain_mu.
constexpr int kMaxIttDomains = 64;
constexpr size_t kMaxDomainName = 127;
IttDomain g_domains[kMaxIttDomains];
char g_domain_names[kMaxIttDomains][kMaxDomainName + 1];
int g_domain_count = 0;
pthread_mutex_t g_domain_mu = PTHREAD_MUTEX_INITIALIZER;

// Our NVTX domain id in the string table it was made in: a fork child records with a fresh
// table (runtime.cc), where the domain is defined again.
std::atomic<uint32_t> g_ops_domain{0};
std::atomic<StringTable*> g_ops_table{nullptr};

uint32_t OpsDomain(ThreadState* t) {
  StringTable* table = Rt().strings;
  if (__builtin_expect(g_ops_table.load(std::memory_order_acquire) == table && table != nullptr, 1)) {
    return g_ops_domain.load(std::memory_order_relaxed);
  }
  if (table == nullptr) return 0;
  const uint32_t d = table->Domain(t, InternCString(t, format::kTorchOpsDomain));
  if (d == 0) return 0;  // inside a record (a signal handler): not now
  g_ops_domain.store(d, std::memory_order_relaxed);
  g_ops_table.store(table, std::memory_order_release);
  return d;
}

bool IsPyTorch(const IttDomain* d) { return d != nullptr && d->nameA != nullptr && strcmp(d->nameA, kPyTorchDomain) == 0; }

IttDomain* DomainCreate(const char* name) {
  if (name == nullptr) return nullptr;
  pthread_mutex_lock(&g_domain_mu);
  IttDomain* found = nullptr;
  for (int i = 0; i < g_domain_count && found == nullptr; ++i) {
    if (strncmp(g_domain_names[i], name, kMaxDomainName) == 0) found = &g_domains[i];
  }
  if (found == nullptr && g_domain_count < kMaxIttDomains) {
    char* copy = g_domain_names[g_domain_count];
    strncpy(copy, name, kMaxDomainName);  // longer names are cut (and compared cut)
    found = &g_domains[g_domain_count++];
    found->nameA = copy;
    found->flag = IsPyTorch(found) ? 1 : 0;
  }
  pthread_mutex_unlock(&g_domain_mu);
  return found;
}

IttStringHandle* Handles() {
  IttStringHandle* h = g_handles.load(std::memory_order_acquire);
  if (__builtin_expect(h != nullptr, 1)) return h;
  void* m = mmap(nullptr, sizeof(IttStringHandle) * kMaxHandles, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  IttStringHandle* expected = nullptr;
  if (!g_handles.compare_exchange_strong(expected, static_cast<IttStringHandle*>(m), std::memory_order_acq_rel)) {
    munmap(m, sizeof(IttStringHandle) * kMaxHandles);
    return expected;
  }
  return static_cast<IttStringHandle*>(m);
}

// Called per operator by PyTorch (itt_range_push): the thread cache of the string table, then one
// slot of the handle array (written the same by any thread that fills it).
IttStringHandle* StringHandleCreate(const char* name) {
  ThreadState* t = CurrentThread();
  if (__builtin_expect(t == nullptr || name == nullptr, 0)) return nullptr;
  const uint32_t id = InternCString(t, name);
  IttStringHandle* handles = Handles();
  if (id == 0 || id >= kMaxHandles || handles == nullptr) return nullptr;
  IttStringHandle* h = &handles[id];
  if (__atomic_load_n(&h->extra1, __ATOMIC_ACQUIRE) != static_cast<int>(id)) {
    // Any thread filling the slot writes the same id; strA is left null (PyTorch never reads it).
    __atomic_store_n(&h->extra1, static_cast<int>(id), __ATOMIC_RELEASE);
  }
  return h;
}

// A handle's string id: ours from its slot, one made before we were loaded (the static part's
// list) by interning its text.
uint32_t NameOf(ThreadState* t, const IttStringHandle* h) {
  if (h == nullptr) return 0;
  const IttStringHandle* handles = g_handles.load(std::memory_order_relaxed);
  if (handles != nullptr && h >= handles && h < handles + kMaxHandles) {
    return static_cast<uint32_t>(__atomic_load_n(&h->extra1, __ATOMIC_ACQUIRE));
  }
  return h->strA != nullptr ? InternCString(t, h->strA) : 0;
}

void TaskBegin(const IttDomain* d, IttId, IttId, IttStringHandle* name) {
  if (!IsPyTorch(d)) return;
  ThreadState* t = CurrentThread();
  if (__builtin_expect(t == nullptr, 0)) return;
  const uint32_t domain = OpsDomain(t);
  if (domain != 0) PushRange(t, domain, NameOf(t, name), 0, /*may_stack=*/false);
}

void TaskEnd(const IttDomain* d) {
  if (!IsPyTorch(d)) return;
  ThreadState* t = CurrentThread();
  if (__builtin_expect(t == nullptr, 0)) return;
  const uint32_t domain = OpsDomain(t);
  if (domain != 0) PopRange(t, domain);
}

void Install(IttApiInfo* list, const char* name, void* fn) {
  for (IttApiInfo* a = list; a->name != nullptr; ++a) {
    if (strcmp(a->name, name) == 0 && a->func_ptr != nullptr) *a->func_ptr = fn;
  }
}

}  // namespace
}  // namespace trainprof::inject

using namespace trainprof::inject;

/// ittnotify's collector entry point (version 2 of its loading protocol: called once per static
/// part, under its mutex, with its global). Installs the handlers only in a process that records
/// with torch-ops traced; otherwise leaves ITT as without a collector.
extern "C" __attribute__((visibility("default"))) void __itt_api_init(void* global, int /*groups*/) {
  EnsureInit();
  Runtime& rt = Rt();
  auto* g = static_cast<IttGlobal*>(global);
  if (rt.inert.load() || !rt.cfg.trace_torch_ops || g == nullptr) return;
  if (memcmp(g->magic, kIttMagic, sizeof(kIttMagic)) != 0 || g->version_major != 3 || g->api_list_ptr == nullptr) {
    return;
  }
  for (IttDomain* d = g->domain_list; d != nullptr; d = d->next) {
    if (IsPyTorch(d)) d->flag = 1;  // created before we were loaded
  }
  Install(g->api_list_ptr, "__itt_domain_create", reinterpret_cast<void*>(&DomainCreate));
  Install(g->api_list_ptr, "__itt_string_handle_create", reinterpret_cast<void*>(&StringHandleCreate));
  Install(g->api_list_ptr, "__itt_task_begin", reinterpret_cast<void*>(&TaskBegin));
  Install(g->api_list_ptr, "__itt_task_end", reinterpret_cast<void*>(&TaskEnd));
}
