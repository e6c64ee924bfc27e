#include "stacks/stack_table.h"

#include <sys/mman.h>

#include <new>

namespace trainprof::inject {

StackTable* StackTable::Create(uint32_t slots, size_t arena_words) {
  uint32_t cap = 16;
  while (cap < slots && cap < (1u << 30)) cap <<= 1;
  const size_t head = (sizeof(StackTable) + 63) & ~size_t{63};
  const size_t bytes = head + size_t{cap} * sizeof(Slot) + arena_words * sizeof(uint64_t);
  // Untouched pages cost nothing: the table is sized for the worst case, not reserved.
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  auto* base = static_cast<unsigned char*>(m);
  auto* t = new (m) StackTable();
  t->slots_ = reinterpret_cast<Slot*>(base + head);  // zero pages: every slot empty
  t->mask_ = cap - 1;
  t->arena_ = reinterpret_cast<uint64_t*>(base + head + size_t{cap} * sizeof(Slot));
  t->arena_words_ = arena_words;
  t->map_bytes_ = bytes;
  return t;
}

void StackTable::Destroy(StackTable* t) {
  if (t != nullptr) munmap(t, t->map_bytes_);
}

uint64_t StackTable::Hash(const uint64_t* words, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xff51afd7ed558ccdull);
  for (size_t i = 0; i < n; ++i) {
    h = (h ^ words[i]) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  }
  return h != 0 ? h : 1;
}

uint64_t* StackTable::AllocateWords(size_t n, uint64_t* offset) {
  size_t at = arena_used_.fetch_add(n, std::memory_order_relaxed);
  if (at + n > arena_words_) return nullptr;
  *offset = at;
  return arena_ + at;
}

bool StackTable::Equal(const uint64_t* a, const uint64_t* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace trainprof::inject
