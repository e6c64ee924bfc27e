#include "collector/stats/gpu_memory_stats.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "collector/model/cuda_calls.h"

namespace trainprof::collector {
namespace {

struct Samples {
  std::string label;
  DurationSummary durations, sizes;
  uint64_t pageable_count = 0, pageable_bytes = 0;
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (char& c : s) c = c == ' ' ? '_' : c;
  return s;
}

}  // namespace

std::vector<MemoryOpRow> MemoryTable(const std::vector<const CudaDigest*>& images) {
  std::map<std::string, Samples> by_kind;
  for (const CudaDigest* digest : images) {
    for (const MemoryOpSamples& m : digest->memory()) {
      const std::string kind = m.memset ? "" : MemcpyKindName(m.kind);
      Samples& s = by_kind[m.memset ? "memset" : "memcpy_" + Lower(kind)];
      s.label = m.memset ? "memset" : "memcpy " + kind;
      s.durations.Merge(m.time);
      s.sizes.Merge(m.size);
      s.pageable_count += m.pageable_count;
      s.pageable_bytes += m.pageable_bytes;
    }
  }
  std::vector<MemoryOpRow> rows;
  for (auto& [kind, s] : by_kind) {
    MemoryOpRow row;
    row.kind = kind;
    row.label = s.label;
    row.time = s.durations.Stats();
    row.size = s.sizes.Stats();
    if (row.time.total > 0) {
      row.bandwidth_gbps = static_cast<double>(row.size.total) / static_cast<double>(row.time.total);
    }
    row.pageable_count = s.pageable_count;
    row.pageable_bytes = s.pageable_bytes;
    rows.push_back(std::move(row));
  }
  SetTimeShares(&rows);
  std::stable_sort(rows.begin(), rows.end(), [](const MemoryOpRow& a, const MemoryOpRow& b) {
    return std::tie(b.time.total, b.time.count) < std::tie(a.time.total, a.time.count);
  });
  return rows;
}

}  // namespace trainprof::collector
