#include "stacks/build_id.h"

#include <elf.h>
#include <link.h>

#include <cstring>

#include "trainprof/build_id_hex.h"

namespace trainprof::inject {

size_t BuildIdHex(const unsigned char* notes, size_t size, char* hex, size_t cap) {
  size_t off = 0;
  while (off + sizeof(ElfW(Nhdr)) <= size) {
    ElfW(Nhdr) h;
    memcpy(&h, notes + off, sizeof(h));
    size_t name_at = off + sizeof(h);
    size_t desc_at = name_at + ((h.n_namesz + 3u) & ~size_t{3});
    size_t next = desc_at + ((h.n_descsz + 3u) & ~size_t{3});
    if (next > size || desc_at > size) return 0;
    if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 && memcmp(notes + name_at, "GNU", 4) == 0) {
      if (h.n_descsz == 0) return 0;
      return format::BuildIdToHex(notes + desc_at, h.n_descsz, hex, cap);
    }
    off = next;
  }
  return 0;
}

}  // namespace trainprof::inject
