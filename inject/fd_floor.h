// The descriptors the library keeps open while the program runs live at or above a floor, out of
// the program's own numbering: a program expects open() to return the lowest free number (0, 1
// or 2 when it closed them, 3 next otherwise), and one that starts with stdin or stdout closed
// must not find them taken by us. docs/cli.md, "File descriptors", lists every descriptor the
// library and its dependencies open.
//
//   MoveAboveFloor(fd)      our long-lived descriptors (the trace file): F_DUPFD_CLOEXEC up
//   LowFdPlaceholders       a dependency that numbers its own descriptors (libunwind's pipe):
//                           every free number below the floor taken while it opens them
#pragma once

#include <cstddef>

namespace trainprof::inject {

/// The lowest number our long-lived descriptors take: 900, or half of RLIMIT_NOFILE's soft limit
/// when that is under 1800 (at least 3). Async-signal-safe (getrlimit).
int FdFloor();

/// Moves `fd` to the lowest free number at or above FdFloor() (close-on-exec); returns the new
/// number, the old one closed. Returns `fd` itself when it is there already or the move failed
/// (EMFILE: no free number up there). Async-signal-safe.
int MoveAboveFloor(int fd);

/// Holds every free descriptor number below FdFloor() with a placeholder (a duplicate of one
/// O_PATH descriptor of "/") from Fill() until Release(), so that whatever a dependency opens
/// meanwhile lands at or above the floor. Not for signal handlers or multithreaded phases: the
/// numbers are the process's (use it at start-up). Static storage: one at a time.
class LowFdPlaceholders {
 public:
  /// Takes the free numbers below the floor; returns how many it took.
  size_t Fill();
  /// Closes the placeholders (only those Fill took).
  void Release();
  ~LowFdPlaceholders() { Release(); }

 private:
  size_t count_ = 0;
};

}  // namespace trainprof::inject
