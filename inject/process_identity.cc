#include "process_identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace trainprof::inject {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

uint64_t NamespaceInode(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

}  // namespace

size_t ReadSmallFile(const char* path, char* buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t n = 0;
  while (n < cap) {
    ssize_t r = read(fd, buf + n, cap - n);
    if (r <= 0) break;
    n += static_cast<size_t>(r);
  }
  close(fd);
  return n;
}

ProcessIdentity ReadProcessIdentity() {
  ProcessIdentity id;
  id.pid_namespace = NamespaceInode("/proc/self/ns/pid");
  // "pid (comm) state ppid ..." — comm may hold spaces and parentheses: count from the last ')'.
  char buf[1024];
  size_t n = ReadSmallFile("/proc/self/stat", buf, sizeof(buf) - 1);
  buf[n] = '\0';
  const char* p = strrchr(buf, ')');
  if (p != nullptr) {
    // After ')': field 3 (state) is the first; starttime is field 22.
    int field = 2;
    for (++p; *p != '\0' && field < 22; ++p) {
      if (*p == ' ') ++field;
    }
    uint64_t v = 0;
    bool any = false;
    for (; *p >= '0' && *p <= '9'; ++p) {
      v = v * 10 + static_cast<uint64_t>(*p - '0');
      any = true;
    }
    // A process started in the boot's first tick reads 0: count it as tick 1, never "unknown".
    if (any && field == 22) id.start_ticks = v == 0 ? 1 : v;
  }
  // "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\n"
  n = ReadSmallFile("/proc/sys/kernel/random/boot_id", buf, 64);
  uint8_t out[16] = {};
  size_t nibbles = 0;
  for (size_t i = 0; i < n && nibbles < 32; ++i) {
    int d = HexDigit(buf[i]);
    if (d < 0) continue;
    out[nibbles / 2] = static_cast<uint8_t>(out[nibbles / 2] | (nibbles % 2 == 0 ? d << 4 : d));
    ++nibbles;
  }
  if (nibbles == 32) memcpy(id.boot_id, out, 16);
  return id;
}

bool ChildrenInOtherPidNamespace() {
  uint64_t own = NamespaceInode("/proc/self/ns/pid");
  uint64_t children = NamespaceInode("/proc/self/ns/pid_for_children");
  return own != 0 && children != 0 && own != children;
}

bool ParseRunId(const char* hex, uint8_t out[16]) {
  memset(out, 0, 16);
  if (hex == nullptr) return false;
  for (int i = 0; i < 32; ++i) {
    int d = HexDigit(hex[i]);
    if (d < 0) {
      memset(out, 0, 16);
      return false;
    }
    out[i / 2] = static_cast<uint8_t>(out[i / 2] | (i % 2 == 0 ? d << 4 : d));
  }
  if (hex[32] != '\0') {
    memset(out, 0, 16);
    return false;
  }
  return true;
}

}  // namespace trainprof::inject
