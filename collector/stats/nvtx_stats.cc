#include "collector/stats/nvtx_stats.h"

#include <algorithm>
#include <functional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "collector/base/name_groups.h"
#include "collector/base/sample_stats.h"

namespace trainprof::collector {
namespace {

std::string DisplayName(StringId domain, StringId name, const StringPool& strings) {
  std::string n = name == 0 || strings.Get(name).empty() ? "<unnamed>" : std::string(strings.Get(name));
  if (domain == 0 || strings.Get(domain).empty()) return n;
  return std::string(strings.Get(domain)) + ":" + n;
}

// A display name as up to three pieces (domain, ":", name), to compare without building it.
struct NameParts {
  std::string_view part[3];
};
NameParts PartsOf(const RangeKey& key, const StringPool& strings) {
  NameParts p;
  std::string_view name;
  if (key.orphan) {
    name = key.style == RangeStyle::kPushPop ? "<pop without push>" : "<end without start>";
  } else {
    name = key.name == 0 || strings.Get(key.name).empty() ? std::string_view("<unnamed>") : strings.Get(key.name);
  }
  if (key.domain != 0 && !strings.Get(key.domain).empty()) {
    p.part[0] = strings.Get(key.domain);
    p.part[1] = ":";
  }
  p.part[2] = name;
  return p;
}
// Lexicographic comparison of the concatenations (byte order, as std::string's <).
int CompareParts(const NameParts& a, const NameParts& b) {
  size_t ai = 0, ao = 0, bi = 0, bo = 0;
  for (;;) {
    while (ai < 3 && ao >= a.part[ai].size()) ++ai, ao = 0;
    while (bi < 3 && bo >= b.part[bi].size()) ++bi, bo = 0;
    if (ai == 3 || bi == 3) return ai == 3 ? (bi == 3 ? 0 : -1) : 1;
    const auto ca = static_cast<unsigned char>(a.part[ai][ao]), cb = static_cast<unsigned char>(b.part[bi][bo]);
    if (ca != cb) return ca < cb ? -1 : 1;
    ++ao, ++bo;
  }
}

uint64_t GroupHash(std::string_view pattern, const RangeKey& key) {
  uint64_t h = std::hash<std::string_view>()(pattern);
  h ^= (uint64_t{key.domain} << 1 | static_cast<uint64_t>(key.style)) * 0x9E3779B97F4A7C15ull;
  return h * 0xbf58476d1ce4e5b9ull;
}

}  // namespace

const char* RangeStyleName(RangeStyle style) { return style == RangeStyle::kStartEnd ? "start/end" : "push/pop"; }

std::string RangeDisplayName(const RangeKey& key, const StringPool& strings) {
  if (key.orphan) {
    std::string what = key.style == RangeStyle::kPushPop ? "<pop without push>" : "<end without start>";
    if (key.domain != 0 && !strings.Get(key.domain).empty()) return std::string(strings.Get(key.domain)) + ":" + what;
    return what;
  }
  return DisplayName(key.domain, key.name, strings);
}

std::string MarkDisplayName(const MarkCount& mark, const StringPool& strings) {
  return DisplayName(mark.domain, mark.name, strings);
}

NvtxProcessData CollectNvtx(const Process& process) {
  if (process.images.size() == 1) return process.images.front().nvtx_summary;
  NvtxProcessData out;
  for (const TraceImage& img : process.images) out.Merge(img.nvtx_summary);
  return out;
}

NvtxProcessData TakeNvtx(Process* process) {
  NvtxProcessData out;
  for (TraceImage& img : process->images) {
    if (process->images.size() == 1) {
      out = std::move(img.nvtx_summary);
    } else {
      out.Merge(std::move(img.nvtx_summary));
    }
    img.nvtx_summary = {};
  }
  return out;
}

RangeStats Summarize(const RangeKey& key, const DurationSummary& d, uint64_t unbalanced, uint64_t wall_ns) {
  RangeStats s;
  s.key = key;
  s.unbalanced = unbalanced;
  s.wall_ns = wall_ns;
  s.time = d.Stats();
  s.percent = Percent(static_cast<double>(s.time.total), static_cast<double>(wall_ns));
  return s;
}

RangeStats Summarize(const RangeEntry& e) {
  RangeStats s = Summarize(e.key, e.durations, e.unbalanced, e.wall_ns);
  s.names = e.names;
  return s;
}

std::vector<RangeEntry> ProcessEntries(NvtxProcessData* data, uint64_t wall_ns) {
  std::vector<RangeEntry> out = std::move(data->ranges);  // no copy: a million names are 100 MB
  data->ranges = {};
  for (RangeEntry& e : out) e.wall_ns = wall_ns;
  return out;
}

std::vector<RangeEntry> MergedEntries(const std::vector<std::vector<RangeEntry>>& per_process,
                                      const NameGroups* groups, uint64_t wall_ns) {
  std::unordered_map<RangeKey, size_t, RangeKeyHash> index;
  std::vector<RangeEntry> out;
  for (const std::vector<RangeEntry>& table : per_process) {
    for (const RangeEntry& e : table) {
      auto [it, inserted] = index.try_emplace(e.key, out.size());
      if (inserted) {
        out.push_back(e);
        continue;
      }
      RangeEntry& m = out[it->second];
      m.durations.Merge(e.durations);
      m.unbalanced += e.unbalanced;
    }
  }
  for (RangeEntry& e : out) e.wall_ns = wall_ns;
  if (groups != nullptr) {
    for (RangeEntry& e : out) {
      if (uint64_t n = groups->NamesOf(e.key.name); n > 0 && !e.key.orphan) e.names = static_cast<uint32_t>(n);
    }
  }
  return out;
}

NameGroups::NameGroups(const std::vector<const std::vector<RangeEntry>*>& tables, StringPool* strings) {
  // Pass 1: distinct names per pattern hash (64 bits: a collision only keeps a name ungrouped,
  // checked against the group's pattern when it is applied).
  struct Count {
    uint64_t names = 0;
    uint64_t calls = 0;
    const RangeEntry* first = nullptr;
  };
  std::unordered_map<uint64_t, Count> counts;
  std::unordered_set<RangeKey, RangeKeyHash> seen;  // only with several tables
  std::string pattern;
  for (const std::vector<RangeEntry>* table : tables) {
    for (const RangeEntry& e : *table) {
      const RangeKey& k = e.key;
      if (k.orphan || k.name == 0 || !NamePattern(strings->Get(k.name), &pattern)) continue;
      Count& c = counts[GroupHash(pattern, k)];
      c.calls += e.durations.count();
      if (tables.size() > 1 && !seen.insert(k).second) continue;
      if (c.names++ == 0) c.first = &e;
    }
  }
  seen = {};
  for (const auto& [hash, c] : counts) {
    if (!GroupsNames(c.names, c.calls)) continue;
    NamePattern(strings->Get(c.first->key.name), &pattern);
    by_hash_.emplace(hash, static_cast<uint32_t>(groups_.size()));
    groups_.push_back({strings->Intern(pattern), c.names});
    names_of_[groups_.back().pattern] += c.names;
  }
}

uint64_t NameGroups::NamesOf(StringId pattern_id) const {
  auto it = names_of_.find(pattern_id);
  return it == names_of_.end() ? 0 : it->second;
}

void NameGroups::Apply(std::vector<RangeEntry>* entries, const StringPool& strings) const {
  if (groups_.empty()) return;
  std::unordered_map<RangeKey, size_t, RangeKeyHash> group_entry;  // group key → index in out
  std::vector<RangeEntry> grouped;
  std::string pattern;
  size_t kept = 0;
  for (size_t i = 0; i < entries->size(); ++i) {
    RangeEntry& e = (*entries)[i];
    const RangeKey& k = e.key;
    bool into_group = false;
    if (!k.orphan && k.name != 0 && NamePattern(strings.Get(k.name), &pattern)) {
      auto g = by_hash_.find(GroupHash(pattern, k));
      if (g != by_hash_.end() && strings.Get(groups_[g->second].pattern) == pattern) {
        RangeKey gk = k;
        gk.name = groups_[g->second].pattern;
        auto [it, inserted] = group_entry.try_emplace(gk, grouped.size());
        if (inserted) {
          RangeEntry g;
          g.key = gk;
          g.durations = std::move(e.durations);
          g.unbalanced = e.unbalanced;
          g.wall_ns = e.wall_ns;
          grouped.push_back(std::move(g));
        } else {
          RangeEntry& into = grouped[it->second];
          into.durations.Merge(e.durations);
          into.unbalanced += e.unbalanced;
          ++into.names;
        }
        into_group = true;
      }
    }
    if (!into_group) {
      if (kept != i) (*entries)[kept] = std::move(e);
      ++kept;
    }
  }
  entries->resize(kept);
  if (kept * 2 < entries->capacity()) entries->shrink_to_fit();  // a million names gone into a few groups
  for (RangeEntry& g : grouped) entries->push_back(std::move(g));
}

std::vector<uint32_t> DisplayOrder(const std::vector<RangeEntry>& entries, const StringPool& strings) {
  std::vector<uint32_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  // Keys are distinct, so the order is total: std::sort is deterministic.
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    const RangeSamples &a = entries[x], &b = entries[y];
    const uint64_t ta = a.durations.total(), tb = b.durations.total();
    if (ta != tb) return ta > tb;
    if (a.durations.count() != b.durations.count()) return a.durations.count() > b.durations.count();
    if (a.unbalanced != b.unbalanced) return a.unbalanced > b.unbalanced;
    const int c = CompareParts(PartsOf(a.key, strings), PartsOf(b.key, strings));
    if (c != 0) return c < 0;
    return std::tie(a.key.style, a.key.orphan) < std::tie(b.key.style, b.key.orphan);
  });
  return order;
}

std::vector<MarkCount> MergedMarks(const std::vector<const NvtxProcessData*>& per_process, const StringPool& strings) {
  std::unordered_map<uint64_t, uint64_t> counts;
  for (const NvtxProcessData* p : per_process) {
    for (const MarkCount& m : p->marks) counts[uint64_t{m.domain} << 32 | m.name] += m.count;
  }
  std::vector<MarkCount> out;
  for (const auto& [k, count] : counts) {
    out.push_back({static_cast<StringId>(k >> 32), static_cast<StringId>(k & 0xffffffffu), count});
  }
  std::sort(out.begin(), out.end(), [&](const MarkCount& a, const MarkCount& b) {
    if (a.count != b.count) return a.count > b.count;
    return MarkDisplayName(a, strings) < MarkDisplayName(b, strings);
  });
  return out;
}

}  // namespace trainprof::collector
