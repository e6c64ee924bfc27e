// Reading memory of this process that may have been freed or unmapped, without faulting: the
// sampler's walk of the interpreter's structures (python_async.h) follows pointers that a thread
// interrupted at the wrong instruction may have left dangling (a frame being pushed or popped).
// process_vm_readv(2) on our own pid copies what is readable and reports EFAULT for the rest, as
// out-of-process samplers (py-spy) read another process. One system call a read, no lock, no
// allocation: async-signal-safe. Where the kernel refuses it (a seccomp filter, ENOSYS), Probe()
// says so once and callers read nothing.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

namespace trainprof::inject::stacks {

/// Reads of this process's memory through process_vm_readv(pid).
class SafeReader {
 public:
  /// `pid`: getpid() of this process (a fork child's own: a stale pid would read the parent);
  /// 0: every read fails (where the kernel refuses process_vm_readv).
  explicit SafeReader(pid_t pid) : pid_(pid) {}

  /// Copies n bytes at `from` to `to`; false (and `to` undefined) when any of them is unreadable.
  bool Read(void* to, uintptr_t from, size_t n) const;

  /// System calls made so far (for tests: a walk's cost).
  size_t calls() const { return calls_; }

 private:
  pid_t pid_;
  mutable size_t calls_ = 0;
};

/// Whether process_vm_readv works on this process (a test read of our own stack). Not in a
/// signal handler the first time: the answer is cached after one call.
bool SafeReadWorks();

}  // namespace trainprof::inject::stacks
