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
  std::vector<uint64_t> durations, sizes;
  uint64_t pageable_count = 0, pageable_bytes = 0;
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (char& c : s) c = c == ' ' ? '_' : c;
  return s;
}

}  // namespace

std::vector<MemoryOpRow> MemoryTable(const std::vector<const CudaData*>& images) {
  std::map<std::string, Samples> by_kind;
  for (const CudaData* data : images) {
    for (const GpuMemcpy& m : data->memcpys) {
      const std::string kind = MemcpyKindName(m.kind);
      Samples& s = by_kind["memcpy_" + Lower(kind)];
      s.label = "memcpy " + kind;
      s.durations.push_back(m.duration());
      s.sizes.push_back(m.bytes);
      if (m.pageable()) {
        ++s.pageable_count;
        s.pageable_bytes += m.bytes;
      }
    }
    for (const GpuMemset& m : data->memsets) {
      Samples& s = by_kind["memset"];
      s.label = "memset";
      s.durations.push_back(m.duration());
      s.sizes.push_back(m.bytes);
    }
  }
  std::vector<MemoryOpRow> rows;
  for (auto& [kind, s] : by_kind) {
    MemoryOpRow row;
    row.kind = kind;
    row.label = s.label;
    row.time = SummarizeSample(&s.durations);
    row.size = SummarizeSample(&s.sizes);
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
