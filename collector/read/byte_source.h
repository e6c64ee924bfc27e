// Where the trace decoder's bytes come from (internal to collector/read): a buffer already in
// memory, or a file read piecewise with pread.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace trainprof::collector::decode {

// Where the decoder's bytes come from: a buffer already in memory, or a file read piecewise.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  uint64_t size() const { return size_; }
  /// Bytes [off, off + len), fewer where the data ends (or the file shrank); valid until the next
  /// View call.
  virtual std::span<const uint8_t> View(uint64_t off, uint64_t len) = 0;
  /// A read error met by View ("" if none).
  const std::string& error() const { return error_; }
  /// The first offset >= off that may hold data (not in a hole of a sparse file); size() if none.
  virtual uint64_t NextData(uint64_t off) { return off; }

 protected:
  uint64_t size_ = 0;
  std::string error_;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::span<const uint8_t> data) : data_(data) { size_ = data.size(); }
  std::span<const uint8_t> View(uint64_t off, uint64_t len) override {
    if (off >= size_) return {};
    return data_.subspan(off, std::min(len, size_ - off));
  }

 private:
  std::span<const uint8_t> data_;
};

// pread rather than mmap: a file that shrinks while we read it (a live process, a copy in
// progress) would raise SIGBUS through a mapping; pread just returns less. One buffer of the
// largest piece asked for (a chunk): memory does not grow with the file.
class FileSource final : public ByteSource {
 public:
  FileSource(int fd, uint64_t size) : fd_(fd) { size_ = size; }
  uint64_t NextData(uint64_t off) override {
    const off_t data = ::lseek(fd_, static_cast<off_t>(off), SEEK_DATA);
    if (data >= 0) return static_cast<uint64_t>(data);
    return errno == ENXIO ? size_ : off;  // ENXIO: only a hole after off; other errors: no holes known
  }
  std::span<const uint8_t> View(uint64_t off, uint64_t len) override {
    if (off >= size_) return {};
    len = std::min(len, size_ - off);
    if (buf_.size() < len) buf_.resize(len);
    uint64_t got = 0;
    while (got < len) {
      ssize_t n = ::pread(fd_, buf_.data() + got, len - got, static_cast<off_t>(off + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        if (error_.empty()) error_ = std::string("read error at byte ") + std::to_string(off + got) + ": " + std::strerror(errno);
        break;
      }
      if (n == 0) break;
      got += static_cast<uint64_t>(n);
    }
    return {buf_.data(), got};
  }

 private:
  int fd_;
  std::vector<uint8_t> buf_;
};

}  // namespace trainprof::collector::decode
