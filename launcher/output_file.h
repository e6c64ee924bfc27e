// How `trainprof report -o FILE` and `trainprof export -o FILE` write FILE.
//
//   FILE missing, or a regular file   a temporary beside it (FILE.tmp.<pid>), renamed onto FILE
//                                     once complete: a failed write never looks complete and an
//                                     existing FILE stays intact
//   FILE a symlink                    the same for the file it points to; the link stays a link
//   FILE anything else                written in place: a device (/dev/null, /dev/stdout's
//   (device, FIFO, socket)            target), a FIFO a reader waits on. Never replaced by a file.
#pragma once

#include <string>

namespace trainprof::launcher {

struct OutputFilePlan {
  std::string write_to;   ///< the path to open for writing (O_CREAT|O_TRUNC)
  std::string rename_to;  ///< empty: written in place; else rename write_to onto it when complete
};

/// The plan for `path` (not "-": stdout is the caller's). Looks at the file system only.
OutputFilePlan PlanOutputFile(const std::string& path);

}  // namespace trainprof::launcher
