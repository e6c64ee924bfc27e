#include "stacks/safe_read.h"

#include <errno.h>
#include <unistd.h>

#include <atomic>

namespace trainprof::inject::stacks {

bool SafeReader::Read(void* to, uintptr_t from, size_t n) const {
  if (n == 0) return true;
  if (from < 4096 || pid_ <= 0) return false;  // NULL and the page behind it: never mapped
  const int saved = errno;  // the interrupted code may be between a call and its errno check
  iovec local{to, n};
  iovec remote{reinterpret_cast<void*>(from), n};
  const ssize_t got = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  errno = saved;
  return got == static_cast<ssize_t>(n);
}

size_t SafeReader::ReadMany(const ReadPart* parts, size_t n) const {
  if (n > kMaxParts) n = kMaxParts;
  if (pid_ <= 0) return 0;
  iovec local[kMaxParts], remote[kMaxParts];
  size_t done = 0;
  bool retried = false;
  const int saved = errno;
  while (done < n) {
    size_t k = 0, want = 0;
    for (size_t i = done; i < n; ++i, ++k) {
      if (parts[i].from < 4096) break;  // stop before a NULL part: it fails alone below
      local[k] = iovec{parts[i].to, parts[i].n};
      remote[k] = iovec{reinterpret_cast<void*>(parts[i].from), parts[i].n};
      want += parts[i].n;
    }
    ssize_t got = k == 0 ? 0 : process_vm_readv(pid_, local, k, remote, k, 0);
    if (got < 0) got = 0;
    if (static_cast<size_t>(got) == want && k == n - done) {
      done = n;
      break;
    }
    // Count the whole parts read; the first short one is retried alone (a read may stop at a
    // page boundary inside a part whose later pages are readable).
    size_t whole = 0, sum = 0;
    while (whole < k && sum + parts[done + whole].n <= static_cast<size_t>(got)) sum += parts[done + whole++].n;
    done += whole;
    if (done >= n || retried) break;
    retried = true;
    if (!Read(parts[done].to, parts[done].from, parts[done].n)) break;
    ++done;
  }
  errno = saved;
  return done;
}

bool SafeReadWorks() {
  static std::atomic<int> state{0};  // 0 unknown, 1 works, 2 refused
  int s = state.load(std::memory_order_acquire);
  if (s == 0) {
    volatile uint64_t probe = 0x5452414950524f46ull;
    uint64_t copy = 0;
    s = SafeReader(getpid()).Read(&copy, reinterpret_cast<uintptr_t>(&probe), sizeof(copy)) &&
                copy == probe
            ? 1
            : 2;
    state.store(s, std::memory_order_release);
  }
  return s == 1;
}

}  // namespace trainprof::inject::stacks
