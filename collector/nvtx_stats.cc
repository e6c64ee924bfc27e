#include "collector/nvtx_stats.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "collector/sample_stats.h"

namespace trainprof::collector {
namespace {

struct RangeKeyHash {
  size_t operator()(const RangeKey& k) const {
    uint64_t h = (uint64_t{k.domain} << 32) ^ k.name;
    h ^= (static_cast<uint64_t>(k.style) << 1 | static_cast<uint64_t>(k.orphan)) * 0x9E3779B97F4A7C15ull;
    return std::hash<uint64_t>()(h * 0xbf58476d1ce4e5b9ull);
  }
};

std::string DisplayName(StringId domain, StringId name, const StringPool& strings) {
  std::string n = name == 0 || strings.Get(name).empty() ? "<unnamed>" : std::string(strings.Get(name));
  if (domain == 0 || strings.Get(domain).empty()) return n;
  return std::string(strings.Get(domain)) + ":" + n;
}

// Total time descending, then calls, then name: a stable, readable order.
void SortTable(std::vector<RangeStats>* table, const StringPool& strings) {
  std::stable_sort(table->begin(), table->end(), [&](const RangeStats& a, const RangeStats& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.calls != b.calls) return a.calls > b.calls;
    if (a.unbalanced != b.unbalanced) return a.unbalanced > b.unbalanced;
    return std::make_tuple(RangeDisplayName(a.key, strings), a.key.style, a.key.orphan) <
           std::make_tuple(RangeDisplayName(b.key, strings), b.key.style, b.key.orphan);
  });
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
  std::unordered_map<RangeKey, RangeSamples, RangeKeyHash> ranges;
  std::unordered_map<uint64_t, uint64_t> marks;  // domain << 32 | name → count
  uint64_t unbalanced = 0;
  auto samples = [&](const RangeKey& key) -> RangeSamples& {
    RangeSamples& s = ranges[key];
    s.key = key;
    return s;
  };

  for (const TraceImage& img : process.images) {
    // Push/pop: a stack per (thread, domain). Records of one thread are in record order.
    std::unordered_map<uint64_t, std::vector<const NvtxEvent*>> stacks;
    // Start/end: matched after the loop, by id, over every thread.
    std::vector<const NvtxEvent*> start_end;
    for (const NvtxEvent& e : img.nvtx) {
      switch (e.kind()) {
        case NvtxKind::kPush:
          stacks[uint64_t{e.thread} << 32 | e.domain].push_back(&e);
          break;
        case NvtxKind::kPop: {
          auto& stack = stacks[uint64_t{e.thread} << 32 | e.domain];
          if (stack.empty()) {
            ++samples({e.domain, 0, RangeStyle::kPushPop, true}).unbalanced;
            ++unbalanced;
            break;
          }
          const NvtxEvent* push = stack.back();
          stack.pop_back();
          samples({push->domain, push->name, RangeStyle::kPushPop, false})
              .durations.push_back(e.time_ns >= push->time_ns ? e.time_ns - push->time_ns : 0);
          break;
        }
        case NvtxKind::kMark:
          ++marks[uint64_t{e.domain} << 32 | e.name];
          break;
        case NvtxKind::kStart:
        case NvtxKind::kEnd:
          start_end.push_back(&e);
          break;
      }
    }
    for (auto& [k, stack] : stacks) {
      for (const NvtxEvent* push : stack) {
        ++samples({push->domain, push->name, RangeStyle::kPushPop, false}).unbalanced;
        ++unbalanced;
      }
    }
    // By id, then time; a start sorts before an end at the same time.
    std::sort(start_end.begin(), start_end.end(), [](const NvtxEvent* a, const NvtxEvent* b) {
      return std::make_tuple(a->range_id, a->time_ns, a->kind() == NvtxKind::kEnd) <
             std::make_tuple(b->range_id, b->time_ns, b->kind() == NvtxKind::kEnd);
    });
    std::vector<const NvtxEvent*> open;
    for (size_t i = 0; i < start_end.size();) {
      size_t j = i;
      open.clear();
      for (; j < start_end.size() && start_end[j]->range_id == start_end[i]->range_id; ++j) {
        const NvtxEvent* e = start_end[j];
        if (e->kind() == NvtxKind::kStart) {
          open.push_back(e);
        } else if (open.empty()) {
          ++samples({0, 0, RangeStyle::kStartEnd, true}).unbalanced;
          ++unbalanced;
        } else {
          const NvtxEvent* start = open.back();
          open.pop_back();
          samples({start->domain, start->name, RangeStyle::kStartEnd, false}).durations.push_back(e->time_ns - start->time_ns);
        }
      }
      for (const NvtxEvent* start : open) {
        ++samples({start->domain, start->name, RangeStyle::kStartEnd, false}).unbalanced;
        ++unbalanced;
      }
      i = j;
    }
  }

  NvtxProcessData out;
  out.unbalanced = unbalanced;
  out.ranges.reserve(ranges.size());
  for (auto& [key, s] : ranges) out.ranges.push_back(std::move(s));
  for (const auto& [k, count] : marks) {
    out.marks.push_back({static_cast<StringId>(k >> 32), static_cast<StringId>(k & 0xffffffffu), count});
  }
  return out;
}

RangeStats Summarize(const RangeKey& key, std::vector<uint64_t>* durations, uint64_t unbalanced, uint64_t wall_ns) {
  RangeStats s;
  s.key = key;
  s.unbalanced = unbalanced;
  s.wall_ns = wall_ns;
  const SampleStats d = SummarizeSample(durations);
  s.calls = d.count;
  s.total_ns = d.total;
  s.min_ns = d.min;
  s.max_ns = d.max;
  s.mean_ns = d.mean;
  s.std_ns = d.std;
  s.median_ns = d.median;
  s.percent = wall_ns > 0 ? static_cast<double>(d.total) * 100.0 / static_cast<double>(wall_ns) : 0.0;
  return s;
}

std::vector<RangeStats> RangeTable(NvtxProcessData* data, uint64_t wall_ns, const StringPool& strings) {
  std::vector<RangeStats> table;
  table.reserve(data->ranges.size());
  for (RangeSamples& r : data->ranges) table.push_back(Summarize(r.key, &r.durations, r.unbalanced, wall_ns));
  SortTable(&table, strings);
  return table;
}

std::vector<RangeStats> MergedRangeTable(const std::vector<NvtxProcessData>& per_process,
                                         const std::vector<uint64_t>& wall_ns, const StringPool& strings) {
  struct Merged {
    std::vector<uint64_t> durations;
    uint64_t unbalanced = 0;
    uint64_t wall_ns = 0;
  };
  std::unordered_map<RangeKey, Merged, RangeKeyHash> merged;
  for (size_t p = 0; p < per_process.size(); ++p) {
    for (const RangeSamples& r : per_process[p].ranges) {
      Merged& m = merged[r.key];
      m.durations.insert(m.durations.end(), r.durations.begin(), r.durations.end());
      m.unbalanced += r.unbalanced;
      m.wall_ns += p < wall_ns.size() ? wall_ns[p] : 0;
    }
  }
  std::vector<RangeStats> table;
  table.reserve(merged.size());
  for (auto& [key, m] : merged) table.push_back(Summarize(key, &m.durations, m.unbalanced, m.wall_ns));
  SortTable(&table, strings);
  return table;
}

std::vector<MarkCount> MergedMarks(const std::vector<NvtxProcessData>& per_process, const StringPool& strings) {
  std::unordered_map<uint64_t, uint64_t> counts;
  for (const NvtxProcessData& p : per_process) {
    for (const MarkCount& m : p.marks) counts[uint64_t{m.domain} << 32 | m.name] += m.count;
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
