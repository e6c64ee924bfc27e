// The processes of this machine as /proc shows them: pid, state and parent of each, for the
// launcher's walks over its process tree (reaping orphans, signalling every descendant).
#pragma once

#include <sys/types.h>

#include <vector>

namespace trainprof::launcher {

struct ProcEntry {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';  ///< /proc/PID/stat's state letter ('Z': a zombie, ended but not reaped)
};

/// Every process /proc lists now (those that vanish while it is read are left out). Linux only:
/// reads /proc/PID/stat, whose comm field may hold spaces and parentheses (parsed after the last ')').
std::vector<ProcEntry> ReadProcTable();

}  // namespace trainprof::launcher
