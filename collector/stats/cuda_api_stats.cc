#include "collector/stats/cuda_api_stats.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "collector/model/cuda_calls.h"

namespace trainprof::collector {

std::vector<CudaApiRow> CudaApiTable(const std::vector<const CudaDigest*>& images, const StringPool& strings) {
  struct Samples {
    DurationSummary durations;
    uint64_t errors = 0;
    uint64_t unfinished = 0;
  };
  std::map<std::pair<std::string, std::string>, Samples> by_name;  // (name, api) → samples
  std::unordered_map<StringId, std::string> display;               // recorded name → display name
  for (const CudaDigest* digest : images) {
    for (const CudaApiSamples& c : digest->api()) {
      auto [it, inserted] = display.try_emplace(c.name);
      if (inserted) it->second = c.name == 0 ? "<unnamed>" : CudaApiDisplayName(strings.Get(c.name));
      Samples& s = by_name[{it->second, c.api == format::CudaApi::kDriver ? "driver" : "runtime"}];
      s.durations.Merge(c.time);
      s.errors += c.errors;
      s.unfinished += c.unfinished;
    }
  }
  std::vector<CudaApiRow> rows;
  for (auto& [key, s] : by_name) {
    CudaApiRow row;
    row.name = key.first;
    row.api = key.second;
    row.time = s.durations.Stats();
    row.errors = s.errors;
    row.unfinished = s.unfinished;
    rows.push_back(std::move(row));
  }
  SetTimeShares(&rows);
  std::stable_sort(rows.begin(), rows.end(), [](const CudaApiRow& a, const CudaApiRow& b) {
    return std::make_tuple(b.time.total, b.time.count, b.unfinished) <
           std::make_tuple(a.time.total, a.time.count, a.unfinished);
  });
  return rows;
}

}  // namespace trainprof::collector
