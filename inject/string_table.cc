#include "string_table.h"

#include <errno.h>
#include <sys/mman.h>

#include "runtime.h"
#include "utf8.h"

namespace trainprof::inject {

using format::RecordTag;

namespace {

// Interned copies are carved from blocks of this size; a block holds at least one longest name.
constexpr size_t kArenaBlockBytes = 64 * 1024;
static_assert(kArenaBlockBytes > format::kMaxStringBytes);

// Zeroed memory from the kernel (async-signal-safe, unlike malloc); nullptr on failure. errno is
// left as it was: the program may be reading it around the NVTX call that got us here.
void* MapZeroed(size_t bytes) {
  int saved = errno;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  errno = saved;
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

char* StringTable::AllocateCopyLocked(uint32_t n) {
  if (n > arena_left_) {
    // The rest of the old block is given up: names are small, blocks are many names.
    auto* block = static_cast<char*>(MapZeroed(kArenaBlockBytes));
    if (block == nullptr) return nullptr;
    arena_ = block;
    arena_left_ = kArenaBlockBytes;
  }
  char* p = arena_;
  arena_ += n;
  arena_left_ -= n;
  return p;
}

uint32_t StringTable::Intern(ThreadState* t, const char* s, uint32_t n, uint64_t hash,
                             const char** stored) {
  pthread_mutex_lock(&mu_);
  return InternLocked(t, s, n, hash, stored);
}

uint32_t StringTable::TryIntern(ThreadState* t, const char* s, uint32_t n, uint64_t hash,
                                const char** stored) {
  *stored = nullptr;
  if (pthread_mutex_trylock(&mu_) != 0) return 0;
  return InternLocked(t, s, n, hash, stored);
}

uint32_t StringTable::InternLocked(ThreadState* t, const char* s, uint32_t n, uint64_t hash,
                                   const char** stored) {
  if (size_ * 2 >= capacity_) {
    uint32_t cap = capacity_ == 0 ? 1024 : capacity_ * 2;
    auto* slots = static_cast<Slot*>(MapZeroed(cap * sizeof(Slot)));
    if (slots == nullptr) {
      pthread_mutex_unlock(&mu_);
      *stored = nullptr;
      return 0;
    }
    for (uint32_t i = 0; i < capacity_; ++i) {
      if (slots_[i].id == 0) continue;
      uint32_t j = static_cast<uint32_t>(slots_[i].hash) & (cap - 1);
      while (slots[j].id != 0) j = (j + 1) & (cap - 1);
      slots[j] = slots_[i];
    }
    if (slots_ != nullptr) munmap(slots_, capacity_ * sizeof(Slot));
    slots_ = slots;
    capacity_ = cap;
  }
  uint32_t j = static_cast<uint32_t>(hash) & (capacity_ - 1);
  while (slots_[j].id != 0) {
    const Slot& e = slots_[j];
    if (e.hash == hash && e.len == n && memcmp(e.data, s, n) == 0) {
      *stored = e.data;
      uint32_t id = e.id;
      pthread_mutex_unlock(&mu_);
      return id;
    }
    j = (j + 1) & (capacity_ - 1);
  }
  char* copy = AllocateCopyLocked(n + 1);
  if (copy == nullptr) {
    pthread_mutex_unlock(&mu_);
    *stored = nullptr;
    return 0;
  }
  memcpy(copy, s, n);
  copy[n] = '\0';
  uint32_t id = next_id_;
  next_id_ = id + 1;
  // Define before publishing: no record can use `id` before its definition is in the file.
  RecordDefinition(t, format::rec::String{.id = id, .bytes = std::string_view(copy, n)});
  slots_[j] = Slot{hash, copy, n, id};
  ++size_;
  max_id_.store(id, std::memory_order_release);
  pthread_mutex_unlock(&mu_);
  *stored = copy;
  return id;
}

uint32_t StringTable::Domain(ThreadState* t, uint32_t name_id) {
  if (t->in_record || t->in_slow) return 0;  // from a signal handler inside the library
  pthread_mutex_lock(&mu_);
  uint32_t id = 0;
  bool overflow = false;
  for (uint32_t i = 1; i < domains_; ++i) {
    if (domain_names_[i] == name_id) id = i;
  }
  if (id == 0) {
    if (domains_ < format::kMaxDomainIds) {
      id = domains_++;
      domain_names_[id] = name_id;
      RecordDefinition(t, format::rec::Domain{.domain = id, .name = name_id});
    } else {
      id = format::kMaxDomainIds;
      overflow = true;
    }
  }
  pthread_mutex_unlock(&mu_);
  if (overflow) {  // outside the lock: interning takes it
    RecordTimed(t, format::rec::Misuse{.what = static_cast<uint64_t>(format::MisuseKind::kTooManyDomains), .detail = name_id});
    if (!overflow_defined_.exchange(true)) {
      RecordDefinition(t, format::rec::Domain{.domain = id, .name = InternCString(t, "trainprof: NVTX domains over the limit")});
    }
  }
  return id;
}

uint32_t InternBytes(ThreadState* t, const char* s, uint32_t n) {
  uint64_t h = HashBytes(s, n);
  CachedString& c = t->cache[h & (kStringCacheSize - 1)];
  if (c.hash == h && c.len == n && c.data != nullptr && memcmp(c.data, s, n) == 0) return c.id;
  StringTable* table = Rt().strings;
  // From a signal handler that interrupted this thread inside the library: the table's lock may
  // be ours already, and a definition could not be written. The name is lost (id 0), not the event.
  if (table == nullptr || t->in_record || t->in_slow) return 0;
  const char* stored = nullptr;
  t->in_slow = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint32_t id = table->Intern(t, s, n, h, &stored);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->in_slow = 0;
  if (stored != nullptr) c = CachedString{h, stored, n, id};
  return id;
}

uint32_t TryInternBytes(ThreadState* t, const char* s, uint32_t n) {
  StringTable* table = Rt().strings;
  if (table == nullptr || t == nullptr || t->in_record || t->in_slow || n > format::kMaxStringBytes) return 0;
  const char* stored = nullptr;
  t->in_slow = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint32_t id = table->TryIntern(t, s, n, HashBytes(s, n), &stored);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t->in_slow = 0;
  return id;
}

namespace {
void RecordMisuse(ThreadState* t, format::MisuseKind kind, uint64_t detail) {
  RecordTimed(t, format::rec::Misuse{.what = static_cast<uint64_t>(kind), .detail = detail});
}
}  // namespace

uint32_t InternCStringSlow(ThreadState* t, const char* s) {
  if (s == nullptr) {
    RecordMisuse(t, format::MisuseKind::kNullName, 0);
    return 0;
  }
  size_t n = strnlen(s, format::kMaxStringBytes + 1);
  if (n > format::kMaxStringBytes) {
    RecordMisuse(t, format::MisuseKind::kNameTruncated, n);
    n = format::kMaxStringBytes;
    // Cut at a UTF-8 character boundary, not inside a multi-byte character.
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  }
  const uint32_t id = InternBytes(t, s, static_cast<uint32_t>(n));
  // A short name: remembered by its address, with its bytes and NUL (n + 1 of the 16 loaded).
  if (id != 0 && n < 16 && AddressCacheable(s)) {
    const size_t k = n + 1;
    const uint64_t m0 = k >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * k)) - 1;
    const uint64_t m1 = k <= 8 ? 0 : k == 16 ? ~uint64_t{0} : (uint64_t{1} << (8 * (k - 8))) - 1;
    uint64_t w0, w1;
    Load16(s, &w0, &w1);
    AddressSlot(t, s) = CachedAddress{.ptr = s, .w0 = w0 & m0, .w1 = w1 & m1, .m0 = m0, .m1 = m1, .id = id};
  }
  return id;
}

uint32_t InternWide(ThreadState* t, const wchar_t* s) {
  if (s == nullptr) {
    RecordMisuse(t, format::MisuseKind::kNullName, 0);
    return 0;
  }
  char buf[format::kMaxStringBytes];
  uint32_t n = 0;
  for (; *s != 0; ++s) {
    char enc[4];
    const uint32_t k = static_cast<uint32_t>(EncodeUtf8(static_cast<uint32_t>(*s), enc));
    if (n + k > sizeof(buf)) {
      RecordMisuse(t, format::MisuseKind::kNameTruncated, n);
      break;
    }
    memcpy(buf + n, enc, k);
    n += k;
  }
  return InternBytes(t, buf, n);
}

}  // namespace trainprof::inject
