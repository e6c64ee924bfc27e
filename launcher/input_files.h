// An output never replaces an input: `trainprof report -o run/pid-N.trace run` would put the
// report in place of the trace it is made from, and the next report would lose that process
// (docs/cli.md, "Files trainprof writes"). The inputs are the files found to read (a directory
// given is walked first); a file is the same as an input when its device and inode are: through
// symbolic links and hard links, whatever the names.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "output_file.h"

namespace trainprof::launcher {

class InputFiles {
 public:
  /// The device and inode of each of `paths` (stat(2): symbolic links followed). A path that
  /// cannot be stat'ed is left out (the reader says why it cannot be read).
  explicit InputFiles(const std::vector<std::string>& paths);

  /// The input that is the file `st` describes, or nullptr.
  const std::string* Find(const struct stat& st) const;

  /// "" or the error for writing `output`, named `what` ("-o out.txt", "the CSV table
  /// out/files.csv"), when the file at `output` (stat(2), symbolic links followed) is an input.
  /// A path that names no file yet is fine.
  std::string CheckPath(const std::string& output, const std::string& what) const;

  /// The same for the file open at `fd` (stdout: "stdout").
  std::string CheckFd(int fd, const std::string& what) const;

  /// The same for an output opened but not yet written (OutputFile::existing()).
  std::string Check(const OutputFile& file, const std::string& what) const;

 private:
  std::string Refusal(const struct stat& st, const std::string& what) const;
  std::map<std::pair<dev_t, ino_t>, std::string> inputs_;
};

}  // namespace trainprof::launcher
