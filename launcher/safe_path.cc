#include "safe_path.h"

#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "trainprof/path_walk.h"

namespace trainprof::launcher {

bool SymlinkMayBeFollowed(const struct stat& dir, const struct stat& link, uid_t euid) {
  return pathwalk::SymlinkMayBeFollowed(dir, link, euid);
}

std::optional<std::string> OpenOutputDirectory(const std::string& dir, bool create, mode_t mode, std::string* error) {
  int fd = -1;
  char why[1024];
  if (int e = pathwalk::WalkPath(dir.c_str(), pathwalk::Want::kDirectory, create, mode, &fd, nullptr, why,
                                 sizeof(why))) {
    *error = why[0] != '\0' ? why : strerror(e);
    return std::nullopt;
  }
  char path[PATH_MAX];
  bool known = pathwalk::FdPath(fd, path, sizeof(path));
  close(fd);
  if (!known) {
    *error = "cannot tell the resolved path of " + dir;
    return std::nullopt;
  }
  return std::string(path);
}

}  // namespace trainprof::launcher
