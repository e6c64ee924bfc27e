// NVTX ranges of one process image, matched as the exporters write them: push/pop per (thread,
// domain), the innermost open push closed by a pop; start/end by range id (they may cross threads).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "collector/model/model.h"

namespace trainprof::collector {

/// Calls on_range(begin, end) for each matched range (at its pop or end, in record order) and
/// on_mark(mark) for each mark. Returns the events left unmatched (pops and ends without a begin,
/// pushes and starts never closed).
template <typename OnRange, typename OnMark>
uint64_t WalkNvtx(const TraceImage& img, OnRange on_range, OnMark on_mark) {
  std::unordered_map<uint64_t, std::vector<const NvtxEvent*>> open;  // (thread, domain) → pushes
  std::unordered_map<uint64_t, const NvtxEvent*> started;            // range id → start
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
        if (!started.emplace(e.range_id, &e).second) ++unmatched;
        break;
      case NvtxKind::kEnd: {
        auto it = started.find(e.range_id);
        if (it == started.end()) {
          ++unmatched;
          break;
        }
        on_range(*it->second, e);
        started.erase(it);
        break;
      }
      case NvtxKind::kMark: on_mark(e); break;
    }
  }
  return unmatched + pushes_open + started.size();
}

}  // namespace trainprof::collector
