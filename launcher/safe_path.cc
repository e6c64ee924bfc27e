#include "safe_path.h"

#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include "trainprof/path_walk.h"

namespace trainprof::launcher {
namespace {

constexpr int kMaxSymlinks = 40;  // as the kernel (MAXSYMLINKS)

// Puts the components of `p` at the front of `rest`, in order.
void PushFront(std::deque<std::string>* rest, const std::string& p) {
  std::deque<std::string> parts;
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t slash = p.find('/', pos);
    if (slash == std::string::npos) slash = p.size();
    if (slash > pos) parts.push_back(p.substr(pos, slash - pos));
    pos = slash + 1;
  }
  rest->insert(rest->begin(), parts.begin(), parts.end());
}

void DropLast(std::string* p) {
  size_t slash = p->rfind('/');
  p->erase(slash == std::string::npos ? 0 : slash);
}

}  // namespace

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

std::optional<std::string> ResolveWithSymlinkRule(const std::string& path, std::string* error) {
  std::string cur;  // resolved so far: absolute, no trailing '/', "" for the root
  if (path.empty() || path[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == nullptr) {
      *error = std::string("cannot resolve ") + path + ": the current directory: " + strerror(errno);
      return std::nullopt;
    }
    cur = cwd;
    if (cur == "/") cur.clear();
  }
  std::deque<std::string> rest;
  PushFront(&rest, path);
  const uid_t euid = geteuid();
  int links = 0;
  bool missing = false;  // a component did not exist: the rest is taken as written
  while (!rest.empty()) {
    std::string c = std::move(rest.front());
    rest.pop_front();
    if (c == ".") continue;
    if (c == "..") {
      DropLast(&cur);
      continue;
    }
    std::string next = cur + "/" + c;
    struct stat st;
    if (!missing && lstat(next.c_str(), &st) != 0) missing = true;  // open/mkdir say why later
    if (missing || !S_ISLNK(st.st_mode)) {
      cur = std::move(next);
      continue;
    }
    struct stat dir;
    const std::string dir_path = cur.empty() ? "/" : cur;
    if (lstat(dir_path.c_str(), &dir) != 0) {
      *error = "cannot resolve " + path + ": " + dir_path + ": " + strerror(errno);
      return std::nullopt;
    }
    if (!SymlinkMayBeFollowed(dir, st, euid)) {
      *error = next + " is a symlink owned by uid " + std::to_string(st.st_uid) +
               " in the sticky world-writable directory " + dir_path + " (owned by uid " +
               std::to_string(dir.st_uid) + "): not followed, another user may have planted it (the "
               "fs.protected_symlinks rule; remove it or write elsewhere)";
      return std::nullopt;
    }
    if (++links > kMaxSymlinks) {
      *error = "cannot resolve " + path + ": " + strerror(ELOOP);
      return std::nullopt;
    }
    char target[PATH_MAX];
    ssize_t n = readlink(next.c_str(), target, sizeof(target) - 1);
    if (n < 0) {
      *error = "cannot resolve " + path + ": " + next + ": " + strerror(errno);
      return std::nullopt;
    }
    target[n] = '\0';
    if (target[0] == '/') cur.clear();
    PushFront(&rest, target);
  }
  return cur.empty() ? std::string("/") : cur;
}

}  // namespace trainprof::launcher
