#include "output_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "safe_path.h"

namespace trainprof::launcher {
namespace {

// 12 random characters from [0-9a-z] (getrandom; the clock and pid if it fails).
std::string RandomSuffix() {
  unsigned char bytes[12];
  if (getrandom(bytes, sizeof(bytes), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(bytes))) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = static_cast<uint64_t>(ts.tv_nsec) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(getpid()) << 32 ^
                 static_cast<uint64_t>(ts.tv_sec);
    for (unsigned char& b : bytes) {
      x ^= x >> 33;
      x *= 0xff51afd7ed558ccdull;
      b = static_cast<unsigned char>(x >> 56);
    }
  }
  static const char kChars[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string s;
  for (unsigned char b : bytes) s += kChars[b % 36];
  return s;
}

}  // namespace

std::unique_ptr<OutputFile> OutputFile::Open(const std::string& path, std::string* error) {
  std::unique_ptr<OutputFile> out(new OutputFile());
  std::optional<std::string> resolved = ResolveWithSymlinkRule(path, error);
  if (!resolved) return nullptr;
  struct stat st {};
  if (stat(resolved->c_str(), &st) != 0 && stat(path.c_str(), &st) != 0) st.st_mode = 0;
  if (S_ISDIR(st.st_mode)) {
    *error = strerror(EISDIR);
    return nullptr;
  }
  if (st.st_mode != 0 && !S_ISREG(st.st_mode)) {
    // A device or FIFO: in place. /dev/stdout's target is a /proc link that only the kernel can
    // follow, so this opens the path as given (its links were checked above).
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
      *error = strerror(errno);
      return nullptr;
    }
    if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode)) {  // swapped for a file since the stat
      close(fd);
      *error = "it was replaced by a regular file while being opened";
      return nullptr;
    }
    out->fd_ = fd;
    out->target_ = path;
    return out;
  }
  // The resolved path has no symlink left in it; its last component is created or replaced.
  size_t slash = resolved->rfind('/');
  std::string dir = slash == 0 ? "/" : resolved->substr(0, slash);
  out->name_ = resolved->substr(slash + 1);
  out->target_ = *resolved;
  if (out->name_.empty()) {
    *error = strerror(EISDIR);
    return nullptr;
  }
  out->dir_fd_ = open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (out->dir_fd_ < 0) {
    *error = strerror(errno);
    return nullptr;
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string staged = out->name_ + ".tmp-" + RandomSuffix();
    int fd = openat(out->dir_fd_, staged.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      out->fd_ = fd;
      out->staged_ = std::move(staged);
      return out;
    }
    if (errno != EEXIST) break;
  }
  *error = strerror(errno);
  return nullptr;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) close(fd_);
  if (!staged_.empty() && !committed_) unlinkat(dir_fd_, staged_.c_str(), 0);
  if (dir_fd_ >= 0) close(dir_fd_);
}

int OutputFile::ReleaseFd() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

bool OutputFile::Commit(std::string* error) {
  if (fd_ >= 0) {
    int rc = close(fd_);
    fd_ = -1;
    if (rc != 0) {
      *error = strerror(errno);
      return false;
    }
  }
  if (staged_.empty()) return true;
  if (renameat(dir_fd_, staged_.c_str(), dir_fd_, name_.c_str()) != 0) {
    *error = strerror(errno);
    return false;
  }
  committed_ = true;
  return true;
}

bool WriteOutputFile(const std::string& path, std::string_view content, std::string* error) {
  std::unique_ptr<OutputFile> file = OutputFile::Open(path, error);
  if (!file) return false;
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(file->fd(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = strerror(n < 0 ? errno : EIO);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return file->Commit(error);
}

}  // namespace trainprof::launcher
