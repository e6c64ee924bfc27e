#include "output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "trainprof/path_walk.h"

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

std::optional<int> StreamPathFd(const std::string& path) {
  auto number = [](const std::string& s, size_t from) -> std::optional<int> {
    if (from >= s.size() || s.size() - from > 9) return std::nullopt;
    int n = 0;
    for (size_t i = from; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      n = n * 10 + (s[i] - '0');
    }
    return n;
  };
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                    std::string("/proc/thread-self/fd/"),
                                    "/proc/" + std::to_string(getpid()) + "/fd/"}) {
    if (path.compare(0, prefix.size(), prefix) == 0) return number(path, prefix.size());
  }
  return std::nullopt;
}

std::unique_ptr<OutputFile> OutputFile::Open(const std::string& path, std::string* error) {
  std::unique_ptr<OutputFile> out(new OutputFile());
  struct stat st {};
  if (std::optional<int> stream = StreamPathFd(path)) {
    // The descriptor itself, as the shell set it up (appending, at its offset): opening the path
    // anew would truncate a redirected file or start at its beginning.
    int fd = fcntl(*stream, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) {
      *error = "descriptor " + std::to_string(*stream) + " is not open (" + strerror(errno) + ")";
      return nullptr;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0 && (flags & O_ACCMODE) == O_RDONLY) {
      close(fd);
      *error = "descriptor " + std::to_string(*stream) + " is open for reading only";
      return nullptr;
    }
    out->fd_ = fd;
    out->target_ = path;
    out->stream_ = true;
    out->exists_ = fstat(fd, &out->existing_) == 0;
    return out;
  }
  // One walk, component by component (path_walk.h): the directory reached is the one written in.
  char name[NAME_MAX + 1];
  char why[1024];
  if (int e = pathwalk::WalkPath(path.c_str(), pathwalk::Want::kParent, false, 0, &out->dir_fd_, name, why,
                                 sizeof(why))) {
    *error = why[0] != '\0' ? why : strerror(e);
    if (e == EISDIR && !path.empty() && path.back() == '/' && why[0] == '\0') {
      *error = std::string(strerror(EISDIR)) + " (a name ending in '/' is a directory)";
    }
    return nullptr;
  }
  out->name_ = name;
  char dir_path[PATH_MAX];
  out->dir_ = pathwalk::FdPath(out->dir_fd_, dir_path, sizeof(dir_path)) ? dir_path : ".";
  out->target_ = (out->dir_ == "/" ? "" : out->dir_) + "/" + out->name_;
  struct stat dir {};
  fstat(out->dir_fd_, &dir);
  if (fstatat(out->dir_fd_, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISDIR(st.st_mode)) {
      *error = strerror(EISDIR);
      return nullptr;
    }
    if (!S_ISREG(st.st_mode)) {
      // A device or FIFO: in place, never replaced by a file. Another user's in a sticky
      // world-writable directory is refused (the kernel's protected_fifos=2 rule).
      const char* kind = S_ISFIFO(st.st_mode) ? "FIFO" : S_ISSOCK(st.st_mode) ? "socket" : "device";
      if (!pathwalk::SpecialMayBeOpened(dir, st, geteuid())) {
        *error = std::string("it is a ") + kind + " owned by uid " + std::to_string(st.st_uid) +
                 " in the sticky world-writable directory " + out->dir_ + " (owned by uid " +
                 std::to_string(dir.st_uid) + "): not opened, another user may have planted it (the "
                 "fs.protected_fifos rule; remove it or write elsewhere)";
        return nullptr;
      }
      // O_NONBLOCK: a FIFO nobody reads must not hang us (ENXIO); blocking again once open.
      int fd = openat(out->dir_fd_, name, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
      if (fd < 0) {
        *error = errno == ENXIO ? std::string("it is a ") + kind + " that nothing reads from (trainprof does not wait for a reader)"
                                : strerror(errno);
        return nullptr;
      }
      int flags = fcntl(fd, F_GETFL);
      if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
      if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode)) {  // swapped for a file since the stat
        close(fd);
        *error = "it was replaced by a regular file while being opened";
        return nullptr;
      }
      out->fd_ = fd;
      out->existing_ = st;
      out->exists_ = true;
      return out;
    }
    out->existing_ = st;
    out->exists_ = true;
    // Replacing it is a rename onto it: in a sticky directory only its owner, the directory's
    // owner or root may (the kernel says only "Operation not permitted" at the end).
    const uid_t euid = geteuid();
    if ((dir.st_mode & S_ISVTX) != 0 && euid != 0 && st.st_uid != euid && dir.st_uid != euid) {
      *error = "it is owned by uid " + std::to_string(st.st_uid) + " in the sticky directory " + out->dir_ +
               ": only its owner, the directory's owner or root may replace it (the report is written "
               "as a new file renamed onto it)";
      return nullptr;
    }
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string staged = ".trainprof-" + RandomSuffix();
    int fd = openat(out->dir_fd_, staged.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      out->fd_ = fd;
      out->staged_ = std::move(staged);
      return out;
    }
    if (errno != EEXIST) break;
  }
  if (errno == EACCES) {
    *error = "the directory " + out->dir_ + " is not writable (the file is written as a new file in it, then "
             "renamed onto " + out->name_ + "): " + strerror(EACCES);
  } else {
    *error = strerror(errno);
  }
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

bool WriteAll(int fd, std::string_view content, std::string* error) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = strerror(n < 0 ? errno : EIO);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool WriteOutputFile(const std::string& path, std::string_view content, std::string* error) {
  std::unique_ptr<OutputFile> file = OutputFile::Open(path, error);
  if (!file) return false;
  if (!WriteAll(file->fd(), content, error)) return false;
  return file->Commit(error);
}

}  // namespace trainprof::launcher
