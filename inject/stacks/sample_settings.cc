#include "stacks/sample_settings.h"

#include <cstdio>

namespace trainprof::inject {

bool ParseSampleHz(const char* text, uint32_t* hz) {
  *hz = 0;
  if (text == nullptr) return true;
  uint32_t v = 0;
  const char* p = text;
  for (; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || p - text >= 6) return false;
    v = v * 10 + static_cast<uint32_t>(*p - '0');
  }
  if (p == text || v > kMaxSampleHz) return false;
  *hz = v;
  return true;
}

uint32_t FormatSampleMetadata(uint32_t hz, int signo, const char* python_unsupported, char* buf, size_t cap) {
  if (hz == 0) return 0;
  int len = python_unsupported != nullptr && python_unsupported[0] != '\0'
                ? snprintf(buf, cap, "sample_hz=%u%csample_signal=%d%cpython_unsupported=%s", hz, '\0', signo, '\0',
                           python_unsupported)
                : snprintf(buf, cap, "sample_hz=%u%csample_signal=%d", hz, '\0', signo);
  return len > 0 && static_cast<size_t>(len) < cap ? static_cast<uint32_t>(len) : 0;
}

}  // namespace trainprof::inject
