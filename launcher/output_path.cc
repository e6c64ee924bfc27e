#include "output_path.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

namespace trainprof::launcher {

namespace {

bool IsEnvNameChar(char c) {
  return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

}  // namespace

PatternContext CurrentPatternContext() {
  PatternContext ctx;
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) ctx.hostname = host;
  ctx.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  std::error_code ec;
  ctx.cwd = std::filesystem::current_path(ec).string();
  if (ec) ctx.cwd = "/";  // cwd removed under us: absolute patterns still work
  return ctx;
}

std::optional<OutputPattern> OutputPattern::Parse(std::string_view pattern,
                                                  const PatternContext& ctx, std::string* error) {
  OutputPattern out;
  out.cwd_ = ctx.cwd;
  out.literals_.emplace_back();
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%') {
      out.literals_.back() += c;
      continue;
    }
    if (i + 1 == pattern.size()) {
      *error = "output pattern '" + std::string(pattern) + "' ends with a lone '%' (write %% for a literal %)";
      return std::nullopt;
    }
    char k = pattern[++i];
    switch (k) {
      case '%':
        out.literals_.back() += '%';
        break;
      case 'p':
        out.literals_.emplace_back();
        break;
      case 'h':
        out.literals_.back() += ctx.hostname;
        break;
      case 'q': {
        size_t close = pattern.find('}', i);
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{' || close == std::string_view::npos) {
          *error = "output pattern '" + std::string(pattern) + "': %q must be followed by {VARIABLE}";
          return std::nullopt;
        }
        std::string name(pattern.substr(i + 2, close - (i + 2)));
        bool valid = !name.empty();
        for (char n : name) valid = valid && IsEnvNameChar(n);
        if (!valid) {
          *error = "output pattern '" + std::string(pattern) + "': '" + name +
                   "' in %q{...} is not an environment variable name";
          return std::nullopt;
        }
        if (auto value = ctx.getenv ? ctx.getenv(name) : std::nullopt) out.literals_.back() += *value;
        i = close;
        break;
      }
      default:
        *error = "output pattern '" + std::string(pattern) + "': unknown expansion '%" +
                 std::string(1, k) + "' (valid: %p pid, %h hostname, %q{VAR} environment, %% percent)";
        return std::nullopt;
    }
  }
  if (!out.has_pid() && out.literals_.front().empty()) {
    *error = "output pattern '" + std::string(pattern) + "' expands to an empty path";
    return std::nullopt;
  }
  return out;
}

std::string OutputPattern::Expand(pid_t pid) const {
  std::string joined = literals_.front();
  for (size_t i = 1; i < literals_.size(); ++i) {
    joined += std::to_string(pid);
    joined += literals_[i];
  }
  std::filesystem::path p(joined);
  if (p.is_relative()) p = std::filesystem::path(cwd_) / p;
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string DefaultOutputName(std::time_t now) {
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  strftime(buf, sizeof(buf), "trainprof-%Y%m%d-%H%M%S", &tm);
  return buf;
}

int MakeDirectories(const std::string& dir) {
  // Plain mkdir(2) per component: no exceptions, and usable in the forked child.
  std::string path;
  size_t pos = 0;
  while (pos <= dir.size()) {
    size_t slash = dir.find('/', pos);
    if (slash == std::string::npos) slash = dir.size();
    path = dir.substr(0, slash);
    pos = slash + 1;
    if (path.empty()) continue;  // the leading '/'
    if (mkdir(path.c_str(), 0777) == 0) continue;
    int err = errno;
    struct stat st;
    if (err == EEXIST || err == EACCES || err == EROFS) {
      // An existing component is fine, even one we may not write to (e.g. /home).
      if (stat(path.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode)) return ENOTDIR;
        continue;
      }
    }
    return err;
  }
  return 0;
}

}  // namespace trainprof::launcher
