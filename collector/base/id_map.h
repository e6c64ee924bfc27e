// A map from 64-bit ids to values for ids that are mostly dense, such as CUPTI's correlation ids
// (a counter per process that every API call takes the next value of: CUPTI docs,
// CUpti_CallbackData::correlationId and the activity records' correlationId). Dense ids get a flat
// array indexed by `id - lo`: one value and one bit per slot, no allocation per entry. Ids spread
// too thin for that (a damaged or forged trace, several sources mixed) fall back to a hash map, so
// memory stays linear in the entries whatever the ids are.
//
//   IdSpan span;                          // pass 1: which ids, how many
//   for (const CudaCall& c : calls) span.Add(c.correlation);
//   IdMap<uint64_t> begin_of(span);       // pass 2: the values
//   for (const CudaCall& c : calls) begin_of.Emplace(c.correlation, c.begin_ns);
//   if (const uint64_t* b = begin_of.Find(kernel.correlation)) ...
//
// The first value given for an id stays, as with std::unordered_map::emplace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace trainprof::collector {

/// The smallest and largest of a set of ids and how many were added (with repeats).
struct IdSpan {
  uint64_t lo = UINT64_MAX, hi = 0;
  size_t count = 0;
  void Add(uint64_t id) {
    lo = std::min(lo, id);
    hi = std::max(hi, id);
    ++count;
  }
  /// Dense enough for a flat array over [lo, hi]: at most 4 slots per id + 1024 (not empty).
  bool dense() const { return count > 0 && hi - lo < 4 * static_cast<uint64_t>(count) + 1024; }
};

template <typename V>
class IdMap {
 public:
  IdMap() = default;
  /// Ready for the ids of `span`: a flat array when they span at most 4 × their count + 1024
  /// slots, a hash map otherwise. Ids outside the span may still be added (hash map).
  explicit IdMap(const IdSpan& span) {
    if (span.count == 0) return;
    const uint64_t slots = span.hi - span.lo;  // + 1 below, where it cannot overflow
    if (span.dense()) {
      lo_ = span.lo;
      values_.resize(slots + 1);
      used_.resize(slots + 1, false);
    } else {
      sparse_.reserve(span.count);
    }
  }

  /// Adds id → value unless the id has a value already.
  void Emplace(uint64_t id, const V& value) {
    if (id >= lo_ && id - lo_ < values_.size()) {
      const size_t slot = id - lo_;
      if (used_[slot]) return;
      used_[slot] = true;
      values_[slot] = value;
      ++size_;
      return;
    }
    if (sparse_.emplace(id, value).second) ++size_;
  }

  /// The value of `id`, nullptr when it has none.
  const V* Find(uint64_t id) const {
    if (id >= lo_ && id - lo_ < values_.size()) {
      const size_t slot = id - lo_;
      return used_[slot] ? &values_[slot] : nullptr;
    }
    if (sparse_.empty()) return nullptr;
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  uint64_t lo_ = 0;
  std::vector<V> values_;
  std::vector<bool> used_;
  std::unordered_map<uint64_t, V> sparse_;
  size_t size_ = 0;
};

}  // namespace trainprof::collector
