// libunwind's one-time initialisation, made harmless to the program's file descriptors.
//
// libunwind (nongnu, 1.6.2 in Debian 12; src/x86_64/Ginit.c) validates memory it is not sure of
// through a pipe: tdep_init → tdep_init_mem_validate → open_pipe() makes `mem_validate_pipe` with
// pipe2() at the lowest free numbers, and write_validate() re-makes it — closing the two numbers it
// had first, whatever they name by then — whenever a read of it fails (the program closed it).
// A program started with stdin and stdout closed found that pipe on fds 0 and 1; one that closes
// every descriptor above 2 would have had two of its own closed under it. So, once, before any
// stack is taken:
//   - the pipe is made while every free number below FdFloor() holds a placeholder (fd_floor.h):
//     it lands at or above the floor, and the numbers below are free again afterwards;
//   - the local address space's access_mem is replaced (x86-64): a read libunwind asks to have
//     validated (a frame without unwind information, walked by frame pointers) is made with
//     process_vm_readv (safe_read.h) instead, and libunwind's own validation, the only user of
//     the pipe, never runs again. All of libunwind's memory reads go through that accessor
//     (dwarf_get, ACCESS_MEM_FAST when validating); nothing else reads the pipe.
#pragma once

namespace trainprof::inject {

/// The above, once per process (idempotent), outside signal handlers: at start-up, before the
/// first capture. Returns whether validated reads now go through process_vm_readv.
bool InitUnwinder();

/// Whether `InitUnwinder` replaced libunwind's memory accessor (for tests).
bool UnwinderUsesSafeReads();

}  // namespace trainprof::inject
