#include "log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstring>

namespace trainprof::inject {

void LogLine(const char* first, ...) {
  char buf[1024];
  size_t n = 0;
  auto append = [&](const char* s) {
    size_t len = strlen(s);
    if (len > sizeof(buf) - 1 - n) len = sizeof(buf) - 1 - n;
    memcpy(buf + n, s, len);
    n += len;
  };
  append("trainprof: ");
  va_list ap;
  va_start(ap, first);
  for (const char* s = first; s != nullptr; s = va_arg(ap, const char*)) append(s);
  va_end(ap);
  buf[n++] = '\n';
  ssize_t rc = write(2, buf, n);
  (void)rc;
}

const char* FormatU64(unsigned long long v, char* buf) {
  char tmp[21];
  int i = 0;
  do {
    tmp[i++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (int j = 0; j < i; ++j) buf[j] = tmp[i - 1 - j];
  buf[i] = '\0';
  return buf;
}

}  // namespace trainprof::inject
