// NVTX ranges of one process image, matched as the exporters write them: push/pop per (thread,
// domain), the innermost open push closed by a pop; start/end by range id (they may cross threads).
// Events come one at a time in file order (read/nvtx_stream.h), so memory is the ranges open at
// once, not the events.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collector/model/model.h"
#include "collector/read/nvtx_stream.h"

namespace trainprof::collector {

/// Matches events given in file order: on_range(begin, end, begin_stack) at each pop (for the
/// innermost open push of its thread and domain) and at each end (for the open start of its id;
/// `begin.kind()` says which), on_mark(mark, stack) at each mark.
template <typename OnRange, typename OnMark>
class NvtxWalker {
 public:
  NvtxWalker(OnRange on_range, OnMark on_mark) : on_range_(std::move(on_range)), on_mark_(std::move(on_mark)) {}

  void Add(const NvtxEvent& e, uint64_t stack) {
    switch (e.kind()) {
      case NvtxKind::kPush: open_[Key(e)].push_back({e, stack}); break;
      case NvtxKind::kPop: {
        auto it = open_.find(Key(e));
        if (it == open_.end() || it->second.empty()) {
          ++unmatched_;
          break;
        }
        const Open b = it->second.back();
        it->second.pop_back();
        on_range_(b.event, e, b.stack);
        break;
      }
      case NvtxKind::kStart:
        if (!started_.try_emplace(e.range_id, Open{e, stack}).second) ++unmatched_;  // the id again: the first stays
        break;
      case NvtxKind::kEnd: {
        auto it = started_.find(e.range_id);
        if (it == started_.end()) {
          ++unmatched_;
          break;
        }
        const Open b = it->second;
        started_.erase(it);
        on_range_(b.event, e, b.stack);
        break;
      }
      case NvtxKind::kMark: on_mark_(e, stack); break;
    }
  }

  /// The events left unmatched: pops and ends without a begin, pushes never popped, starts never
  /// ended (a start/end id seen twice counts its second start).
  uint64_t Unmatched() const {
    uint64_t n = unmatched_ + started_.size();
    for (const auto& [key, pushes] : open_) n += pushes.size();
    return n;
  }

 private:
  struct Open {
    NvtxEvent event;
    uint64_t stack = 0;
  };
  static uint64_t Key(const NvtxEvent& e) { return (static_cast<uint64_t>(e.thread) << 32) | e.domain; }

  OnRange on_range_;
  OnMark on_mark_;
  std::unordered_map<uint64_t, std::vector<Open>> open_;  // (thread, domain) → open pushes
  std::unordered_map<uint64_t, Open> started_;            // range id → its open start
  uint64_t unmatched_ = 0;
};

struct NvtxWalk {
  uint64_t unmatched = 0;  ///< NvtxWalker::Unmatched()
  std::string problem;     ///< ForEachNvtxEvent's ("" = none)
};

/// Every NVTX event of `img` (an image of `trace`) through an NvtxWalker.
template <typename OnRange, typename OnMark>
NvtxWalk WalkNvtx(const Trace& trace, const TraceImage& img, OnRange on_range, OnMark on_mark) {
  NvtxWalker<OnRange, OnMark> walker(std::move(on_range), std::move(on_mark));
  NvtxWalk out;
  out.problem = ForEachNvtxEvent(trace, img, [&](const NvtxEvent& e, uint64_t stack) { walker.Add(e, stack); });
  out.unmatched = walker.Unmatched();
  return out;
}

}  // namespace trainprof::collector
