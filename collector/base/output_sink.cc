#include "collector/base/output_sink.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace trainprof::collector {
namespace {

class FileSink final : public OutputSink {
 public:
  FileSink(FILE* f, bool owned) : f_(f), owned_(owned) {}
  ~FileSink() override {
    if (f_ != nullptr && owned_) std::fclose(f_);
  }
  std::string Close() override {
    Flush();
    if (f_ != nullptr) {
      if (std::fflush(f_) != 0 && error_.empty()) error_ = std::strerror(errno);
      if (owned_ && std::fclose(f_) != 0 && error_.empty()) error_ = std::strerror(errno);
      f_ = nullptr;
    }
    return error_;
  }

 private:
  void WriteRaw(const char* data, size_t size) override {
    if (!error_.empty() || f_ == nullptr) return;
    errno = 0;
    if (std::fwrite(data, 1, size, f_) != size) error_ = std::strerror(errno != 0 ? errno : EIO);
  }
  FILE* f_;
  bool owned_;
};

class GzipSink final : public OutputSink {
 public:
  explicit GzipSink(gzFile gz) : gz_(gz) {}
  ~GzipSink() override {
    if (gz_ != nullptr) gzclose(gz_);
  }
  std::string Close() override {
    Flush();
    if (gz_ != nullptr) {
      int rc = gzclose(gz_);
      gz_ = nullptr;
      if (rc != Z_OK && error_.empty()) error_ = rc == Z_ERRNO ? std::strerror(errno) : "gzip stream error";
    }
    return error_;
  }

 private:
  void WriteRaw(const char* data, size_t size) override {
    if (!error_.empty() || gz_ == nullptr) return;
    while (size > 0) {
      unsigned n = size > (1u << 30) ? (1u << 30) : static_cast<unsigned>(size);
      int w = gzwrite(gz_, data, n);
      if (w <= 0) {
        int zerr = 0;
        const char* msg = gzerror(gz_, &zerr);
        error_ = zerr == Z_ERRNO ? std::strerror(errno) : (msg != nullptr ? msg : "gzip write failed");
        return;
      }
      data += w;
      size -= static_cast<size_t>(w);
    }
  }
  gzFile gz_;
};

}  // namespace

std::unique_ptr<OutputSink> OpenOutput(const std::string& path, bool gzip, std::string* error, int gzip_level) {
  const bool to_stdout = path.empty() || path == "-";
  if (!gzip) {
    if (to_stdout) return std::make_unique<FileSink>(stdout, false);
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
      *error = std::strerror(errno);
      return nullptr;
    }
    return std::make_unique<FileSink>(f, true);
  }
  const std::string mode = "wb" + std::to_string(gzip_level < 0 || gzip_level > 9 ? 6 : gzip_level);
  gzFile gz = nullptr;
  if (to_stdout) {
    std::fflush(stdout);
    int fd = ::dup(STDOUT_FILENO);
    if (fd >= 0) gz = gzdopen(fd, mode.c_str());
    if (gz == nullptr && fd >= 0) ::close(fd);
  } else {
    gz = gzopen(path.c_str(), mode.c_str());
  }
  if (gz == nullptr) {
    *error = errno != 0 ? std::strerror(errno) : "cannot open a gzip stream";
    return nullptr;
  }
  gzbuffer(gz, 1 << 20);
  return std::make_unique<GzipSink>(gz);
}

std::unique_ptr<OutputSink> OpenOutputFd(int fd, bool gzip, std::string* error, int gzip_level) {
  if (!gzip) {
    FILE* f = fdopen(fd, "wb");
    if (f == nullptr) {
      *error = std::strerror(errno);
      ::close(fd);
      return nullptr;
    }
    return std::make_unique<FileSink>(f, true);
  }
  const std::string mode = "wb" + std::to_string(gzip_level < 0 || gzip_level > 9 ? 6 : gzip_level);
  gzFile gz = gzdopen(fd, mode.c_str());
  if (gz == nullptr) {
    *error = errno != 0 ? std::strerror(errno) : "cannot open a gzip stream";
    ::close(fd);
    return nullptr;
  }
  gzbuffer(gz, 1 << 20);
  return std::make_unique<GzipSink>(gz);
}

}  // namespace trainprof::collector
