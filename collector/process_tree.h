// Process images → processes: merge the images of one pid (exec), link parents, derive lifetime,
// exit, rank and role.
//
//   images (any order) ─► group by (host, pid), split where image_index restarts (pid reuse)
//                     ─► lifetime: first image's start → last image's end
//                     ─► parent: traced process on the same host with pid == ppid whose lifetime
//                        contains the child's start (pids are reused); for an orphan (ppid 1
//                        after its parent exited) the process whose kFork record names it
//                     ─► exit: header end_kind, else kProcessEnd, else the parent's kChildExit
//                     ─► rank (RANK / OMPI / PMI / SLURM variables) and role
#pragma once

#include <string>
#include <vector>

#include "collector/model.h"

namespace trainprof::collector {

/// Builds processes in tree order (roots by start time, each followed by its subtree; children by
/// start time). Parent/children/depth are indices into the returned vector.
std::vector<Process> BuildProcesses(std::vector<TraceImage> images, const StringPool& strings);

/// "exit 0", "exit 3", "signal 9 (SIGKILL)", "exec'd", "returned", "unknown".
std::string DescribeExit(const ExitInfo& exit);
/// "exit", "signal", "exec", "returned", "unknown" (the JSON/CSV exit kind).
const char* ExitKindName(EndKind kind);

}  // namespace trainprof::collector
