// Test utility: the loaded object (ELF file) holding an address of this test process, as
// inject's MODULE records describe it (bias, runtime span, path, GNU build id), found with
// dl_iterate_phdr: what lets a unit test symbolize its own functions with libdw; and the return
// address planted functions give as their frame.
#pragma once

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace trainprof::test {

/// The return address of its call: an address inside the caller, on the caller's line (what a
/// planted function returns to stand in for a captured frame).
__attribute__((noinline)) inline uint64_t ReturnAddress() {
  return reinterpret_cast<uint64_t>(__builtin_extract_return_addr(__builtin_return_address(0)));
}

/// The loaded object holding `address`, as inject's MODULE records describe it.
struct ModuleSpan {
  uint64_t bias = 0, start = 0, end = 0;
  std::string path, build_id;
};
inline ModuleSpan ModuleOf(uint64_t address) {
  struct Query {
    uint64_t address;
    ModuleSpan out;
    bool found = false;
  } q{address, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        uint64_t lo = UINT64_MAX, hi = 0;
        std::string build_id;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_LOAD) {
            lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
            hi = std::max<uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
          } else if (ph.p_type == PT_NOTE) {
            const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
            const uint8_t* end = p + ph.p_memsz;
            while (p + sizeof(ElfW(Nhdr)) <= end) {
              const auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
              const uint8_t* desc = p + sizeof(ElfW(Nhdr)) + ((n->n_namesz + 3) & ~3u);
              if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4) {
                static const char kHex[] = "0123456789abcdef";
                for (uint32_t i = 0; i < n->n_descsz; ++i) {
                  build_id += kHex[desc[i] >> 4];
                  build_id += kHex[desc[i] & 15];
                }
              }
              p = desc + ((n->n_descsz + 3) & ~3u);
            }
          }
        }
        if (q->address < lo || q->address >= hi) return 0;
        q->out = {info->dlpi_addr, lo, hi, info->dlpi_name, build_id};
        if (q->out.path.empty()) {
          char buf[4096];
          const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
          q->out.path.assign(buf, n > 0 ? static_cast<size_t>(n) : 0);
        }
        q->found = true;
        return 1;
      },
      &q);
  if (!q.found) throw std::runtime_error("no module holds the address");
  return q.out;
}

}  // namespace trainprof::test
