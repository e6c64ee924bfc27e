// How `trainprof report -o FILE`, `trainprof export -o FILE` and the CSV tables write FILE
// (docs/cli.md, "Files trainprof writes").
//
//   symlinks on the way      followed only as safe_path.h allows: another user's link in a sticky
//                            world-writable directory (/tmp) is refused, nothing is written
//   FILE missing, or a       a new file beside it with a random name, created
//   regular file             O_CREAT|O_EXCL|O_NOFOLLOW (mode 0666 & ~umask) in the directory
//                            opened once, renamed onto FILE in that directory once complete: a
//                            failed write never looks complete, an existing FILE stays intact,
//                            and nothing planted at the temporary's name is ever written through
//   FILE a symlink           the same for the file it points to; the link stays a link
//   FILE a device, FIFO      written in place (opened without O_CREAT): /dev/null, /dev/stdout's
//                            target, a FIFO a reader waits on. Never replaced by a file.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace trainprof::launcher {

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
  /// The file written: the target after symlinks (a device or FIFO: the path as given).
  const std::string& target() const { return target_; }

 private:
  OutputFile() = default;
  int dir_fd_ = -1;
  int fd_ = -1;
  std::string staged_;
  std::string name_;
  std::string target_;
  bool committed_ = false;
};

/// Writes `content` to `path` through OutputFile. Returns false with *error (without the path).
bool WriteOutputFile(const std::string& path, std::string_view content, std::string* error);

}  // namespace trainprof::launcher
