// How `trainprof report -o FILE`, `trainprof export -o FILE` and the CSV tables write FILE
// (docs/cli.md, "Files trainprof writes").
//
//   the path                walked once, one component at a time (trainprof/path_walk.h):
//                            symlinks followed only under the fs.protected_symlinks rule, the
//                            file then created/renamed relative to the directory reached
//   FILE missing, or a       a new file `.trainprof-<12 random>` beside it, created
//   regular file             O_CREAT|O_EXCL|O_NOFOLLOW (mode 0666 & ~umask) in that directory,
//                            renamed onto FILE once complete: a failed write never looks
//                            complete, an existing FILE stays intact, nothing planted at the
//                            temporary's name is written through
//   FILE a symlink           the same for the file it points to; the link stays a link
//   FILE a device, FIFO      written in place (O_NONBLOCK, no O_CREAT: no reader is an error, not
//                            a hang); another user's in a sticky world-writable directory refused
//   /dev/stdout, /dev/fd/N   a duplicate of that descriptor, written where it stands (StreamPathFd)
#pragma once

#include <sys/stat.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace trainprof::launcher {

/// The descriptor a path names when it is one of this process's open descriptors as written:
/// /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N,
/// /proc/<our pid>/fd/N. nullopt for any other path (matched as text, before any lookup).
std::optional<int> StreamPathFd(const std::string& path);

class OutputFile {
 public:
  /// Opens `path` (not "-": stdout is the caller's) for writing as above. On failure returns
  /// nullptr and sets *error to why (strerror text, or the refused symlink), without the path.
  static std::unique_ptr<OutputFile> Open(const std::string& path, std::string* error);

  /// Closes the descriptor if still held; removes the temporary unless Commit() succeeded.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// The descriptor to write to (-1 after ReleaseFd).
  int fd() const { return fd_; }
  /// Gives the descriptor to the caller, who closes it before Commit().
  int ReleaseFd();
  /// Closes the descriptor (if held) and renames the temporary onto the target. Returns false
  /// with *error (strerror text) if either fails; the temporary is then removed.
  bool Commit(std::string* error);

  /// The temporary's name in the target's directory, "" when written in place.
  const std::string& staged_name() const { return staged_; }
  /// The file written: the target after symlinks (/dev/stdout and the like: the path as given).
  const std::string& target() const { return target_; }
  /// The path is an open descriptor (/dev/stdout, /dev/fd/N...: StreamPathFd), written as it is.
  bool is_stream() const { return stream_; }
  /// The file this output replaces or writes into, as Open found it (the target after symlinks;
  /// the descriptor's file for a stream, device or FIFO); null when the target is a new file.
  const struct stat* existing() const { return exists_ ? &existing_ : nullptr; }

 private:
  OutputFile() = default;
  int dir_fd_ = -1;
  int fd_ = -1;
  std::string staged_;
  std::string name_;
  std::string dir_;
  std::string target_;
  bool stream_ = false;
  bool committed_ = false;
  bool exists_ = false;
  struct stat existing_ {};
};

/// Writes all of `content` to fd (EINTR retried). Returns false with *error (strerror text).
bool WriteAll(int fd, std::string_view content, std::string* error);

/// Writes `content` to `path` through OutputFile. Returns false with *error (without the path).
bool WriteOutputFile(const std::string& path, std::string_view content, std::string* error);

}  // namespace trainprof::launcher
