#include "collector/stats/gpu_kernel_stats.h"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>
#include <unordered_map>

#include "collector/base/kernel_names.h"
#include "collector/stats/digest_rows.h"

namespace trainprof::collector {
namespace {

using Dim = LaunchDim;

std::string DimText(const Dim& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// The most frequent configuration (ties: the smallest) and how many there were.
std::pair<Dim, size_t> MostCommon(const std::map<Dim, uint64_t>& counts) {
  Dim best{};
  uint64_t n = 0;
  for (const auto& [dim, count] : counts) {
    if (count > n) {
      best = dim;
      n = count;
    }
  }
  return {best, counts.size()};
}

}  // namespace

std::vector<KernelRow> KernelTable(const std::vector<const CudaDigest*>& images, const StringPool& strings,
                                   bool full_names) {
  struct Samples {
    DurationSummary durations;
    std::map<Dim, uint64_t> grids, blocks;
  };
  using ByName = std::unordered_map<StringId, Samples>;
  auto add = [](ByName& by_name, const KernelSamples& k) {
    Samples& s = by_name[k.name];
    s.durations.Merge(k.time);
    for (const auto& [dim, n] : k.grids) s.grids[dim] += n;
    for (const auto& [dim, n] : k.blocks) s.blocks[dim] += n;
  };
  auto row_of = [&](StringId name, const Samples& s) {
    KernelRow row;
    row.mangled = std::string(strings.Get(name));
    row.name = row.mangled.empty() ? "<unnamed>" : KernelDisplayName(row.mangled, full_names);
    row.time = s.durations.Stats();
    auto [grid, grids] = MostCommon(s.grids);
    auto [block, blocks] = MostCommon(s.blocks);
    row.grid_most_common = DimText(grid);
    row.block_most_common = DimText(block);
    row.grid_variants = grids;
    row.block_variants = blocks;
    row.grid = grids == 1 ? row.grid_most_common : "varies";
    row.block = blocks == 1 ? row.block_most_common : "varies";
    return row;
  };
  std::vector<KernelRow> rows = DigestRows<KernelRow, ByName>(images, &CudaDigest::kernels, add, row_of);
  std::sort(rows.begin(), rows.end(), [](const KernelRow& a, const KernelRow& b) {
    return std::tie(b.time.total, b.time.count, a.mangled) < std::tie(a.time.total, a.time.count, b.mangled);
  });
  // Different kernels with the same display name (template instances, overloads) are numbered in
  // table order: "gemm<...> #1", "gemm<...> #2".
  std::unordered_map<std::string, size_t> seen, total;
  for (const KernelRow& row : rows) ++total[row.name];
  for (KernelRow& row : rows) {
    if (total[row.name] > 1) row.name += " #" + std::to_string(++seen[row.name]);
  }
  return rows;
}

}  // namespace trainprof::collector
