// Who this process is, beyond its pid: what separates two processes with the same pid on one host
// (pid reuse within a run, ranks in separate pid namespaces sharing an output directory and even a
// hostname). Written into FileHeader's identity fields (format/trainprof/trace_format.h).
// Slow path only (once per process, once per fork); system calls only, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

struct ProcessIdentity {
  uint64_t pid_namespace = 0;  ///< inode of /proc/self/ns/pid (0 = unknown: no /proc)
  uint64_t start_ticks = 0;    ///< /proc/self/stat field 22, clock ticks since boot (0 = unknown)
  uint8_t boot_id[16] = {};    ///< /proc/sys/kernel/random/boot_id (all zero = unknown)
};

/// Reads the small file `path` (a /proc entry) into buf, at most cap bytes, with plain system calls
/// (no allocation). Returns the bytes read; 0 if it cannot be opened.
size_t ReadSmallFile(const char* path, char* buf, size_t cap);

/// Reads this process's identity from /proc. Fields it cannot read stay zero (unknown).
ProcessIdentity ReadProcessIdentity();

/// Whether children forked now are in another pid namespace than this process
/// (/proc/self/ns/pid_for_children differs from /proc/self/ns/pid: after unshare(CLONE_NEWPID)).
bool ChildrenInOtherPidNamespace();

/// Parses `hex` (32 hex digits, e.g. TRAINPROF_RUN_ID) into out[16]; false (out zeroed) otherwise.
bool ParseRunId(const char* hex, uint8_t out[16]);

}  // namespace trainprof::inject
