#include "collector/stats/gpu_memory_stats.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "collector/model/cuda_calls.h"
#include "collector/stats/digest_rows.h"

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
  using ByKind = std::map<std::string, Samples>;
  auto add = [](ByKind& by_kind, const MemoryOpSamples& m) {
    const std::string kind = m.memset ? "" : MemcpyKindName(m.kind);
    Samples& s = by_kind[m.memset ? "memset" : "memcpy_" + Lower(kind)];
    s.label = m.memset ? "memset" : "memcpy " + kind;
    s.durations.Merge(m.time);
    s.sizes.Merge(m.size);
    s.pageable_count += m.pageable_count;
    s.pageable_bytes += m.pageable_bytes;
  };
  auto row_of = [](const std::string& kind, const Samples& s) {
    MemoryOpRow row{.kind = kind, .label = s.label, .time = s.durations.Stats(), .size = s.sizes.Stats(),
                    .pageable_count = s.pageable_count, .pageable_bytes = s.pageable_bytes};
    if (row.time.total > 0) {
      row.bandwidth_gbps = static_cast<double>(row.size.total) / static_cast<double>(row.time.total);
    }
    return row;
  };
  std::vector<MemoryOpRow> rows = DigestRows<MemoryOpRow, ByKind>(images, &CudaDigest::memory, add, row_of);
  std::stable_sort(rows.begin(), rows.end(), [](const MemoryOpRow& a, const MemoryOpRow& b) {
    return std::tie(b.time.total, b.time.count) < std::tie(a.time.total, a.time.count);
  });
  return rows;
}

}  // namespace trainprof::collector
