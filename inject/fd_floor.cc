#include "fd_floor.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

namespace trainprof::inject {
namespace {

// Numbers from here up are taken only by programs with hundreds of files open; below RLIMIT_NOFILE's
// default soft limit of 1024, so select() callers that inherit the limit are not pushed past it.
constexpr int kHighFd = 900;

// The placeholders of the one LowFdPlaceholders filled (numbers below kHighFd).
int g_placeholders[kHighFd];

}  // namespace

int FdFloor() {
  rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < 2u * kHighFd) {
    const int half = static_cast<int>(lim.rlim_cur / 2);
    return half > 3 ? half : 3;
  }
  return kHighFd;
}

int MoveAboveFloor(int fd) {
  const int floor = FdFloor();
  if (fd < 0 || fd >= floor) return fd;
  const int saved = errno;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
  if (high < 0) {
    errno = saved;
    return fd;
  }
  close(fd);
  errno = saved;
  return high;
}

size_t LowFdPlaceholders::Fill() {
  Release();
  const int saved = errno;
  const int floor = FdFloor();
  int src = open("/", O_PATH | O_CLOEXEC);
  if (src < 0) {
    errno = saved;
    return 0;
  }
  if (src >= floor) {  // nothing free below the floor
    close(src);
    errno = saved;
    return 0;
  }
  g_placeholders[count_++] = src;
  while (count_ < static_cast<size_t>(kHighFd)) {
    int p = fcntl(src, F_DUPFD_CLOEXEC, 0);  // the lowest free number
    if (p < 0) break;                        // EMFILE: the dependency's open fails as it would
    if (p >= floor) {
      close(p);
      break;
    }
    g_placeholders[count_++] = p;
  }
  errno = saved;
  return count_;
}

void LowFdPlaceholders::Release() {
  const int saved = errno;
  while (count_ > 0) close(g_placeholders[--count_]);
  errno = saved;
}

}  // namespace trainprof::inject
