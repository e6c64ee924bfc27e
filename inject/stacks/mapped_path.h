// The file a loaded object was mapped from, by address, from /proc/self/maps: the kernel's
// absolute path, whatever the loader was given (`dlopen("./libplugin.so")` names it relative to
// a working directory the program may have left since). modules.cc uses it for MODULE paths
// that are not absolute, so that the report finds the file to symbolize with.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

/// The path of the file mapping that contains `address`, NUL-terminated into out[0..cap);
/// returns its length, or 0 when no file mapping holds it, /proc is not readable, or the path
/// does not fit (or is " (deleted)"), or another call is under way (one static 8 KiB read buffer,
/// not the caller's stack). Async-signal-safe: open/read/close only, no allocation or lock.
size_t MappedPath(uintptr_t address, char* out, size_t cap);

}  // namespace trainprof::inject
