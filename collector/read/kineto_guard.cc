#include "collector/read/kineto_guard.h"

namespace trainprof::collector {

namespace {

bool Space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool Structural(unsigned char c) { return c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':'; }

// Length of the UTF-8 sequence a lead byte starts (RFC 3629 §4), 0 for a byte that cannot lead.
int SequenceLength(unsigned char c) {
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return 2;
  if (c >= 0xE0 && c <= 0xEF) return 3;
  if (c >= 0xF0 && c <= 0xF4) return 4;
  return 0;
}

// Whether `c` may follow the lead byte `lead` as its first continuation byte (RFC 3629 §4: no
// overlong forms, no surrogates, nothing past U+10FFFF).
bool SecondByteOk(unsigned char lead, unsigned char c) {
  switch (lead) {
    case 0xE0: return c >= 0xA0 && c <= 0xBF;
    case 0xED: return c >= 0x80 && c <= 0x9F;
    case 0xF0: return c >= 0x90 && c <= 0xBF;
    case 0xF4: return c >= 0x80 && c <= 0x8F;
    default: return c >= 0x80 && c <= 0xBF;
  }
}

}  // namespace

void JsonGuard::Put(char c, char** out) {
  *(*out)++ = c;
  ++string_bytes_;
}

size_t JsonGuard::Filter(const char* in, size_t n, char* out) {
  char* o = out;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(in[i]);
    if (!in_string_) {
      if (Space(c)) {
        bare_bytes_ = 0;
        if (!space_) *o++ = static_cast<char>(c);
        space_ = true;
        continue;
      }
      space_ = false;
      if (c == '"') {
        in_string_ = true;
        cutting_ = false;
        escape_ = 0;
        string_bytes_ = 0;
        pending_len_ = 0;
        bare_bytes_ = 0;
        *o++ = '"';
      } else if (Structural(c)) {
        bare_bytes_ = 0;
        *o++ = static_cast<char>(c);
      } else if (++bare_bytes_ <= kMaxBareBytes) {
        *o++ = static_cast<char>(c);
      } else if (bare_bytes_ == kMaxBareBytes + 1) {
        ++tokens_cut_;
      }
      continue;
    }
    // In a string.
    if (pending_len_ > 0) {  // inside a multi-byte sequence
      const bool ok = pending_len_ == 1 ? SecondByteOk(pending_[0], c) : (c >= 0x80 && c <= 0xBF);
      if (ok) {
        pending_[pending_len_++] = c;
        if (pending_len_ == pending_need_) {
          if (!cutting_) {
            for (int k = 0; k < pending_len_; ++k) Put(static_cast<char>(pending_[k]), &o);
          }
          pending_len_ = 0;
        }
        continue;
      }
      if (!cutting_) {  // a cut sequence: one '?' for it, then this byte afresh
        Put('?', &o);
        ++bytes_replaced_;
      }
      pending_len_ = 0;
    }
    if (escape_ == 1) {
      escape_ = c == 'u' ? 2 : 0;
      if (!cutting_) Put(static_cast<char>(c), &o);
      continue;
    }
    if (escape_ >= 2) {
      escape_ = escape_ == 5 ? 0 : escape_ + 1;
      if (!cutting_) Put(static_cast<char>(c), &o);
      continue;
    }
    if (c == '"') {
      in_string_ = false;
      *o++ = '"';
      continue;
    }
    if (!cutting_ && string_bytes_ >= kMaxStringBytes) {  // at a character boundary here
      cutting_ = true;
      ++strings_cut_;
    }
    if (c == '\\') {
      escape_ = 1;
      if (!cutting_) Put('\\', &o);
      continue;
    }
    if (cutting_) continue;
    if (c < 0x20) {  // a raw control character: JSON wants it escaped
      Put('?', &o);
      ++bytes_replaced_;
      continue;
    }
    const int len = SequenceLength(c);
    if (len == 1) {
      Put(static_cast<char>(c), &o);
    } else if (len == 0) {
      Put('?', &o);
      ++bytes_replaced_;
    } else {
      pending_[0] = c;
      pending_len_ = 1;
      pending_need_ = len;
    }
  }
  return static_cast<size_t>(o - out);
}

}  // namespace trainprof::collector
