// String interning: range names, domain names and thread names become small ids in the trace.
// A kString definition record is written (by the thread that first sees a string) before any
// record can use its id, so ids are always defined in the file.
//
// Hot path: a name shorter than 16 bytes seen at the same address before is confirmed by comparing
// the 16 bytes there with the cached ones (InternCString, inline: no strlen, hash or memcmp call).
// Else: hash the bytes, look in the thread's direct-mapped cache, confirm with memcmp.
// Miss: the process-wide table under its mutex. Its memory comes from mmap, never malloc: a miss
// can happen in a signal handler (NVTX from a handler) that interrupted the program inside malloc,
// whose locks are not re-entrant.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <atomic>

#include "recorder.h"

namespace trainprof::inject {

/// 64-bit hash of n bytes, 8 bytes per step (multiply-xorshift mixing, as in SplitMix64).
inline uint64_t HashBytes(const char* s, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xff51afd7ed558ccdull);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    s += 8;
    n -= 8;
  }
  if (n != 0) {
    // The 1..7 tail bytes as one word, from loads of the bytes themselves: copying them into a
    // zeroed word and reading it back stalls on store forwarding (~10 ns a name on this VM).
    uint64_t w;
    if (n >= 4) {
      uint32_t lo, hi;
      memcpy(&lo, s, 4);
      memcpy(&hi, s + n - 4, 4);
      w = (uint64_t{hi} << 32) | lo;
    } else {
      const auto* u = reinterpret_cast<const unsigned char*>(s);
      w = (uint64_t{u[0]} << 16) | (uint64_t{u[n >> 1]} << 8) | u[n - 1];
    }
    h = (h ^ w) * 0x94d049bb133111ebull;
    h ^= h >> 29;
  }
  return h;
}

class StringTable {
 public:
  /// Returns the id of the n bytes at s, defining it (kString record through thread t) if new.
  /// Thread-safe. n must be <= format::kMaxStringBytes.
  uint32_t Intern(ThreadState* t, const char* s, uint32_t n, uint64_t hash, const char** stored);

  /// Intern from a signal handler: the same, but when another thread holds the table's lock,
  /// returns 0 at once (pthread_mutex_trylock: a compare-and-swap in glibc, no wait) with
  /// *stored = nullptr. Only on a thread that is not inside a record or a library lock (the
  /// caller checks ThreadState::in_record / in_slow).
  uint32_t TryIntern(ThreadState* t, const char* s, uint32_t n, uint64_t hash, const char** stored);

  /// Returns the id of an NVTX domain named `name_id`, creating it (kDomain record) if new.
  /// Creating the same name twice gives the same domain, as nvtxDomainCreate documents.
  /// Ids run from 1; 0 is the default domain. Past format::kMaxDomainIds - 1 domains, a new name
  /// is counted as misuse (MisuseKind::kTooManyDomains) and gets id kMaxDomainIds.
  uint32_t Domain(ThreadState* t, uint32_t name_id);

  /// Largest id handed out so far (lock-free): a registered-string handle above it is bogus.
  uint32_t MaxId() const { return max_id_.load(std::memory_order_acquire); }

 private:
  // Open addressing; grows at 50% load. Allocated lazily under mu_.
  struct Slot {
    uint64_t hash;
    const char* data;
    uint32_t len;
    uint32_t id;
  };
  /// Intern's work, with mu_ held (released before it returns).
  uint32_t InternLocked(ThreadState* t, const char* s, uint32_t n, uint64_t hash, const char** stored);
  /// n bytes for an interned copy, from the current arena block (kept for the process life).
  char* AllocateCopyLocked(uint32_t n);

  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  Slot* slots_ = nullptr;    ///< mmap'ed, capacity_ slots
  uint32_t capacity_ = 0;
  char* arena_ = nullptr;    ///< free part of the current block of interned copies (mmap'ed)
  size_t arena_left_ = 0;
  uint32_t size_ = 0;
  uint32_t next_id_ = 1;
  std::atomic<uint32_t> max_id_{0};
  uint32_t domain_names_[format::kMaxDomainIds] = {};  ///< name id of domain i (0 = unused)
  uint32_t domains_ = 1;
  std::atomic<bool> overflow_defined_{false};  ///< domain kMaxDomainIds has its kDomain record
};

/// The 16 bytes at `s` as two little-endian words. Reads past the name's NUL, so only where the
/// 16 bytes lie in one page (AddressCacheable): a page that holds the name's first byte is mapped
/// whole. Not instrumented: those bytes may belong to another object (ASan) or thread (TSan).
__attribute__((no_sanitize("address", "thread"))) inline void Load16(const char* s, uint64_t* w0, uint64_t* w1) {
  __builtin_memcpy(w0, s, 8);
  __builtin_memcpy(w1, s + 8, 8);
}

/// Whether the 16 bytes at `s` lie in one page (4 KiB, the smallest on x86-64 and aarch64).
inline bool AddressCacheable(const char* s) { return (reinterpret_cast<uintptr_t>(s) & 4095) <= 4096 - 16; }

/// The thread's by-address cache entry of `s`.
inline CachedAddress& AddressSlot(ThreadState* t, const char* s) {
  return t->by_address[(reinterpret_cast<uintptr_t>(s) >> 3) & (kAddressCacheSize - 1)];
}

/// InternCString without the by-address cache: strnlen, hash, the name cache, the table.
uint32_t InternCStringSlow(ThreadState* t, const char* s);

/// Id of a NUL-terminated name (cut to kMaxStringBytes). Hot path: no lock on a cache hit, and for
/// a short name at an address seen before, two loads and a compare. NULL → 0 and a misuse record.
inline uint32_t InternCString(ThreadState* t, const char* s) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the by-address cache's masks are little-endian");
  const CachedAddress& e = AddressSlot(t, s);
  if (e.ptr == s && s != nullptr && AddressCacheable(s)) {
    uint64_t w0, w1;
    Load16(s, &w0, &w1);
    if ((((w0 & e.m0) ^ e.w0) | ((w1 & e.m1) ^ e.w1)) == 0) return e.id;
  }
  return InternCStringSlow(t, s);
}

/// Id of n bytes (n already <= kMaxStringBytes).
uint32_t InternBytes(ThreadState* t, const char* s, uint32_t n);

/// Id of n bytes (n <= kMaxStringBytes) from a signal handler (the sampler, python_async.h): 0
/// when it cannot be had now (the table's lock is held elsewhere, the thread is inside a record).
/// Neither reads nor fills the thread's name cache, which the interrupted code may be writing.
uint32_t TryInternBytes(ThreadState* t, const char* s, uint32_t n);

/// Id of a wide string, converted to UTF-8 (wchar_t is UTF-32 on Linux); invalid code points
/// become U+FFFD.
uint32_t InternWide(ThreadState* t, const wchar_t* s);

}  // namespace trainprof::inject
