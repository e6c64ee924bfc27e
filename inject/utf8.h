// UTF-8 encoding of one code point: for names that reach the library as wide strings
// (InternWide) or as a str object's code units (the sampler's Python frames).
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

/// Writes code point c as UTF-8 (RFC 3629: 1 to 4 bytes) to out and returns the bytes written;
/// a surrogate (U+D800..U+DFFF) or a value past U+10FFFF is written as U+FFFD.
inline size_t EncodeUtf8(uint32_t c, char out[4]) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
  if (c < 0x80) {
    out[0] = static_cast<char>(c);
    return 1;
  }
  if (c < 0x800) {
    out[0] = static_cast<char>(0xC0 | (c >> 6));
    out[1] = static_cast<char>(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (c >> 12));
    out[1] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (c >> 18));
  out[1] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (c & 0x3F));
  return 4;
}

}  // namespace trainprof::inject
