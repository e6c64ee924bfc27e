#include "sample_options.h"

#include "inject_env.h"

namespace trainprof::launcher {

std::optional<unsigned> ParseSampleHz(const std::string& text, std::string* error) {
  if (text.empty()) return 0u;
  unsigned v = 0;
  bool ok = text.size() <= 6;
  for (char c : text) {
    if (!ok || c < '0' || c > '9') {
      ok = false;
      break;
    }
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (!ok || v > kMaxSampleHz) {
    *error = "--sample: '" + text + "': samples per second of CPU time, a whole number from 1 to " +
             std::to_string(kMaxSampleHz) + " (1000 is typical; 0 turns sampling off)";
    return std::nullopt;
  }
  return v;
}

void ApplySampleEnvironment(std::vector<std::string>* env, unsigned hz) {
  if (hz > 0) {
    SetEnv(env, "TRAINPROF_SAMPLE", std::to_string(hz));
  } else {
    UnsetEnv(env, "TRAINPROF_SAMPLE");
  }
}

}  // namespace trainprof::launcher
