#include "stacks/modules.h"

#include <elf.h>
#include <link.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>

#include "recorder.h"
#include "stacks/build_id.h"
#include "stacks/mapped_path.h"
#include "stacks/load_span.h"
#include "string_table.h"

namespace trainprof::inject {
namespace {

struct KnownModule {
  uintptr_t start;
  uintptr_t end;
  uintptr_t bias;
};

KnownModule g_known[kMaxModules];
std::atomic<uint32_t> g_known_count{0};
// The tid of the thread rescanning (0: none).
std::atomic<uint32_t> g_rescanning{0};
// dlpi_adds at the last scan: an address outside every module with no load since (JIT code, an
// unmapped library) does not rescan again.
unsigned long long g_scanned_adds = 0;

struct ScanContext {
  ThreadState* t;
};

bool Known(uintptr_t start, uintptr_t bias, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    if (g_known[i].start == start && g_known[i].bias == bias) return true;
  }
  return false;
}

// The executable's real path (dl_iterate_phdr names it ""), read once per scan.
uint32_t ExecutablePathId(ThreadState* t) {
  static char exe[4096];  // under the rescan try-lock: one scan at a time
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return InternBytes(t, "/proc/self/exe", 14);
  if (static_cast<uint32_t>(n) > format::kMaxStringBytes) n = format::kMaxStringBytes;
  return InternBytes(t, exe, static_cast<uint32_t>(n));
}

// The loader's name for an object; a relative one (`dlopen("./libplugin.so")`, relative to a
// working directory the program may leave) becomes the mapped file's absolute path.
uint32_t AbsolutePathId(ThreadState* t, const char* name, uintptr_t start) {
  static char mapped[4096 + 1];  // under the rescan try-lock: one scan at a time
  if (name[0] != '/') {
    size_t n = MappedPath(start, mapped, sizeof(mapped));
    if (n > 0 && n <= format::kMaxStringBytes) return InternBytes(t, mapped, static_cast<uint32_t>(n));
  }
  return InternCString(t, name);
}

int OnModule(struct dl_phdr_info* info, size_t, void* data) {
  auto* ctx = static_cast<ScanContext*>(data);
  uintptr_t lo, hi;
  if (!LoadSpan(info, &lo, &hi)) return 0;
  uint32_t build_id = 0;
  uint32_t count = g_known_count.load(std::memory_order_acquire);
  if (Known(lo, info->dlpi_addr, count) || count >= kMaxModules) return 0;
  for (int i = 0; i < info->dlpi_phnum && build_id == 0; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_NOTE) continue;
    char hex[2 * 64 + 1];
    size_t n = BuildIdHex(reinterpret_cast<const unsigned char*>(info->dlpi_addr + p.p_vaddr), p.p_memsz, hex,
                          sizeof(hex));
    if (n > 0) build_id = InternBytes(ctx->t, hex, static_cast<uint32_t>(n));
  }
  const char* name = info->dlpi_name;
  uint32_t path = (name == nullptr || name[0] == '\0') ? ExecutablePathId(ctx->t) : AbsolutePathId(ctx->t, name, lo);
  RecordDefinition(ctx->t, format::rec::Module{.bias = info->dlpi_addr, .start = lo, .end = hi, .path = path,
                                               .build_id = build_id});
  g_known[count] = KnownModule{lo, hi, info->dlpi_addr};
  g_known_count.store(count + 1, std::memory_order_release);
  return 0;
}

// The loader's count of objects loaded so far (the first callback is enough).
int LoadCount(struct dl_phdr_info* info, size_t size, void* data) {
  if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds)) {
    *static_cast<unsigned long long*>(data) = info->dlpi_adds;
  }
  return 1;
}

}  // namespace

void ResetModules() {
  g_known_count.store(0, std::memory_order_release);
  g_scanned_adds = 0;
  g_rescanning.store(0, std::memory_order_release);  // a fork child: the scanning thread is gone
}

bool AddressInKnownModule(uintptr_t address) {
  uint32_t count = g_known_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < count; ++i) {
    if (address >= g_known[i].start && address < g_known[i].end) return true;
  }
  return false;
}

void EnsureModulesFor(ThreadState* t, const uint64_t* words, size_t n) {
  bool missing = false;
  for (size_t i = 0; i < n && !missing; ++i) {
    if ((words[i] & 1) != 0) break;  // Python frames follow the native ones
    missing = !AddressInKnownModule(static_cast<uintptr_t>(words[i] >> 1));
  }
  if (!missing) return;
  // One scan at a time. Another thread's scan is waited for (a few µs; its MODULE records then
  // come before this STACK); this thread's own — a signal handler that interrupted it — is not.
  uint32_t none = 0;
  for (int spins = 0; !g_rescanning.compare_exchange_weak(none, t->tid, std::memory_order_acquire); ++spins) {
    if (none == t->tid || spins > 100000) return;
    none = 0;
    sched_yield();
  }
  unsigned long long adds = 0;
  dl_iterate_phdr(LoadCount, &adds);
  if (adds == 0 || adds != g_scanned_adds || g_known_count.load(std::memory_order_relaxed) == 0) {
    ScanContext ctx{t};
    dl_iterate_phdr(OnModule, &ctx);
    g_scanned_adds = adds;
  }
  g_rescanning.store(0, std::memory_order_release);
}

}  // namespace trainprof::inject
