// The output directory of `trainprof run -o PATTERN`: pattern expansion and the default name.
//
// Expansions (docs/cli.md, "Output directory"):
//   %p        pid of the launched command
//   %h        hostname (gethostname)
//   %q{VAR}   value of environment variable VAR, empty if unset: one name, never a path. Each '/'
//             in the value becomes '_', and a value that would make a path component "." or ".."
//             has its dots replaced by '_' (so `../x` gives `.._x`, `a/b` gives `a_b`, `..` gives
//             `__`): whatever the variable holds, the directory stays where the pattern puts it.
//   %%        a literal %
// Any other %x, a lone trailing %, or an unterminated %q{ is an error.
//
// Everything except %p is resolved once, in the parent, by OutputPattern::Parse. %p is resolved by
// OutputPattern::Expand(pid), which both sides call: the child with getpid() between fork and exec
// (it creates the directory itself, so it exists before any process of the command starts) and the
// parent with the pid fork returned. One function, so both sides agree on the exact string.
// Expand allocates: that is fine in the child only because trainprof never starts a thread, so no
// lock (malloc's included) can be held across fork.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainprof::launcher {

/// What Parse needs from the outside world, injectable for tests.
struct PatternContext {
  std::string hostname;
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  std::string cwd;  ///< absolute; relative patterns are resolved against it
};

/// The context of this process: gethostname(), getenv(), the current directory.
PatternContext CurrentPatternContext();

class OutputPattern {
 public:
  /// Parses `pattern`. On error returns nullopt and sets *error to a message without the
  /// "trainprof:" prefix.
  static std::optional<OutputPattern> Parse(std::string_view pattern, const PatternContext& ctx,
                                            std::string* error);

  /// True if the pattern contains %p (the directory depends on the child's pid).
  bool has_pid() const { return literals_.size() > 1; }

  /// The absolute, lexically normalised directory for `pid` (no trailing slash).
  std::string Expand(pid_t pid) const;

  /// One line per %q{VAR} value that was changed to stay one name (what it became), for the user.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  std::vector<std::string> literals_;  ///< the expanded text between %p's: size() == count(%p) + 1
  std::vector<std::string> notes_;
  std::string cwd_;
  bool relative_ = true;  ///< the pattern does not start with '/' (whatever its values)
};

/// `trainprof-YYYYmmdd-HHMMSS` for local time `now`, without any directory part.
std::string DefaultOutputName(std::time_t now);

}  // namespace trainprof::launcher
