// NVTX ranges of one process image, matched as the exporters write them: push/pop per (thread,
// domain), the innermost open push closed by a pop; start/end by range id (they may cross threads).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "collector/model/model.h"

namespace trainprof::collector {

/// Calls on_range(begin, end) for each matched push/pop range (at its pop, in record order) and
/// on_mark(mark) for each mark; start and end events go to on_async(event) as they are, unmatched.
/// Returns the push/pop events left unmatched (pops without a push, pushes never popped).
template <typename OnRange, typename OnMark, typename OnAsync>
uint64_t WalkNvtx(const TraceImage& img, OnRange on_range, OnMark on_mark, OnAsync on_async) {
  std::unordered_map<uint64_t, std::vector<const NvtxEvent*>> open;  // (thread, domain) → pushes
  uint64_t unmatched = 0, pushes_open = 0;
  for (const NvtxEvent& e : img.nvtx) {
    const uint64_t key = (static_cast<uint64_t>(e.thread) << 32) | e.domain;
    switch (e.kind()) {
      case NvtxKind::kPush:
        open[key].push_back(&e);
        ++pushes_open;
        break;
      case NvtxKind::kPop: {
        auto it = open.find(key);
        if (it == open.end() || it->second.empty()) {
          ++unmatched;
          break;
        }
        const NvtxEvent* b = it->second.back();
        it->second.pop_back();
        --pushes_open;
        on_range(*b, e);
        break;
      }
      case NvtxKind::kStart:
      case NvtxKind::kEnd: on_async(e); break;
      case NvtxKind::kMark: on_mark(e); break;
    }
  }
  return unmatched + pushes_open;
}

/// The same with start/end ranges matched by range id too: on_range(start, end) at the end. Returns
/// every event left unmatched (ends without a start, starts never ended included).
template <typename OnRange, typename OnMark>
uint64_t WalkNvtx(const TraceImage& img, OnRange on_range, OnMark on_mark) {
  std::unordered_map<uint64_t, const NvtxEvent*> started;  // range id → start
  uint64_t unmatched = 0;
  unmatched += WalkNvtx(img, on_range, on_mark, [&](const NvtxEvent& e) {
    if (e.kind() == NvtxKind::kStart) {
      if (!started.emplace(e.range_id, &e).second) ++unmatched;
      return;
    }
    auto it = started.find(e.range_id);
    if (it == started.end()) {
      ++unmatched;
      return;
    }
    on_range(*it->second, e);
    started.erase(it);
  });
  return unmatched + started.size();
}

}  // namespace trainprof::collector
