#include "collector/read/kineto_input.h"

#include <cstring>

namespace trainprof::collector {

KinetoInput::KinetoInput(ReadAt read, uint64_t size, bool gzip)
    : read_(std::move(read)), size_(size), gzip_(gzip), raw_(kPiece), out_(kPiece + JsonGuard::kSlack) {
  setg(out_.data(), out_.data(), out_.data());
}

KinetoInput::~KinetoInput() {
  if (z_open_) inflateEnd(&z_);
}

KinetoInput::int_type KinetoInput::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (done_ || !Fill()) {
    done_ = true;
    return traits_type::eof();
  }
  return traits_type::to_int_type(*gptr());
}

bool KinetoInput::Fill() {
  for (size_t got = 0; FillRaw(&got);) {
    const size_t n = guard_.Filter(raw_.data(), got, out_.data());
    if (n > 0) {
      setg(out_.data(), out_.data(), out_.data() + n);
      return true;
    }
    if (done_) return false;  // damaged gzip: nothing more after this piece
  }
  return false;
}

bool KinetoInput::FillRaw(size_t* got_out) {
  auto next_piece = [&]() -> bool {
    if (in_off_ >= size_) return false;
    in_ = read_(in_off_, std::min<uint64_t>(kPiece, size_ - in_off_));
    if (in_.empty()) return false;  // the source says why (read error, shrank)
    in_off_ += in_.size();
    return true;
  };
  if (!gzip_) {
    if (!next_piece()) return false;
    // The source's buffer is only valid until the next read: copy it.
    std::memcpy(raw_.data(), in_.data(), in_.size());
    consumed_ += in_.size();
    *got_out = in_.size();
    in_ = {};
    return true;
  }
  for (;;) {
    if (z_.avail_in == 0) {
      if (!next_piece()) {
        if (!z_end_ && error_.empty()) {
          truncated_ = true;
          error_ = "truncated gzip: the compressed data ends at byte " + std::to_string(in_off_) +
                   " before the end of its stream";
        }
        return false;
      }
      z_.next_in = const_cast<Bytef*>(in_.data());
      z_.avail_in = static_cast<uInt>(in_.size());
    }
    if (z_end_) {
      // A new member: only if it starts with gzip's magic (trailing zeros or junk after a complete
      // stream are ignored, as gzip -d does with a warning).
      if (z_.avail_in >= 1 && z_.next_in[0] != 0x1f) return false;
      if (!z_open_) {
        if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) {
          error_ = "cannot start zlib";
          return false;
        }
        z_open_ = true;
        // inflateInit2 keeps next_in/avail_in as set above.
      } else if (inflateReset(&z_) != Z_OK) {
        error_ = "cannot restart zlib";
        return false;
      }
      z_end_ = false;
    }
    z_.next_out = reinterpret_cast<Bytef*>(raw_.data());
    z_.avail_out = static_cast<uInt>(raw_.size());
    const uInt before = z_.avail_in;
    const int rc = inflate(&z_, Z_NO_FLUSH);
    consumed_ += before - z_.avail_in;
    const size_t got = raw_.size() - z_.avail_out;
    if (rc == Z_STREAM_END) {
      z_end_ = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      error_ = "gzip data damaged at byte " + std::to_string(consumed_) + " of the file: " +
               (z_.msg != nullptr ? z_.msg : "zlib error " + std::to_string(rc));
      if (got == 0) return false;
      done_ = true;  // hand out what was inflated, then stop
    }
    if (got > 0) {
      *got_out = got;
      return true;
    }
    if (z_end_ && z_.avail_in == 0 && in_off_ >= size_) return false;
  }
}

}  // namespace trainprof::collector
