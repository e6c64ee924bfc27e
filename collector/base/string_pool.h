// Interned strings shared by every trace of one report. Trace files number their strings
// per process image; the reader maps those ids into this pool, so that names compare as integers
// across images, processes and hosts, and each distinct name is stored once.
//
// Memory: a string's bytes, a 16-byte view and an 8-byte share of the index (open addressing,
// at most half full, slots holding ids): a million names of 12 bytes are ~40 MB, not a
// std::string and a hash-map node each (~100 MB).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace trainprof::collector {

/// Index into a StringPool. 0 is always the empty string ("no name").
using StringId = uint32_t;

class StringPool {
 public:
  StringPool() { Intern(""); }
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  StringId Intern(std::string_view s);
  /// Id of `s` if it was interned, else 0 ("" is always 0).
  StringId Find(std::string_view s) const {
    if (table_.empty()) return 0;
    for (size_t i = Hash(s) & (table_.size() - 1);; i = (i + 1) & (table_.size() - 1)) {
      if (table_[i] == 0) return 0;
      if (views_[table_[i] - 1] == s) return table_[i] - 1;
    }
  }
  std::string_view Get(StringId id) const { return id < views_.size() ? views_[id] : std::string_view(); }
  size_t size() const { return views_.size(); }

 private:
  static constexpr size_t kBlockBytes = 64 << 10;
  static size_t Hash(std::string_view s) { return std::hash<std::string_view>()(s) * 0x9E3779B97F4A7C15ull >> 7; }
  std::string_view Store(std::string_view s);
  void Grow();

  // Bytes in blocks that never move (a string longer than a block gets its own), so views stay valid.
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_left_ = 0;
  char* block_at_ = nullptr;
  std::deque<std::string_view> views_;  // by id; a deque grows without copying
  std::vector<uint32_t> table_;         // id + 1, 0 = empty slot; size a power of two
};

inline std::string_view StringPool::Store(std::string_view s) {
  if (s.empty()) return {};
  if (s.size() > kBlockBytes / 4) {
    blocks_.push_back(std::make_unique<char[]>(s.size()));
    std::memcpy(blocks_.back().get(), s.data(), s.size());
    return {blocks_.back().get(), s.size()};
  }
  if (s.size() > block_left_) {
    blocks_.push_back(std::make_unique<char[]>(kBlockBytes));
    block_at_ = blocks_.back().get();
    block_left_ = kBlockBytes;
  }
  std::memcpy(block_at_, s.data(), s.size());
  std::string_view v(block_at_, s.size());
  block_at_ += s.size();
  block_left_ -= s.size();
  return v;
}

inline void StringPool::Grow() {
  std::vector<uint32_t> grown(std::max<size_t>(64, table_.size() * 2), 0);
  for (size_t id = 0; id < views_.size(); ++id) {
    size_t i = Hash(views_[id]) & (grown.size() - 1);
    while (grown[i] != 0) i = (i + 1) & (grown.size() - 1);
    grown[i] = static_cast<uint32_t>(id + 1);
  }
  table_.swap(grown);
}

inline StringId StringPool::Intern(std::string_view s) {
  if ((views_.size() + 1) * 2 > table_.size()) Grow();
  size_t i = Hash(s) & (table_.size() - 1);
  for (; table_[i] != 0; i = (i + 1) & (table_.size() - 1)) {
    if (views_[table_[i] - 1] == s) return table_[i] - 1;
  }
  const auto id = static_cast<StringId>(views_.size());
  views_.push_back(Store(s));
  table_[i] = id + 1;
  return id;
}

}  // namespace trainprof::collector
