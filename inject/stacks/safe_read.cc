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

size_t SafeReader::ReadMany(const ReadPart* parts, size_t n, bool* ok) const {
  if (n > kMaxParts) n = kMaxParts;
  for (size_t i = 0; i < n; ++i) ok[i] = false;
  if (pid_ <= 0) return 0;
  iovec local[kMaxParts], remote[kMaxParts];
  size_t next = 0, read = 0, calls = 0;
  const int saved = errno;
  while (next < n && calls < kMaxCalls) {
    if (parts[next].from < 4096) {  // NULL and its page: never mapped, no call needed
      ++next;
      continue;
    }
    size_t k = 0, want = 0;
    for (size_t i = next; i < n && parts[i].from >= 4096; ++i, ++k) {
      local[k] = iovec{parts[i].to, parts[i].n};
      remote[k] = iovec{reinterpret_cast<void*>(parts[i].from), parts[i].n};
      want += parts[i].n;
    }
    ssize_t got = process_vm_readv(pid_, local, k, remote, k, 0);
    ++calls;
    if (got < 0) got = 0;  // the first part could not be read at all
    // The whole parts read; the kernel stops at the first part it cannot read.
    size_t sum = 0;
    while (k > 0 && sum + parts[next].n <= static_cast<size_t>(got)) {
      sum += parts[next].n;
      ok[next++] = true;
      ++read;
      --k;
    }
    if (static_cast<size_t>(got) == want || k == 0) continue;
    // parts[next] stopped the batch. Read in part (it crosses into a page that is gone, or a
    // page boundary split it): once more alone. Not at all: it fails, and so do the parts after
    // it in the same page (the other fields of one object), without a call each.
    const uintptr_t page = parts[next].from & ~uintptr_t{4095};
    if (sum < static_cast<size_t>(got) && calls < kMaxCalls) {
      ++calls;
      iovec l1{parts[next].to, parts[next].n}, r1{reinterpret_cast<void*>(parts[next].from), parts[next].n};
      if (process_vm_readv(pid_, &l1, 1, &r1, 1, 0) == static_cast<ssize_t>(parts[next].n)) {
        ok[next] = true;
        ++read;
      }
      ++next;
      continue;
    }
    while (next < n && (parts[next].from & ~uintptr_t{4095}) == page) ++next;
  }
  errno = saved;
  return read;
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
