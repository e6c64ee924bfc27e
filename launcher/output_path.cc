#include "output_path.h"

#include <fcntl.h>
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
  out.relative_ = pattern.empty() || pattern[0] != '/';
  out.literals_.emplace_back();
  std::vector<std::vector<bool>> q_chars;            // per literal: true where a %q value put it
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
        if (auto value = ctx.getenv ? ctx.getenv(name) : std::nullopt) {
          std::string v = *value;
          for (char& ch : v) ch = ch == '/' ? '_' : ch;
          // Which characters of the literal came from a %q value, for the "." / ".." check below.
          q_chars.resize(out.literals_.size());
          q_chars.back().resize(out.literals_.back().size(), false);
          q_chars.back().resize(out.literals_.back().size() + v.size(), true);
          if (v != *value) {
            out.notes_.push_back("note: %q{" + name + "} is '" + *value + "'; used as '" + v +
                                 "' (a %q value is one name: '/' becomes '_'; for a directory from the environment write \"$" +
                                 name + "\" for the shell)");
          }
          out.literals_.back() += v;
        }
        i = close;
        break;
      }
      default:
        *error = "output pattern '" + std::string(pattern) + "': unknown expansion '%" +
                 std::string(1, k) + "' (valid: %p pid, %h hostname, %q{VAR} environment, %% percent)";
        return std::nullopt;
    }
  }
  // A path component "." or ".." that a %q value helped make: its dots from the value become
  // '_'. Components touching a %p hold its digits, so only those inside one literal can be.
  q_chars.resize(out.literals_.size());
  for (size_t li = 0; li < out.literals_.size(); ++li) {
    std::string& lit = out.literals_[li];
    std::vector<bool>& from_q = q_chars[li];
    from_q.resize(lit.size(), false);
    size_t start = 0;
    while (start <= lit.size()) {
      size_t end = lit.find('/', start);
      if (end == std::string::npos) end = lit.size();
      bool touches_pid = (start == 0 && li > 0) || (end == lit.size() && li + 1 < out.literals_.size());
      std::string_view comp(lit.data() + start, end - start);
      if (!touches_pid && (comp == "." || comp == "..")) {
        std::string was(comp);
        for (size_t k = start; k < end; ++k) lit[k] = from_q[k] ? '_' : lit[k];
        if (lit.compare(start, end - start, was) != 0) {
          out.notes_.push_back("note: a %q{...} value made the path component '" + was + "'; used as '" +
                               lit.substr(start, end - start) + "' (a %q value never leaves the directory)");
        }
      }
      start = end + 1;
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
  // A relative pattern stays relative whatever its values: an empty %q{VAR} at its start must not
  // make "%q{VAR}/x" the absolute "/x".
  std::filesystem::path p(relative_ ? cwd_ + "/" + joined : joined);
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

}  // namespace trainprof::launcher
