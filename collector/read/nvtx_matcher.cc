#include "collector/read/nvtx_matcher.h"

#include <algorithm>
#include <tuple>

namespace trainprof::collector {

namespace {
uint64_t KeyHash(uint64_t key) {
  key *= 0x9E3779B97F4A7C15ull;
  return key ^ (key >> 29);
}
}  // namespace

uint32_t NvtxMatcher::IndexOfSlow(uint32_t domain, uint32_t name, RangeStyle style) {
  const uint64_t key = uint64_t{domain} << 32 | name;
  const size_t s = static_cast<size_t>(style);
  CacheEntry& c = cache_[s][(key * 0x9E3779B97F4A7C15ull) >> 56];  // kCacheSize = 2^8
  if (c.key == key) return c.value;
  std::vector<uint32_t>& table = index_[s];
  if ((index_used_[s] + 1) * 2 > table.size()) {  // grow: rehash every index by its range's key
    std::vector<uint32_t> grown(std::max<size_t>(64, table.size() * 2), 0);
    for (uint32_t v : table) {
      if (v == 0) continue;
      const RangeKey& k = ranges_[v - 1].key;
      size_t i = KeyHash(uint64_t{k.domain} << 32 | k.name) & (grown.size() - 1);
      while (grown[i] != 0) i = (i + 1) & (grown.size() - 1);
      grown[i] = v;
    }
    table.swap(grown);
  }
  size_t i = KeyHash(key) & (table.size() - 1);
  for (; table[i] != 0; i = (i + 1) & (table.size() - 1)) {
    const RangeKey& k = ranges_[table[i] - 1].key;
    if (k.domain == domain && k.name == name) break;
  }
  if (table[i] == 0) {
    ranges_.push_back({});
    ranges_.back().key = {domain, name, style, false};
    table[i] = static_cast<uint32_t>(ranges_.size());
    ++index_used_[s];
  }
  c = {key, table[i]};
  return table[i];
}

RangeSamples& NvtxMatcher::Slot(uint32_t domain, uint32_t name, RangeStyle style, bool orphan) {
  if (!orphan) return ranges_[IndexOf(domain, name, style) - 1];
  const uint64_t k = uint64_t{domain} << 2 | static_cast<uint64_t>(style);
  uint32_t* cell = &other_index_[k];
  if (*cell == 0) {
    ranges_.push_back({});
    ranges_.back().key = {domain, name, style, orphan};
    *cell = static_cast<uint32_t>(ranges_.size());
  }
  return ranges_[*cell - 1];
}

std::vector<NvtxMatcher::Open>& NvtxMatcher::StackSlow(uint32_t thread, uint32_t domain) {
  const uint64_t key = uint64_t{thread} << 32 | domain;
  StackCacheEntry& c = stack_cache_[(thread * 7 + domain) & (kStackCacheSize - 1)];
  if (c.key != key) {
    c.stack = &stacks_[key];  // node-based map: the vector never moves
    c.key = key;
  }
  return *c.stack;
}

void NvtxMatcher::PopUnbalanced(uint32_t domain) {
  ++Slot(domain, 0, RangeStyle::kPushPop, true).unbalanced;
  ++unbalanced_;
}

void NvtxMatcher::SetPushStack(uint32_t thread, uint32_t domain, uint64_t stack) {
  std::vector<Open>& open = Stack(thread, domain);
  if (!open.empty()) open.back().stack = stack;
}

void NvtxMatcher::SetStartStack(uint64_t range_id, uint64_t stack) {
  if (Open* single = single_starts_.Find(range_id)) {
    single->stack = stack;
    return;
  }
  auto it = open_starts_.find(range_id);
  if (it != open_starts_.end() && !it->second.empty()) it->second.back().stack = stack;
}

void NvtxMatcher::MarkStack(uint32_t domain, uint32_t name, uint64_t stack) {
  AddUse({0, name, domain, stack}, 0, StackUseKind::kMark);
}

void NvtxMatcher::AddUse(const Open& o, uint64_t duration_ns, StackUseKind kind) {
  auto [it, fresh] = use_index_.try_emplace(std::make_tuple(o.domain, o.name, o.stack, kind), uses_.size());
  if (fresh) uses_.push_back({.kind = kind, .domain = o.domain, .name = o.name, .stack = o.stack});
  StackUse& u = uses_[it->second];
  ++u.count;
  u.total_ns += duration_ns;
}

std::vector<StackUse> NvtxMatcher::TakeUses() {
  use_index_.clear();
  return std::move(uses_);
}


void NvtxMatcher::StartSlow(uint32_t domain, uint32_t name, uint64_t range_id, uint64_t time_ns) {
  const Open start{time_ns, name, domain};
  if (!open_starts_.empty()) {
    auto it = open_starts_.find(range_id);
    if (it != open_starts_.end()) {
      it->second.push_back(start);
      return;
    }
  }
  if (Open* single = single_starts_.Find(range_id)) {  // a second start of an open id
    open_starts_[range_id] = {*single, start};
    single_starts_.Erase(range_id);
    return;
  }
  single_starts_.Insert(range_id, start);
}

void NvtxMatcher::EndSlow(uint64_t range_id, uint64_t time_ns) {
  // Only an id started once can be matched at once (End); open_starts_ holds ids started twice
  // or more, matched at Finish.
  if (held_ends_ >= kMaxHeldEnds) {
    ++Slot(0, 0, RangeStyle::kStartEnd, true).unbalanced;
    ++unbalanced_;
    return;
  }
  early_ends_[range_id].push_back(time_ns);  // its start may be on a thread decoded later
  ++held_ends_;
}

void NvtxMatcher::MatchLeftovers(std::vector<Open>* starts, std::vector<uint64_t>* ends) {
  // Time order, a start before an end at the same time; each end closes the latest open start.
  struct Event {
    uint64_t time_ns;
    bool end;
    size_t start;
  };
  std::vector<Event> events;
  for (size_t i = 0; i < starts->size(); ++i) events.push_back({(*starts)[i].time_ns, false, i});
  for (uint64_t t : *ends) events.push_back({t, true, 0});
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.time_ns, a.end) < std::tie(b.time_ns, b.end);
  });
  std::vector<size_t> open;
  for (const Event& e : events) {
    if (!e.end) {
      open.push_back(e.start);
    } else if (open.empty()) {
      ++Slot(0, 0, RangeStyle::kStartEnd, true).unbalanced;
      ++unbalanced_;
    } else {
      const Open& s = (*starts)[open.back()];
      open.pop_back();
      Slot(s.domain, s.name, RangeStyle::kStartEnd, false).durations.Add(e.time_ns - s.time_ns);
      if (s.stack != 0) AddUse(s, e.time_ns - s.time_ns);
    }
  }
  for (size_t i : open) {
    ++Slot((*starts)[i].domain, (*starts)[i].name, RangeStyle::kStartEnd, false).unbalanced;
    ++unbalanced_;
  }
}

NvtxSummary NvtxMatcher::Finish() {
  std::vector<Open> none;
  for (auto& [id, ends] : early_ends_) {
    if (const Open* single = single_starts_.Find(id)) {
      std::vector<Open> one{*single};
      single_starts_.Erase(id);
      MatchLeftovers(&one, &ends);
      continue;
    }
    auto it = open_starts_.find(id);
    MatchLeftovers(it == open_starts_.end() ? &none : &it->second, &ends);
    if (it != open_starts_.end()) open_starts_.erase(it);
  }
  single_starts_.ForEach([&](uint64_t, const Open& s) {
    ++Slot(s.domain, s.name, RangeStyle::kStartEnd, false).unbalanced;
    ++unbalanced_;
  });
  for (auto& [id, starts] : open_starts_) {
    for (const Open& s : starts) {
      ++Slot(s.domain, s.name, RangeStyle::kStartEnd, false).unbalanced;
      ++unbalanced_;
    }
  }
  for (auto& [key, stack] : stacks_) {
    for (const Open& push : stack) {
      ++Slot(push.domain, push.name, RangeStyle::kPushPop, false).unbalanced;
      ++unbalanced_;
    }
  }
  NvtxSummary out;
  out.ranges = std::move(ranges_);
  out.unbalanced = unbalanced_;
  for (const auto& [key, count] : marks_) {
    out.marks.push_back({static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key & 0xffffffffu), count});
  }
  std::vector<StackUse> uses = TakeUses();  // kept for TakeUses after Finish
  *this = NvtxMatcher();
  uses_ = std::move(uses);
  return out;
}

void NvtxSummary::Merge(NvtxSummary&& other) {
  // Sorted by key, equal keys adjacent: merged in place, without an index of every key (a
  // million names would cost a hash-map node each).
  if (ranges.empty()) {
    ranges = std::move(other.ranges);
  } else {
    ranges.reserve(ranges.size() + other.ranges.size());
    for (RangeSamples& r : other.ranges) ranges.push_back(std::move(r));
  }
  other.ranges = {};
  auto key_less = [](const RangeKey& a, const RangeKey& b) {
    return std::tie(a.domain, a.name, a.style, a.orphan) < std::tie(b.domain, b.name, b.style, b.orphan);
  };
  std::sort(ranges.begin(), ranges.end(),
            [&](const RangeSamples& a, const RangeSamples& b) { return key_less(a.key, b.key); });
  size_t kept = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (kept > 0 && ranges[kept - 1].key == ranges[i].key) {
      ranges[kept - 1].durations.Merge(ranges[i].durations);
      ranges[kept - 1].unbalanced += ranges[i].unbalanced;
    } else {
      if (kept != i) ranges[kept] = std::move(ranges[i]);
      ++kept;
    }
  }
  ranges.erase(ranges.begin() + static_cast<std::ptrdiff_t>(kept), ranges.end());
  marks.insert(marks.end(), other.marks.begin(), other.marks.end());
  std::sort(marks.begin(), marks.end(), [](const MarkCount& a, const MarkCount& b) {
    return std::tie(a.domain, a.name) < std::tie(b.domain, b.name);
  });
  kept = 0;
  for (size_t i = 0; i < marks.size(); ++i) {
    if (kept > 0 && marks[kept - 1].domain == marks[i].domain && marks[kept - 1].name == marks[i].name) {
      marks[kept - 1].count += marks[i].count;
    } else {
      marks[kept++] = marks[i];
    }
  }
  marks.resize(kept);
  unbalanced += other.unbalanced;
}

}  // namespace trainprof::collector
