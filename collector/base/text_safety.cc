#include "collector/base/text_safety.h"

#include <cstdint>
#include <cstdio>

namespace trainprof::collector {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Length of the well-formed UTF-8 sequence at s[i] (Unicode table 3-7), or 0 if the bytes there
// do not start one; *bad_at is where it fails (the first byte that cannot belong to it).
size_t SequenceAt(std::string_view s, size_t i, size_t* bad_at) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t lead = b(i);
  size_t len;
  uint8_t lo = 0x80, hi = 0xBF;  // range of the second byte
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) lo = 0xA0;  // overlong
    if (lead == 0xED) hi = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) lo = 0x90;  // overlong
    if (lead == 0xF4) hi = 0x8F;  // beyond U+10FFFF
  } else {
    *bad_at = i + 1;  // a continuation byte or C0, C1, F5..FF: never a lead byte
    return 0;
  }
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= s.size() || b(i + k) < (k == 1 ? lo : 0x80) || b(i + k) > (k == 1 ? hi : 0xBF)) {
      *bad_at = i + k;  // the failing byte starts over (it may begin a sequence itself)
      return 0;
    }
  }
  return len;
}

}  // namespace

std::string ValidUtf8(std::string_view s) {
  std::string out;
  size_t i = 0;
  for (size_t bad = 0; i < s.size();) {
    size_t n = SequenceAt(s, i, &bad);
    if (n == 0) break;
    i += n;
  }
  if (i == s.size()) return std::string(s);
  out.reserve(s.size() + 8);
  out.append(s.substr(0, i));
  while (i < s.size()) {
    size_t bad = 0;
    size_t n = SequenceAt(s, i, &bad);
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += kReplacement;
      i = bad;
    }
  }
  return out;
}

std::string EscapeControls(std::string_view s) {
  std::string valid = ValidUtf8(s);
  bool clean = true;
  for (size_t i = 0; i < valid.size() && clean; ++i) {
    const auto c = static_cast<uint8_t>(valid[i]);
    clean = c >= 0x20 && c != 0x7F && !(c == 0xC2 && i + 1 < valid.size() && static_cast<uint8_t>(valid[i + 1]) < 0xA0);
  }
  if (clean) return valid;
  std::string out;
  out.reserve(valid.size() + 16);
  char buf[8];
  for (size_t i = 0; i < valid.size(); ++i) {
    const auto c = static_cast<uint8_t>(valid[i]);
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c == 0xC2 && i + 1 < valid.size() && static_cast<uint8_t>(valid[i + 1]) < 0xA0) {
      // U+0080..U+009F (valid UTF-8, so the next byte is a continuation byte 0x80..0x9F)
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<uint8_t>(valid[i + 1]));
      out += buf;
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace trainprof::collector
