// Stable sorting of data that is mostly in order already: GPU records come in order per stream
// and per CUPTI buffer, so a device's kernels, copies and memsets appended one after another are a
// handful of sorted runs. Merging the runs costs O(n log runs) where a general sort costs
// O(n log n) (the report's interval unions spent ~10% of a CUDA report's CPU time in std::sort).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace trainprof::collector {

/// Sorts `v` by `less`, stably (equal elements keep their order). Up to kMaxRuns maximal sorted
/// runs are merged pairwise (std::inplace_merge); more fall back to std::stable_sort.
template <typename T, typename Less>
void SortRuns(std::vector<T>& v, Less less) {
  constexpr size_t kMaxRuns = 64;
  std::vector<size_t> bounds{0};  // run i is [bounds[i], bounds[i + 1])
  for (size_t i = 1; i < v.size(); ++i) {
    if (!less(v[i], v[i - 1])) continue;
    if (bounds.size() == kMaxRuns) {
      std::stable_sort(v.begin(), v.end(), less);
      return;
    }
    bounds.push_back(i);
  }
  bounds.push_back(v.size());
  while (bounds.size() > 2) {  // more than one run: merge neighbours, halving the runs
    std::vector<size_t> merged{0};
    for (size_t i = 0; i + 1 < bounds.size(); i += 2) {
      if (i + 2 < bounds.size()) {
        std::inplace_merge(v.begin() + static_cast<std::ptrdiff_t>(bounds[i]),
                           v.begin() + static_cast<std::ptrdiff_t>(bounds[i + 1]),
                           v.begin() + static_cast<std::ptrdiff_t>(bounds[i + 2]), less);
        merged.push_back(bounds[i + 2]);
      } else {
        merged.push_back(bounds[i + 1]);  // an odd run out: as it is
      }
    }
    bounds = std::move(merged);
  }
}

}  // namespace trainprof::collector
