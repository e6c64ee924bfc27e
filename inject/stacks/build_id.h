// The GNU build id of a loaded object, from its note segment (PT_NOTE) in memory: what the
// collector checks against the file it symbolizes with (MODULE records, modules.h). Pure.
#pragma once

#include <cstddef>

namespace trainprof::inject {

/// The GNU build id note (NT_GNU_BUILD_ID, name "GNU") among the ELF notes notes[0..size), as
/// lowercase hex into hex[0..cap) (NUL-terminated); returns its length, 0 when there is none, the
/// notes are malformed, or it does not fit.
size_t BuildIdHex(const unsigned char* notes, size_t size, char* hex, size_t cap);

}  // namespace trainprof::inject
