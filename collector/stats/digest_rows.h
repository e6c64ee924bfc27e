// The skeleton every CUDA table built from per-image digests (model/cuda_digest.h) shares: sums
// per key over the images, one row per key, each row's share of the table's time.
#pragma once

#include <vector>

#include "collector/base/sample_stats.h"
#include "collector/model/cuda_digest.h"

namespace trainprof::collector {

/// The rows of one CUDA table over `images`: `add(by_key, entry)` sums each entry `entries` names
/// (e.g. &CudaDigest::kernels) of every image's digest into `by_key` (a map: key → sums), then
/// `row(key, sums)` makes one Row per key, in the map's order, and SetTimeShares sets their shares
/// of the table's time. The caller sorts.
template <typename Row, typename Map, typename Entries, typename Add, typename MakeRow>
std::vector<Row> DigestRows(const std::vector<const CudaDigest*>& images, Entries entries, Add add, MakeRow row) {
  Map by_key;
  for (const CudaDigest* digest : images) {
    for (const auto& entry : (digest->*entries)()) add(by_key, entry);
  }
  std::vector<Row> rows;
  rows.reserve(by_key.size());
  for (auto& [key, sums] : by_key) rows.push_back(row(key, sums));
  SetTimeShares(&rows);
  return rows;
}

}  // namespace trainprof::collector
