#include "config.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "stacks/sample_settings.h"

extern char** environ;

namespace trainprof::inject {
namespace {

const char* Get(const char* name) {
  const char* v = getenv(name);
  return (v != nullptr && *v != '\0') ? strdup(v) : nullptr;
}

bool Contains(std::string_view list, std::string_view item) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    if (list.substr(pos, comma - pos) == item) return true;
    pos = comma + 1;
  }
  return false;
}

}  // namespace

Config ReadConfig() {
  Config c;
  c.output_dir = Get("TRAINPROF_OUTPUT_DIR");
  const char* follow = getenv("TRAINPROF_FOLLOW_CHILDREN");
  c.follow_children = follow != nullptr && strcmp(follow, "1") == 0;
  if (const char* root = getenv("TRAINPROF_ROOT_PID")) c.root_pid = atoi(root);
  c.run_id = Get("TRAINPROF_RUN_ID");
  if (const char* trace = getenv("TRAINPROF_TRACE")) {
    c.trace_nvtx = Contains(trace, "nvtx");
    c.trace_python = Contains(trace, "python");
    c.trace_cuda = Contains(trace, "cuda");
    c.trace_torch_ops = Contains(trace, "torch-ops");
  }
  if (const char* m = getenv("TRAINPROF_UMASK"); m != nullptr && *m != '\0') {
    char* end = nullptr;
    unsigned long v = strtoul(m, &end, 8);
    if (*end == '\0' && v <= 0777 && *m != '-' && *m != '+' && *m != ' ') c.umask = static_cast<unsigned>(v);
  }
  c.capture_range = Get("TRAINPROF_CAPTURE_RANGE");
  c.capture_range_end = Get("TRAINPROF_CAPTURE_RANGE_END");
  if (const char* w = getenv("TRAINPROF_CAPTURE_WINDOW")) {
    char* end = nullptr;
    c.capture_window_start_ns = strtoull(w, &end, 10);
    if (end != nullptr && *end == ':') c.capture_window_end_ns = strtoull(end + 1, nullptr, 10);
  }
  if (const char* pid = getenv("TRAINPROF_LAUNCHER_PID")) c.launcher_pid = atoi(pid);
  c.backtrace = Get("TRAINPROF_BACKTRACE");
  ParseSampleHz(getenv("TRAINPROF_SAMPLE"), &c.sample_hz);  // the launcher checked it; bad text: off
  const char* quiet = getenv("TRAINPROF_QUIET");
  c.quiet = quiet != nullptr && strcmp(quiet, "1") == 0;
  const char* cuda_quiet = getenv("TRAINPROF_CUDA_QUIET");
  c.cuda_quiet = cuda_quiet != nullptr && strcmp(cuda_quiet, "1") == 0;
  c.cupti_path = Get("TRAINPROF_CUPTI_PATH");
  c.cuda_home = Get("CUDA_HOME");
  if (const char* ms = getenv("TRAINPROF_GPU_FLUSH_MS"); ms != nullptr && *ms != '\0') {
    char* end = nullptr;
    unsigned long v = strtoul(ms, &end, 10);
    if (end != ms && *end == '\0') {
      c.gpu_flush_ms = v < kGpuFlushMsMin ? kGpuFlushMsMin : v > kGpuFlushMsMax ? kGpuFlushMsMax : static_cast<unsigned>(v);
    }
  }
  c.lib_path = Get("TRAINPROF_LIB");
  c.python_dir = Get("TRAINPROF_PYTHON_DIR");
  for (size_t i = 0; i < kNumOwnedVars; ++i) {
    const char* v = getenv(kOwnedVars[i]);
    if (v == nullptr) continue;
    size_t n = strlen(kOwnedVars[i]);
    char* s = static_cast<char*>(malloc(n + 1 + strlen(v) + 1));
    if (s == nullptr) continue;
    memcpy(s, kOwnedVars[i], n);
    s[n] = '=';
    strcpy(s + n + 1, v);
    c.saved[i] = s;
  }
  return c;
}

}  // namespace trainprof::inject
