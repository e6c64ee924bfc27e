#include "collector/stats/cuda_api_stats.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "collector/model/cuda_calls.h"
#include "collector/stats/digest_rows.h"

namespace trainprof::collector {

std::vector<CudaApiRow> CudaApiTable(const std::vector<const CudaDigest*>& images, const StringPool& strings) {
  struct Samples {
    DurationSummary durations;
    uint64_t errors = 0;
    uint64_t unfinished = 0;
  };
  using ByName = std::map<std::pair<std::string, std::string>, Samples>;  // (name, api) → samples
  std::unordered_map<StringId, std::string> display;                      // recorded name → display name
  auto add = [&](ByName& by_name, const CudaApiSamples& c) {
    auto [it, inserted] = display.try_emplace(c.name);
    if (inserted) it->second = c.name == 0 ? "<unnamed>" : CudaApiDisplayName(strings.Get(c.name));
    Samples& s = by_name[{it->second, c.api == format::CudaApi::kDriver ? "driver" : "runtime"}];
    s.durations.Merge(c.time);
    s.errors += c.errors;
    s.unfinished += c.unfinished;
  };
  auto row_of = [](const std::pair<std::string, std::string>& key, const Samples& s) {
    return CudaApiRow{.name = key.first, .api = key.second, .time = s.durations.Stats(), .errors = s.errors,
                      .unfinished = s.unfinished};
  };
  std::vector<CudaApiRow> rows = DigestRows<CudaApiRow, ByName>(images, &CudaDigest::api, add, row_of);
  std::stable_sort(rows.begin(), rows.end(), [](const CudaApiRow& a, const CudaApiRow& b) {
    return std::make_tuple(b.time.total, b.time.count, b.unfinished) <
           std::make_tuple(a.time.total, a.time.count, a.unfinished);
  });
  return rows;
}

}  // namespace trainprof::collector
