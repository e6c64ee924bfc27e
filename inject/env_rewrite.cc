#include "env_rewrite.h"

#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>

#include <cstring>
#include <string_view>

#include "config.h"

namespace trainprof::inject {
namespace {

// RewriteEnv finds the two quiet flags by position.
static_assert(std::string_view(kOwnedVars[kNumOwnedVars - 1]) == "TRAINPROF_QUIET");
static_assert(std::string_view(kOwnedVars[kNumOwnedVars - 2]) == "TRAINPROF_CUDA_QUIET");

// "NAME=..." matches name?
bool IsVar(const char* entry, const char* name) {
  size_t n = strlen(name);
  return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

int OwnedIndex(const char* entry) {
  for (size_t i = 0; i < kNumOwnedVars; ++i) {
    if (IsVar(entry, kOwnedVars[i])) return static_cast<int>(i);
  }
  return -1;
}

// Copies a ':' list value without `item`; returns the end of the written string.
char* CopyListWithout(const char* value, const char* item, char* out, const char* item2 = nullptr) {
  size_t item_len = item != nullptr ? strlen(item) : 0;
  size_t item2_len = item2 != nullptr ? strlen(item2) : 0;
  bool first = true;
  const char* p = value;
  while (true) {
    const char* end = strchr(p, ':');
    size_t len = end != nullptr ? static_cast<size_t>(end - p) : strlen(p);
    bool skip = len == 0 || (item_len != 0 && len == item_len && strncmp(p, item, len) == 0) ||
                (item2_len != 0 && len == item2_len && strncmp(p, item2, len) == 0);
    if (!skip) {
      if (!first) *out++ = ':';
      memcpy(out, p, len);
      out += len;
      first = false;
    }
    if (end == nullptr) break;
    p = end + 1;
  }
  *out = '\0';
  return out;
}

bool ListHas(const char* value, const char* item) {
  size_t n = strlen(item);
  for (const char* p = value; p != nullptr && *p != '\0';) {
    const char* end = strchr(p, ':');
    size_t len = end != nullptr ? static_cast<size_t>(end - p) : strlen(p);
    if (len == n && strncmp(p, item, n) == 0) return true;
    p = end != nullptr ? end + 1 : nullptr;
  }
  return false;
}

// In a sanitizer build the (sanitized) library can only load after the sanitizer's runtime, which
// must come first in LD_PRELOAD (docs/testing.md): a child whose environment we give LD_PRELOAD
// gets the runtime in front of us. Normal builds: nothing.
#ifdef TRAINPROF_SANITIZER_RUNTIME
constexpr const char* kPreloadFirst = TRAINPROF_SANITIZER_RUNTIME;
constexpr size_t kPreloadFirstBytes = sizeof(TRAINPROF_SANITIZER_RUNTIME);  // with the ':' after it
#else
constexpr const char* kPreloadFirst = nullptr;
constexpr size_t kPreloadFirstBytes = 0;
#endif

// Rewrites a ':' list variable (LD_PRELOAD, PYTHONPATH) into scratch. Returns the new entry or
// nullptr to drop it. `first`: with follow, an item to put before `item` (taken out of the rest);
// without, one to take out together with `item` (it was there for `item`'s sake).
char* RewriteList(const char* entry, const char* name, const char* item, bool follow, char** scratch,
                  const char* first = nullptr) {
  const char* value = entry + strlen(name) + 1;
  char* out = *scratch;
  size_t n = strlen(name);
  memcpy(out, name, n);
  out[n] = '=';
  char* v = out + n + 1;
  char* end;
  if (follow) {
    if (item == nullptr || ListHas(value, item)) return const_cast<char*>(entry);
    if (first != nullptr) v = stpcpy(stpcpy(v, first), ":");
    size_t m = strlen(item);
    memcpy(v, item, m);
    v[m] = '\0';
    end = v + m;
    if (*value != '\0') {
      *end++ = ':';
      end = CopyListWithout(value, first, end);
      if (end[-1] == ':') *--end = '\0';  // the rest held only `first`
    }
  } else {
    if (item == nullptr || !ListHas(value, item)) return const_cast<char*>(entry);
    end = CopyListWithout(value, item, v, first);
    if (v == end) return nullptr;  // the list held only us
  }
  *scratch = end + 1;
  return out;
}

void* MapEnvMemory(size_t bytes) {
  int saved = errno;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  errno = saved;
  return p == MAP_FAILED ? nullptr : p;
}

void UnmapEnvMemory(void* p, size_t bytes) {
  int saved = errno;
  munmap(p, bytes);
  errno = saved;
}

}  // namespace

EnvMemory g_env_memory = {MapEnvMemory, UnmapEnvMemory};

namespace {
struct VforkRegion {
  std::atomic<uintptr_t> owner{0};  ///< pthread_self() of the thread whose vfork children use it
  void* mem = nullptr;
  size_t bytes = 0;
};
VforkRegion g_vfork_regions[kVforkRegions];
}  // namespace

void* VforkChildMemory(size_t bytes, bool* kept) {
  // In a vfork child pthread_self() is the suspended parent thread's: its region is ours alone.
  const auto self = static_cast<uintptr_t>(pthread_self());
  VforkRegion* mine = nullptr;
  for (VforkRegion& r : g_vfork_regions) {
    if (r.owner.load(std::memory_order_acquire) == self) {
      mine = &r;
      break;
    }
  }
  for (size_t i = 0; mine == nullptr && i < kVforkRegions; ++i) {
    uintptr_t none = 0;
    if (g_vfork_regions[i].owner.compare_exchange_strong(none, self, std::memory_order_acq_rel)) mine = &g_vfork_regions[i];
  }
  if (mine == nullptr) {  // more vforking threads than regions: one for this call
    *kept = false;
    return g_env_memory.map(bytes);
  }
  if (mine->bytes < bytes) {
    if (mine->mem != nullptr) g_env_memory.unmap(mine->mem, mine->bytes);
    mine->bytes = 0;
    // Room to grow: the next environment may be a little larger.
    const size_t want = bytes + bytes / 4;
    mine->mem = g_env_memory.map(want);
    if (mine->mem == nullptr) return nullptr;
    mine->bytes = want;
  }
  *kept = true;
  return mine->mem;
}

size_t RewriteBytes(char* const* envp, const Config& cfg) {
  return RewrittenEnvCapacity(envp) * sizeof(char*) + RewriteScratchBytes(envp, cfg);
}

size_t RewrittenEnvCapacity(char* const* envp) {
  size_t n = 0;
  if (envp != nullptr) {
    while (envp[n] != nullptr) ++n;
  }
  return n + kNumOwnedVars + 3;
}

size_t RewriteScratchBytes(char* const* envp, const Config& cfg) {
  size_t extra = 64 + (cfg.lib_path ? strlen(cfg.lib_path) : 0) + (cfg.python_dir ? strlen(cfg.python_dir) : 0) +
                 kPreloadFirstBytes;
  size_t total = 2 * extra;
  if (envp != nullptr) {
    for (size_t i = 0; envp[i] != nullptr; ++i) {
      if (IsVar(envp[i], "LD_PRELOAD") || IsVar(envp[i], "PYTHONPATH")) total += strlen(envp[i]) + extra;
    }
  }
  return total;
}

char** RewriteEnv(char* const* envp, const Config& cfg, bool follow, char** out, char* scratch) {
  bool present[kNumOwnedVars] = {};
  bool have_preload = false, have_pythonpath = false;
  size_t k = 0;
  for (size_t i = 0; envp != nullptr && envp[i] != nullptr; ++i) {
    char* e = envp[i];
    int owned = OwnedIndex(e);
    if (owned >= 0) {
      present[owned] = true;
      if (follow) out[k++] = e;
      continue;
    }
    if (IsVar(e, "LD_PRELOAD")) {
      have_preload = true;
      e = RewriteList(e, "LD_PRELOAD", cfg.lib_path, follow, &scratch, kPreloadFirst);
    } else if (IsVar(e, "PYTHONPATH")) {
      have_pythonpath = true;
      e = RewriteList(e, "PYTHONPATH", cfg.python_dir, follow, &scratch);
    }
    if (e != nullptr) out[k++] = e;
  }
  if (follow) {
    for (size_t i = 0; i < kNumOwnedVars; ++i) {
      if (!present[i] && cfg.saved[i] != nullptr) out[k++] = const_cast<char*>(cfg.saved[i]);
    }
    static char quiet_var[] = "TRAINPROF_QUIET=1";
    if (cfg.quiet && cfg.saved[kNumOwnedVars - 1] == nullptr && !present[kNumOwnedVars - 1]) out[k++] = quiet_var;
    static char cuda_quiet_var[] = "TRAINPROF_CUDA_QUIET=1";
    if (cfg.cuda_quiet && cfg.saved[kNumOwnedVars - 2] == nullptr && !present[kNumOwnedVars - 2]) {
      out[k++] = cuda_quiet_var;
    }
    if (!have_preload && cfg.lib_path != nullptr) {
      out[k++] = scratch;
      char* p = stpcpy(scratch, "LD_PRELOAD=");
#ifdef TRAINPROF_SANITIZER_RUNTIME
      p = stpcpy(stpcpy(p, kPreloadFirst), ":");
#endif
      scratch = stpcpy(p, cfg.lib_path) + 1;
    }
    if (!have_pythonpath && cfg.python_dir != nullptr) {
      out[k++] = scratch;
      scratch = stpcpy(stpcpy(scratch, "PYTHONPATH="), cfg.python_dir) + 1;
    }
  }
  out[k] = nullptr;
  return out;
}

}  // namespace trainprof::inject
