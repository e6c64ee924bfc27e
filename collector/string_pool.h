// Interned strings shared by every trace of one report. Trace files number their strings
// per process image; the reader maps those ids into this pool, so that names compare as integers
// across images, processes and hosts, and each distinct name is stored once.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

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
    auto it = index_.find(s);
    return it == index_.end() ? 0 : it->second;
  }
  std::string_view Get(StringId id) const {
    return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
  }
  size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // a deque never moves its elements: index_ views stay valid
  std::unordered_map<std::string_view, StringId> index_;
};

inline StringId StringPool::Intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  auto id = static_cast<StringId>(strings_.size());
  strings_.emplace_back(s);
  index_.emplace(std::string_view(strings_.back()), id);
  return id;
}

}  // namespace trainprof::collector
