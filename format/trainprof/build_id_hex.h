// The MODULE record's build id text (docs/trace-format.md, "Stacks"): the GNU build id's bytes
// as lowercase hex, two digits per byte. The writer (inject/stacks/build_id.cc, from the note in
// memory) and the reader's check (collector/symbols/symbolizer.cc, from the file) share it so
// the two spellings cannot drift apart. Pure: no allocation, async-signal-safe.
#pragma once

#include <cstddef>

namespace trainprof::format {

/// bytes[0..n) as lowercase hex into out[0..cap), NUL-terminated; returns 2 * n, or 0 (out
/// untouched) when 2 * n + 1 does not fit in cap.
inline size_t BuildIdToHex(const unsigned char* bytes, size_t n, char* out, size_t cap) {
  static constexpr char kDigits[] = "0123456789abcdef";
  if (2 * n + 1 > cap) return 0;
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  out[2 * n] = '\0';
  return 2 * n;
}

}  // namespace trainprof::format
