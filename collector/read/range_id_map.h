// A flat hash map from an NVTX range id (uint64) to a value, for the ranges started once and not
// yet ended: the matcher's common case, one insert and one erase per start/end range, with no
// allocation per range (a std::unordered_map of vectors costs a node and a buffer per range). The
// CUDA decoder keeps its open calls by correlation id in one too (cuda_records.h): one insert and
// one erase per call.
// Open addressing with linear probing, at most half full, erase by backward shift (Knuth, TAOCP
// vol. 3, 6.4, Algorithm R), so that no tombstones accumulate. Memory: the ids open at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace trainprof::collector {

template <typename V>
class RangeIdMap {
 public:
  /// The value of `id`, or nullptr. Valid until the next Insert or Erase.
  V* Find(uint64_t id) {
    if (size_ == 0) return nullptr;
    for (size_t i = Home(id);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.id == id) return &s.value;
    }
  }
  /// Adds `id` (which must not be present).
  void Insert(uint64_t id, const V& value) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    size_t i = Home(id);
    while (slots_[i].used) i = (i + 1) & mask_;
    slots_[i] = {id, value, true};
    ++size_;
  }
  /// Adds `id` with a value-initialised value unless it is present (one probe for Find and
  /// Insert): the new value, for the caller to fill in place, or nullptr when `id` was present.
  /// Valid until the next Insert or Erase.
  V* InsertNew(uint64_t id) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    size_t i = Home(id);
    for (; slots_[i].used; i = (i + 1) & mask_) {
      if (slots_[i].id == id) return nullptr;
    }
    Slot& s = slots_[i];
    s.id = id;
    s.value = V{};
    s.used = true;
    ++size_;
    return &s.value;
  }
  /// Removes `id` if present; returns whether it was.
  bool Erase(uint64_t id) {
    if (size_ == 0) return false;
    size_t i = Home(id);
    for (;; i = (i + 1) & mask_) {
      if (!slots_[i].used) return false;
      if (slots_[i].id == id) break;
    }
    // Backward shift: move each later entry of the run into the hole if its home allows it.
    for (size_t j = (i + 1) & mask_; slots_[j].used; j = (j + 1) & mask_) {
      const size_t home = Home(slots_[j].id);
      // j's entry may fill hole i iff home is not cyclically in (i, j].
      const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i].used = false;
    --size_;
    return true;
  }
  size_t size() const { return size_; }
  /// Calls f(id, value&) for every entry, in slot order.
  template <typename F>
  void ForEach(F&& f) {
    for (Slot& s : slots_) {
      if (s.used) f(s.id, s.value);
    }
  }
  template <typename F>
  void ForEach(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.used) f(s.id, s.value);
    }
  }
  /// Removes every entry. The slots stay where they are few (O(slots)), else are given back.
  void Clear() {
    if (size_ == 0) return;
    if (slots_.size() > 1024) {
      slots_ = {};
      mask_ = 0;
    } else {
      for (Slot& s : slots_) s.used = false;
    }
    size_ = 0;
  }

 private:
  struct Slot {
    uint64_t id = 0;
    V value{};
    bool used = false;
  };
  size_t Home(uint64_t id) const {
    uint64_t h = id * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h ^ (h >> 32)) & mask_;
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.used) Insert(s.id, s.value);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace trainprof::collector
