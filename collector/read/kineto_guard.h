// A streaming filter between the bytes of a Kineto JSON file and the JSON parser, so that memory
// stays bounded and one bad byte does not end the file: nlohmann's lexer keeps every character of
// the token it is scanning, the whitespace before it included, so a gap of 2 GiB of spaces (a
// gzip bomb of a few MB) or one 256 MiB string would be held whole. The guard, outside strings,
// passes one whitespace character of each run; inside strings, it cuts each string at
// kMaxStringBytes (at a character boundary; the closing quote kept) and replaces what would stop
// the parser — bytes that are not UTF-8 and raw control characters (RFC 8259 §7, §8.1) — with '?';
// a bare token (number or literal) longer than kMaxBareBytes is cut there (the parser then fails on
// it, as the garbage it is). Everything else passes through unchanged, so a sound trace parses
// exactly as without the guard.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::collector {

class JsonGuard {
 public:
  static constexpr size_t kMaxStringBytes = 64 << 10;
  static constexpr size_t kMaxBareBytes = 4096;
  /// Output can exceed the input of one call by this much (UTF-8 bytes held over from the last call).
  static constexpr size_t kSlack = 4;

  /// Filters `n` bytes of `in` into `out` (room for n + kSlack bytes); returns the bytes written.
  size_t Filter(const char* in, size_t n, char* out);

  uint64_t strings_cut() const { return strings_cut_; }
  uint64_t bytes_replaced() const { return bytes_replaced_; }  ///< not UTF-8, or raw control chars
  uint64_t tokens_cut() const { return tokens_cut_; }

 private:
  // Emits the bytes of a string character (one UTF-8 sequence or one ASCII byte).
  void Put(char c, char** out);
  bool in_string_ = false;
  bool cutting_ = false;   // past kMaxStringBytes: dropping to the closing quote
  int escape_ = 0;         // 1: after '\'; 2..5: in the 4 hex digits of \u
  bool space_ = false;     // the last byte passed outside strings was whitespace
  size_t string_bytes_ = 0;
  size_t bare_bytes_ = 0;
  unsigned char pending_[4] = {};  // a UTF-8 sequence being checked
  int pending_len_ = 0;
  int pending_need_ = 0;           // its length
  uint64_t strings_cut_ = 0;
  uint64_t bytes_replaced_ = 0;
  uint64_t tokens_cut_ = 0;
};

}  // namespace trainprof::collector
