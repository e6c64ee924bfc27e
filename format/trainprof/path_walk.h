// Path lookup done by hand, one component at a time, for the files trainprof writes (docs/cli.md,
// "Files trainprof writes"). Shared by the launcher (report/export -o, run -o) and the preloaded
// library (its trace directory), so it allocates nothing, takes no lock and uses only plain
// system calls (fixed buffers on the stack: about 4.5 KiB).
//
// Each component is opened with openat(dirfd, name, O_PATH | O_NOFOLLOW) relative to the
// directory reached so far; nothing is looked up by name a second time, so a directory or link
// renamed in between cannot redirect the result. A symlink met on the way is followed only under
// the kernel's fs.protected_symlinks rule, applied whatever the sysctl says: not when it sits in
// a sticky world-writable directory (/tmp, /dev/shm) and is owned neither by the effective user
// nor by that directory's owner (another local user may have planted it). Its target is resolved
// relative to the directory holding it (absolute: from "/"), as the kernel does; ".." is the
// real parent (after links), as for the kernel. At most 40 links (MAXSYMLINKS).
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

namespace trainprof::pathwalk {

/// The fs.protected_symlinks rule for one link: `dir` is the stat of the directory holding it,
/// `link` the link's own lstat, `euid` the user trainprof writes as.
inline bool SymlinkMayBeFollowed(const struct stat& dir, const struct stat& link, uid_t euid) {
  bool sticky_world_writable = (dir.st_mode & S_ISVTX) != 0 && (dir.st_mode & S_IWOTH) != 0;
  return !sticky_world_writable || link.st_uid == euid || link.st_uid == dir.st_uid;
}

/// The fs.protected_fifos=2 / protected_regular=2 rule for an existing FIFO, device or socket
/// (opened without O_CREAT): refused when it sits in a sticky world-writable directory and is owned
/// neither by the effective user nor by the directory's owner.
inline bool SpecialMayBeOpened(const struct stat& dir, const struct stat& file, uid_t euid) {
  return SymlinkMayBeFollowed(dir, file, euid);
}

/// The path of the file `fd` refers to, from /proc/self/fd (no allocation). False if unknown.
inline bool FdPath(int fd, char* out, size_t size) {
  char link[32];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, out, size - 1);
  if (n <= 0 || out[0] != '/') return false;
  out[n] = '\0';
  return true;
}

enum class Want {
  kDirectory,  ///< the whole path is a directory: *dir_fd is it, *last is ""
  kParent,     ///< the last component is a file: *dir_fd is its directory, *last its name; a
               ///< symlink there is followed (under the rule) to the name it points to
};

/// Walks `path` (absolute, or relative to the current directory). `create` (kDirectory only):
/// missing directories are made with mkdirat and then given exactly `mode` with fchmod (whatever
/// the umask). On success returns 0 with *dir_fd an O_PATH descriptor (close it) and, for
/// kParent, the last name (which may not exist) in last[NAME_MAX + 1]. On failure returns an errno
/// value and writes why into why[why_size] ("" when the errno says it all); a refused link gives
/// EPERM and names it. A trailing '/' on a kParent path gives EISDIR ("a/" names a directory).
inline int WalkPath(const char* path, Want want, bool create, mode_t mode, int* dir_fd, char* last,
                    char* why, size_t why_size) {
  if (why_size > 0) why[0] = '\0';
  if (last != nullptr) last[0] = '\0';
  *dir_fd = -1;
  size_t plen = strlen(path);
  if (plen == 0) return ENOENT;
  if (plen >= PATH_MAX) return ENAMETOOLONG;
  if (want == Want::kParent && path[plen - 1] == '/') return EISDIR;
  // `rest` holds what is left to walk; a link's target is put in front of it.
  char rest[PATH_MAX + NAME_MAX + 2];
  memcpy(rest, path, plen + 1);
  size_t pos = 0;  // start of the unwalked text in rest
  int cur = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cur < 0) return errno;
  const uid_t euid = geteuid();
  int links = 0;
  auto fail = [&](int e) {
    close(cur);
    return e;
  };
  while (true) {
    while (rest[pos] == '/') ++pos;
    if (rest[pos] == '\0') break;  // walked it all: cur is the directory
    size_t end = pos;
    while (rest[end] != '\0' && rest[end] != '/') ++end;
    size_t n = end - pos;
    if (n > NAME_MAX) return fail(ENAMETOOLONG);
    char comp[NAME_MAX + 1];
    memcpy(comp, rest + pos, n);
    comp[n] = '\0';
    size_t after = end;
    while (rest[after] == '/') ++after;
    const bool is_last = rest[after] == '\0';
    pos = end;
    if (strcmp(comp, ".") == 0 && !(is_last && want == Want::kParent)) continue;
    struct stat st;
    int fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && is_last && want == Want::kParent) {
      memcpy(last, comp, n + 1);  // a new file
      *dir_fd = cur;
      return 0;
    }
    if (fd < 0 && errno == ENOENT && create && strcmp(comp, "..") != 0) {
      if (mkdirat(cur, comp, mode) != 0 && errno != EEXIST) return fail(errno);
      // Exactly `mode`: opened without following a link, in case it was swapped since.
      int rd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (rd < 0) return fail(errno);
      if (fstat(rd, &st) == 0 && st.st_uid == euid) fchmod(rd, mode);
      fd = openat(rd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
      close(rd);
    }
    if (fd < 0) return fail(errno);
    if (fstat(fd, &st) != 0) {
      int e = errno;
      close(fd);
      return fail(e);
    }
    if (S_ISLNK(st.st_mode)) {
      struct stat dir;
      if (fstat(cur, &dir) != 0 || !SymlinkMayBeFollowed(dir, st, euid)) {
        close(fd);
        char* dir_path = rest;  // not needed any more: the walk ends here
        if (!FdPath(cur, dir_path, sizeof(rest))) snprintf(dir_path, sizeof(rest), "?");
        snprintf(why, why_size,
                 "%s%s%s is a symlink owned by uid %u in the sticky world-writable directory %s (owned by uid "
                 "%u): not followed, another user may have planted it (the fs.protected_symlinks rule; remove "
                 "it or write elsewhere)",
                 dir_path, strcmp(dir_path, "/") == 0 ? "" : "/", comp, static_cast<unsigned>(st.st_uid), dir_path,
                 static_cast<unsigned>(dir.st_uid));
        return fail(EPERM);
      }
      if (++links > 40) {
        close(fd);
        return fail(ELOOP);
      }
      // rest = the link's target + what followed the link: the tail moved to the buffer's end,
      // the target read in front of it, then the two joined.
      size_t tail = strlen(rest + pos);
      if (tail + 2 >= sizeof(rest)) {
        close(fd);
        return fail(ENAMETOOLONG);
      }
      char* tail_at = rest + sizeof(rest) - tail - 1;
      memmove(tail_at, rest + pos, tail + 1);
      ssize_t t = readlinkat(fd, "", rest, static_cast<size_t>(tail_at - rest));
      int e = errno;
      close(fd);
      if (t <= 0) return fail(t < 0 ? e : ENOENT);
      if (rest + t >= tail_at) return fail(ENAMETOOLONG);
      const bool absolute = rest[0] == '/';
      memmove(rest + t, tail_at, tail + 1);
      pos = 0;
      if (absolute) {
        int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) return fail(errno);
        close(cur);
        cur = root;
      }
      continue;
    }
    if (is_last && want == Want::kParent) {
      close(fd);
      memcpy(last, comp, n + 1);
      *dir_fd = cur;
      return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
      close(fd);
      return fail(ENOTDIR);
    }
    close(cur);
    cur = fd;
  }
  if (want == Want::kParent) return fail(EISDIR);  // "/", "." or ".." itself: a directory
  *dir_fd = cur;
  return 0;
}

}  // namespace trainprof::pathwalk
