#include "backtrace_options.h"

#include <cstdint>

#include "inject_env.h"

namespace trainprof::launcher {
namespace {

constexpr const char* kValid = " (valid: cuda, cuda:THRESHOLD_NS, nvtx, none; comma-separated)";

// Whole ns, digits only, at most 1e15.
std::optional<uint64_t> Threshold(const std::string& s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > 1000000000000000ull) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::string> ParseBacktraceList(const std::string& text, std::string* error) {
  if (text.empty()) return std::string(kDefaultBacktrace);
  bool none = false, nvtx = false;
  std::optional<uint64_t> cuda;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string word = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (word == "none") {
      none = true;
    } else if (word == "nvtx") {
      nvtx = true;
    } else if (word == "cuda") {
      cuda = 1000;
    } else if (word.rfind("cuda:", 0) == 0) {
      cuda = Threshold(word.substr(5));
      if (!cuda) {
        *error = "--backtrace: '" + word + "': the threshold is a whole number of nanoseconds up to 1e15 (e.g. cuda:1000)";
        return std::nullopt;
      }
    } else {
      *error = "--backtrace: unknown value '" + word + "'" + kValid;
      return std::nullopt;
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (none && (nvtx || cuda)) {
    *error = "--backtrace=" + text + ": 'none' cannot be combined with other values";
    return std::nullopt;
  }
  if (none) return std::string("none");
  std::string out;
  if (cuda) out = "cuda:" + std::to_string(*cuda);
  if (nvtx) out += out.empty() ? "nvtx" : ",nvtx";
  return out;
}

void ApplyBacktraceEnvironment(std::vector<std::string>* env, const std::string& normalised) {
  SetEnv(env, "TRAINPROF_BACKTRACE", normalised);
}

}  // namespace trainprof::launcher
