#include "stacks/backtrace_settings.h"

#include <cstdio>
#include <cstring>

namespace trainprof::inject {
namespace {

bool Word(const char* s, size_t n, const char* w) { return n == strlen(w) && memcmp(s, w, n) == 0; }

// Decimal digits s[0..n) into *v (at most 1e15: about 11 days).
bool Number(const char* s, size_t n, uint64_t* v) {
  if (n == 0 || n > 16) return false;
  uint64_t x = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    x = x * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  if (x > 1000000000000000ull) return false;
  *v = x;
  return true;
}

}  // namespace

bool ParseBacktraceSettings(const char* text, BacktraceSettings* out) {
  *out = BacktraceSettings{};
  if (text == nullptr) return true;
  BacktraceSettings s;
  s.cuda = false;
  bool none = false;
  const char* p = text;
  for (;;) {
    const char* e = strchr(p, ',');
    size_t n = e != nullptr ? static_cast<size_t>(e - p) : strlen(p);
    if (Word(p, n, "none")) {
      none = true;
    } else if (Word(p, n, "nvtx")) {
      s.nvtx = true;
    } else if (Word(p, n, "cuda")) {
      s.cuda = true;
    } else if (n > 5 && memcmp(p, "cuda:", 5) == 0 && Number(p + 5, n - 5, &s.cuda_threshold_ns)) {
      s.cuda = true;
    } else {
      return false;
    }
    if (e == nullptr) break;
    p = e + 1;
  }
  if (none && (s.cuda || s.nvtx)) return false;
  *out = s;
  return true;
}

uint32_t FormatStacksMetadata(const BacktraceSettings& s, char* buf, size_t cap) {
  int len;
  if (s.cuda && s.nvtx) {
    len = snprintf(buf, cap, "backtrace=cuda:%llu,nvtx", static_cast<unsigned long long>(s.cuda_threshold_ns));
  } else if (s.cuda) {
    len = snprintf(buf, cap, "backtrace=cuda:%llu", static_cast<unsigned long long>(s.cuda_threshold_ns));
  } else if (s.nvtx) {
    len = snprintf(buf, cap, "backtrace=nvtx");
  } else {
    len = snprintf(buf, cap, "backtrace=none");
  }
  return len > 0 && static_cast<size_t>(len) < cap ? static_cast<uint32_t>(len) : 0;
}

}  // namespace trainprof::inject
