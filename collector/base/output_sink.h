// Where an export goes: a plain file (or stdout) or a gzip stream (zlib), behind one buffered
// interface, so the exporters write bytes and never care which.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace trainprof::collector {

/// A buffered byte sink. Write() appends; Close() flushes and reports the first error.
class OutputSink {
 public:
  virtual ~OutputSink() = default;
  /// Appends bytes (buffered, 1 MiB). Errors are remembered and reported by Close().
  void Write(std::string_view bytes) {
    bytes_in_ += bytes.size();
    if (buffer_.size() + bytes.size() > kBufferBytes) Flush();
    if (bytes.size() >= kBufferBytes) {
      WriteRaw(bytes.data(), bytes.size());
    } else {
      buffer_.append(bytes);
    }
  }
  /// Flushes and closes. Returns "" on success, else what went wrong (e.g. "No space left on device").
  virtual std::string Close() = 0;
  /// Bytes handed to Write() so far (before compression).
  uint64_t bytes_written() const { return bytes_in_; }

 protected:
  static constexpr size_t kBufferBytes = 1 << 20;
  void Flush() {
    if (!buffer_.empty()) WriteRaw(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  /// Writes through to the destination; records the first error.
  virtual void WriteRaw(const char* data, size_t size) = 0;
  std::string buffer_;
  uint64_t bytes_in_ = 0;
  std::string error_;
};

/// Appends to a string (tests, and reports rendered whole into memory).
class StringSink : public OutputSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  std::string Close() override {
    Flush();
    return "";
  }

 protected:
  void WriteRaw(const char* data, size_t size) override { out_->append(data, size); }

 private:
  std::string* out_;
};

/// What `write` writes into a sink, as one string (the string forms of the streaming renderers).
template <typename Write>
std::string WrittenText(Write write) {
  std::string text;
  StringSink sink(&text);
  write(&sink);
  sink.Close();
  return text;
}

/// A file created (truncated) at `path`, or stdout for "" / "-". Returns nullptr and sets *error
/// if it cannot be opened. With `gzip`, the bytes are gzip-compressed (zlib, level 6 by default).
std::unique_ptr<OutputSink> OpenOutput(const std::string& path, bool gzip, std::string* error, int gzip_level = 6);

/// The same on an open descriptor `fd` (opened for writing), which the sink owns and closes in
/// Close() or its destructor, even when this fails (nullptr, *error set).
std::unique_ptr<OutputSink> OpenOutputFd(int fd, bool gzip, std::string* error, int gzip_level = 6);

}  // namespace trainprof::collector
