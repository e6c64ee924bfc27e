// Which symlinks trainprof follows when it writes: `report -o`, `export -o`, the CSV tables and
// `run -o` (docs/cli.md, "Files trainprof writes"); the walk itself is trainprof/path_walk.h.
//
// The rule is the kernel's fs.protected_symlinks rule (Documentation/admin-guide/sysctl/fs.rst),
// applied by trainprof itself whatever the sysctl says: a symlink is followed unless it sits in a
// sticky world-writable directory (/tmp, /dev/shm, a shared scratch folder) and is owned neither
// by the effective user nor by that directory's owner. Such a link may have been planted by
// another local user to make trainprof (possibly root) write somewhere they could not.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>

namespace trainprof::launcher {

/// The rule for one link: `dir` is the lstat of the directory holding it, `link` its own lstat,
/// `euid` the user trainprof writes as.
bool SymlinkMayBeFollowed(const struct stat& dir, const struct stat& link, uid_t euid);

/// Opens the directory `dir` as trainprof/path_walk.h walks it (one component at a time, links
/// under the rule above), making missing directories with exactly `mode` when `create`. Returns
/// its resolved absolute path (no symlink left in it), or nullopt with *error (which link was
/// refused, or the strerror text; no "trainprof:" prefix). Safe in the forked child of the
/// single-threaded launcher (it allocates).
std::optional<std::string> OpenOutputDirectory(const std::string& dir, bool create, mode_t mode, std::string* error);

}  // namespace trainprof::launcher
