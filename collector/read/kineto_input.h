// The bytes of a Kineto JSON trace as characters for the JSON parser: plain JSON is passed
// through, gzip (`.json.gz`, recognised by its magic 1f 8b, not by the name) is inflated with zlib
// as the parser reads, a piece at a time, and passed through JsonGuard (kineto_guard.h: bounded
// tokens, bad bytes replaced). Memory: one input piece, one inflated piece and one output buffer
// (kPiece bytes each), whatever the file's size. Concatenated gzip members are read one after
// another, as gzip(1) does.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <functional>
#include <span>
#include <streambuf>
#include <string>
#include <vector>

#include "collector/read/kineto_guard.h"

namespace trainprof::collector {

/// Reads up to `len` bytes of the file from offset `off` (fewer at its end; empty: the end or an
/// error, which the caller's source reports).
using ReadAt = std::function<std::span<const uint8_t>(uint64_t off, uint64_t len)>;

/// gzip's magic bytes (RFC 1952).
inline bool IsGzip(std::span<const uint8_t> head) { return head.size() >= 2 && head[0] == 0x1f && head[1] == 0x8b; }

/// A streambuf over a file's bytes, gunzipped when `gzip`. Errors never throw: they end the
/// characters and are said by error() ("gzip data damaged at byte N: ...", "truncated gzip: ...").
class KinetoInput final : public std::streambuf {
 public:
  static constexpr size_t kPiece = 256 << 10;
  KinetoInput(ReadAt read, uint64_t size, bool gzip);
  ~KinetoInput() override;
  KinetoInput(const KinetoInput&) = delete;
  KinetoInput& operator=(const KinetoInput&) = delete;

  /// "" while the bytes were intact so far.
  const std::string& error() const { return error_; }
  /// The gzip stream (or the file) ended before it was complete.
  bool truncated() const { return truncated_; }
  /// The parser asked for characters past the last one (a syntax error then is the text's end).
  bool exhausted() const { return done_; }
  /// File bytes consumed so far (compressed bytes for gzip).
  uint64_t consumed() const { return consumed_; }
  /// What the guard cut or replaced.
  const JsonGuard& guard() const { return guard_; }

 protected:
  int_type underflow() override;

 private:
  bool Fill();                  // refills out_ (guarded); false at the end
  bool FillRaw(size_t* got);    // the next piece of the file's JSON text into raw_; false at the end

  ReadAt read_;
  uint64_t size_;
  bool gzip_;
  z_stream z_{};
  bool z_open_ = false;
  bool z_end_ = true;  // between members: true before the first and after each end
  std::span<const uint8_t> in_;
  uint64_t in_off_ = 0;  // file offset after in_
  uint64_t consumed_ = 0;
  std::vector<char> raw_;
  std::vector<char> out_;
  JsonGuard guard_;
  std::string error_;
  bool truncated_ = false;
  bool done_ = false;
};

}  // namespace trainprof::collector
