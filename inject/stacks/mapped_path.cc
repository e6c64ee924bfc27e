#include "stacks/mapped_path.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace trainprof::inject {
namespace {

// A hex number at s[*i..], advancing *i; false when there is none.
bool ParseHex(const char* s, size_t n, size_t* i, uintptr_t* v) {
  uintptr_t x = 0;
  size_t start = *i;
  for (; *i < n; ++*i) {
    const char c = s[*i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) break;
    x = x * 16 + static_cast<uintptr_t>(d);
  }
  *v = x;
  return *i > start;
}

// One line of /proc/self/maps ("start-end perms offset dev inode   path"): its path into out
// when [start, end) holds address and the path is a file's (absolute). 0 otherwise.
size_t PathOfLine(const char* s, size_t n, uintptr_t address, char* out, size_t cap) {
  size_t i = 0;
  uintptr_t lo = 0, hi = 0;
  if (!ParseHex(s, n, &i, &lo) || i >= n || s[i] != '-') return 0;
  ++i;
  if (!ParseHex(s, n, &i, &hi) || address < lo || address >= hi) return 0;
  for (int field = 0; field < 4; ++field) {  // perms, offset, dev, inode
    while (i < n && s[i] == ' ') ++i;
    while (i < n && s[i] != ' ') ++i;
  }
  while (i < n && s[i] == ' ') ++i;
  if (i >= n || s[i] != '/') return 0;
  size_t len = n - i;
  static constexpr char kDeleted[] = " (deleted)";
  constexpr size_t kDeletedLen = sizeof(kDeleted) - 1;
  if (len >= kDeletedLen && memcmp(s + n - kDeletedLen, kDeleted, kDeletedLen) == 0) return 0;
  if (len + 1 > cap) return 0;
  memcpy(out, s + i, len);
  out[len] = '\0';
  return len;
}

// MappedPath's work, with the read buffer buf[0..size).
size_t ReadMaps(uintptr_t address, char* buf, size_t size, char* out, size_t cap) {
  const int saved = errno;
  int fd;
  do {
    fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    errno = saved;
    return 0;
  }
  size_t have = 0, found = 0;
  bool skipping = false;  // inside a line too long for the buffer
  for (;;) {
    ssize_t r = read(fd, buf + have, size - have);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    have += static_cast<size_t>(r);
    size_t begin = 0;
    for (size_t i = 0; i < have && found == 0; ++i) {
      if (buf[i] != '\n') continue;
      if (!skipping) found = PathOfLine(buf + begin, i - begin, address, out, cap);
      skipping = false;
      begin = i + 1;
    }
    if (found != 0) break;
    if (begin == 0 && have == size) {  // no newline in a full buffer: drop that line
      skipping = true;
      have = 0;
      continue;
    }
    memmove(buf, buf + begin, have - begin);
    have -= begin;
  }
  close(fd);
  errno = saved;
  return found;
}

}  // namespace

size_t MappedPath(uintptr_t address, char* out, size_t cap) {
  // The read buffer: static, not 8 KiB of a caller that may be a signal handler on a thread with
  // a 16 KiB stack. One caller at a time; another (a handler that interrupted one) gets nothing.
  static char buf[8192];  // lines are at most 4096 + ~80 bytes; a longer one is skipped
  static std::atomic<bool> busy{false};
  if (busy.exchange(true, std::memory_order_acquire)) return 0;
  const size_t found = ReadMaps(address, buf, sizeof(buf), out, cap);
  busy.store(false, std::memory_order_release);
  return found;
}

}  // namespace trainprof::inject
