#include "collector/nvtx_stats.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "collector/sample_stats.h"

namespace trainprof::collector {
namespace {

std::string DisplayName(StringId domain, StringId name, const StringPool& strings) {
  std::string n = name == 0 || strings.Get(name).empty() ? "<unnamed>" : std::string(strings.Get(name));
  if (domain == 0 || strings.Get(domain).empty()) return n;
  return std::string(strings.Get(domain)) + ":" + n;
}

// Total time descending, then calls, then name: a stable, readable order.
// (Display names are made once per row: a table of 100k names has many ties.)
void SortTable(std::vector<RangeStats>* table, const StringPool& strings) {
  std::vector<std::pair<std::string, RangeStats>> rows;
  rows.reserve(table->size());
  for (RangeStats& s : *table) rows.emplace_back(RangeDisplayName(s.key, strings), std::move(s));
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    const RangeStats &a = x.second, &b = y.second;
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.calls != b.calls) return a.calls > b.calls;
    if (a.unbalanced != b.unbalanced) return a.unbalanced > b.unbalanced;
    return std::tie(x.first, a.key.style, a.key.orphan) < std::tie(y.first, b.key.style, b.key.orphan);
  });
  for (size_t i = 0; i < rows.size(); ++i) (*table)[i] = std::move(rows[i].second);
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

RangeStats Summarize(const RangeKey& key, const DurationSummary& d, uint64_t unbalanced, uint64_t wall_ns) {
  RangeStats s;
  s.key = key;
  s.unbalanced = unbalanced;
  s.wall_ns = wall_ns;
  const SampleStats st = d.Stats();
  s.calls = st.count;
  s.total_ns = st.total;
  s.min_ns = st.min;
  s.max_ns = st.max;
  s.mean_ns = st.mean;
  s.std_ns = st.std;
  s.median_ns = st.median;
  s.median_exact = d.exact();
  s.percent = wall_ns > 0 ? static_cast<double>(st.total) * 100.0 / static_cast<double>(wall_ns) : 0.0;
  return s;
}

std::vector<RangeStats> RangeTable(NvtxProcessData* data, uint64_t wall_ns, const StringPool& strings) {
  std::vector<RangeStats> table;
  table.reserve(data->ranges.size());
  for (RangeSamples& r : data->ranges) table.push_back(Summarize(r.key, r.durations, r.unbalanced, wall_ns));
  SortTable(&table, strings);
  return table;
}

std::vector<RangeStats> MergedRangeTable(const std::vector<NvtxProcessData>& per_process,
                                         const std::vector<uint64_t>& wall_ns, const StringPool& strings) {
  struct Merged {
    DurationSummary durations;
    uint64_t unbalanced = 0;
    uint64_t wall_ns = 0;
  };
  std::unordered_map<RangeKey, Merged, RangeKeyHash> merged;
  for (size_t p = 0; p < per_process.size(); ++p) {
    for (const RangeSamples& r : per_process[p].ranges) {
      Merged& m = merged[r.key];
      m.durations.Merge(r.durations);
      m.unbalanced += r.unbalanced;
      m.wall_ns += p < wall_ns.size() ? wall_ns[p] : 0;
    }
  }
  std::vector<RangeStats> table;
  table.reserve(merged.size());
  for (auto& [key, m] : merged) table.push_back(Summarize(key, m.durations, m.unbalanced, m.wall_ns));
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
