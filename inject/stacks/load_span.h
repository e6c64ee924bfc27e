// The address span of a loaded object: its PT_LOAD segments as dl_iterate_phdr reports them.
#pragma once

#include <link.h>

#include <cstdint>

namespace trainprof::inject {

/// [*start, *end): the lowest runtime address of `info`'s PT_LOAD segments and one past the
/// highest (load bias + p_vaddr, + p_memsz). false when it has none.
inline bool LoadSpan(const struct dl_phdr_info* info, uintptr_t* start, uintptr_t* end) {
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_LOAD) continue;
    const uintptr_t s = info->dlpi_addr + p.p_vaddr;
    if (s < lo) lo = s;
    if (s + p.p_memsz > hi) hi = s + p.p_memsz;
  }
  *start = lo;
  *end = hi;
  return hi != 0;
}

}  // namespace trainprof::inject
