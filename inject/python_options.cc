#include "python_options.h"

#include <cstring>

namespace trainprof::inject {
namespace {

// CPython's short options (Python/getopt.c SHORT_OPTS, 3.11: "bBc:dEhiIJm:OPqRsStuvVW:xX:?");
// those followed by ':' take an argument. Letters of other versions parse the same way.
constexpr const char kShortOptions[] = "bBc:dEhiIJm:OPqRsStuvVW:xX:?";

bool TakesArgument(char option) {
  const char* p = strchr(kShortOptions, option);
  return option != '\0' && option != ':' && p != nullptr && p[1] == ':';
}

// Appends "-<option>" to out once.
void Add(char option, char* out, size_t cap, size_t* n) {
  for (size_t i = 1; i < *n; i += 3) {
    if (out[i] == option) return;
  }
  size_t need = (*n == 0 ? 2 : 3);
  if (*n + need + 1 > cap) return;
  if (*n > 0) out[(*n)++] = ' ';
  out[(*n)++] = '-';
  out[(*n)++] = option;
  out[*n] = '\0';
}

}  // namespace

size_t PythonShimBlockers(const char* cmdline, size_t len, char* out, size_t cap) {
  if (out == nullptr || cap < kPythonShimBlockersCap) return 0;
  out[0] = '\0';
  size_t n = 0;
  // Words of argv: [start, end) with end at the NUL (or at len).
  size_t pos = 0;
  auto next_word = [&](const char** word, size_t* word_len) -> bool {
    if (pos >= len) return false;
    const char* w = cmdline + pos;
    const void* nul = memchr(w, '\0', len - pos);
    size_t l = nul != nullptr ? static_cast<size_t>(static_cast<const char*>(nul) - w) : len - pos;
    *word = w;
    *word_len = l;
    pos += l + 1;
    return true;
  };
  const char* w = nullptr;
  size_t wl = 0;
  if (!next_word(&w, &wl)) return 0;  // argv[0]
  while (next_word(&w, &wl)) {
    if (wl < 2 || w[0] != '-') break;  // the script, "-" (stdin), or an empty word
    if (wl == 2 && w[1] == '-') break;  // "--"
    if (w[1] == '-') {  // a long option: only --check-hash-based-pycs takes an argument
      static constexpr char kWithArgument[] = "--check-hash-based-pycs";
      if (wl == sizeof(kWithArgument) - 1 && memcmp(w, kWithArgument, wl) == 0 && !next_word(&w, &wl)) break;
      continue;
    }
    bool ended = false;
    for (size_t i = 1; i < wl; ++i) {
      const char c = w[i];
      if (c == 'E' || c == 'I' || c == 'S') Add(c, out, cap, &n);
      if (c == 'c' || c == 'm') {  // the command or module: options end here
        ended = true;
        break;
      }
      if (TakesArgument(c)) {
        if (i + 1 == wl && !next_word(&w, &wl)) ended = true;  // the argument is the next word
        break;  // the rest of this word is the argument
      }
    }
    if (ended) break;
  }
  return n;
}

bool LooksLikePythonExecutable(const char* exe_path) {
  if (exe_path == nullptr) return false;
  const char* slash = strrchr(exe_path, '/');
  const char* base = slash != nullptr ? slash + 1 : exe_path;
  return strncmp(base, "python", 6) == 0;
}

}  // namespace trainprof::inject
