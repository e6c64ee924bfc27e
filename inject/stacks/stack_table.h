// The stack table: each distinct call stack of the process gets one id (1.., process-wide, per
// trace file), and its STACK record is written once, before the id is published to other threads.
//
//   Intern(words) ─► hash ─► probe slots[h & mask] (open addressing, linear, at most kMaxProbes)
//     empty slot: CAS hash 0 → h claims it; copy the words into the arena (atomic bump); take an
//                 id; write(id, words) (the STACK record); publish the id (release store)
//     same hash:  id published and words equal → that id (nothing written)
//                 id not published yet (another thread is writing it) → go on probing
//   table or arena full, or kMaxProbes slots tried: a fresh id all the same, written by
//   write(id, words), not deduplicated, and counted (Undeduplicated()).
//
// Lock-free, allocation-free and async-signal-safe: memory is one mmap at creation; the hot path
// is loads, one CAS and fetch_adds. A signal handler that interrupts Intern on the same thread and
// interns too is safe (the slot claimed by the interrupted call is skipped as "not published").
// Words are the STACK record's frame values before varint encoding (docs/trace-format.md,
// "Stacks"): native address × 2, Python function string id × 2 + 1, file string id, line.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace trainprof::inject {

class StackTable {
 public:
  static constexpr uint32_t kMaxProbes = 64;

  /// A table of `slots` slots (rounded up to a power of 2) and `arena_words` words of frames,
  /// mmap'ed. nullptr when out of memory. Never freed in the profiled process (fork children
  /// abandon their parent's); Destroy is for tests.
  static StackTable* Create(uint32_t slots, size_t arena_words);
  static void Destroy(StackTable* t);

  /// The id of the stack `words[0..n)`; when new, `write(id, words, n)` runs (on this thread)
  /// before any other thread can get the id. Returns 0 only for n == 0.
  template <typename Write>
  uint32_t Intern(const uint64_t* words, size_t n, Write&& write);

  /// Stacks recorded without deduplication because the table was full (or too crowded).
  uint64_t Undeduplicated() const { return undeduplicated_.load(std::memory_order_relaxed); }
  /// Ids handed out so far.
  uint32_t Count() const { return next_id_.load(std::memory_order_relaxed) - 1; }

  /// 64-bit hash of the words, never 0.
  static uint64_t Hash(const uint64_t* words, size_t n);

 private:
  struct Slot {
    std::atomic<uint64_t> hash;   ///< 0: empty
    std::atomic<uint32_t> id;     ///< 0: claimed, not published yet
    uint32_t n;                   ///< words (set before id is published)
    uint64_t offset;              ///< first word in arena_
  };
  StackTable() = default;
  uint32_t NewId() { return next_id_.fetch_add(1, std::memory_order_relaxed); }
  /// Room for n words in the arena, or nullptr when it is full.
  uint64_t* AllocateWords(size_t n, uint64_t* offset);
  static bool Equal(const uint64_t* a, const uint64_t* b, size_t n);

  Slot* slots_ = nullptr;
  uint32_t mask_ = 0;
  uint64_t* arena_ = nullptr;
  size_t arena_words_ = 0;
  size_t map_bytes_ = 0;
  std::atomic<size_t> arena_used_{0};
  std::atomic<uint32_t> next_id_{1};
  std::atomic<uint64_t> undeduplicated_{0};
};

template <typename Write>
uint32_t StackTable::Intern(const uint64_t* words, size_t n, Write&& write) {
  if (n == 0) return 0;
  const uint64_t h = Hash(words, n);
  for (uint32_t i = 0; i < kMaxProbes && i <= mask_; ++i) {
    Slot& s = slots_[(h + i) & mask_];
    uint64_t seen = s.hash.load(std::memory_order_acquire);
    if (seen == 0) {
      if (!s.hash.compare_exchange_strong(seen, h, std::memory_order_acq_rel)) {
        if (seen != h) continue;  // another stack took the slot: probe on
      } else {
        uint64_t offset = 0;
        uint64_t* copy = AllocateWords(n, &offset);
        if (copy == nullptr) break;  // arena full: the slot stays unpublished, never matched
        for (size_t k = 0; k < n; ++k) copy[k] = words[k];
        s.n = static_cast<uint32_t>(n);
        s.offset = offset;
        uint32_t id = NewId();
        write(id, words, n);
        s.id.store(id, std::memory_order_release);
        return id;
      }
    }
    if (seen != h) continue;
    uint32_t id = s.id.load(std::memory_order_acquire);
    if (id != 0 && s.n == n && Equal(arena_ + s.offset, words, n)) return id;
  }
  undeduplicated_.fetch_add(1, std::memory_order_relaxed);
  uint32_t id = NewId();
  write(id, words, n);
  return id;
}

}  // namespace trainprof::inject
