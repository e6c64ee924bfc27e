// Streaming NVTX range matcher: the reader hands it every NVTX record of one process image as it
// decodes it (each thread's records in record order, threads one after another), and it keeps only
// what is open (a stack per thread and domain, open start/end ranges by id) and one
// DurationSummary per range name. Memory: the open ranges and the distinct names, not the events.
// The rules are those of nvtx_summary.h. Ids are the reader's image-local refs, mapped to pool
// ids afterwards (NvtxSummary keys may then merge).
// An end whose start has not been seen is held until the image ends (its start may be on a thread
// decoded later); past kMaxHeldEnds such ends (a program ending ids it never started, in bulk)
// further ones are counted as ends without a start at once, so memory stays bounded. NVTX range
// ids are unique in a process; an id started more than once (a forged or damaged file) has its
// ends held too and matched at the end in time order, each to the latest open start before it.
// Memory and time grow with the (domain, name) pairs used, not with the largest id.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "collector/model/nvtx_summary.h"
#include "collector/model/stacks.h"
#include "collector/read/range_id_map.h"

namespace trainprof::collector {

class NvtxMatcher {
 public:
  static constexpr size_t kMaxHeldEnds = size_t{1} << 20;

  // Push, Pop, Start and End are inlined into the reader's decode loop, which calls them once per
  // record (most records of a long trace): a call's set-up was ~5% of a report's CPU. An open
  // range is written and read field by field, not copied whole: its pop or end often comes a
  // few records later, and a whole-struct copy then loads what narrower stores just wrote (a
  // store-forwarding stall, ~10% of the report's CPU).
  [[gnu::always_inline]] void Push(uint32_t thread, uint32_t domain, uint32_t name, uint64_t time_ns) {
    // The row is found here, off the pop's dependency chain (stack top → row → its summary).
    const uint32_t row = IndexOf(domain, name, RangeStyle::kPushPop);
    Open& push = Stack(thread, domain).emplace_back();
    push.time_ns = time_ns;
    push.name = name;
    push.domain = domain;
    push.row = row;
  }
  [[gnu::always_inline]] void Pop(uint32_t thread, uint32_t domain, uint64_t time_ns) {
    std::vector<Open>& stack = Stack(thread, domain);
    if (stack.empty()) {
      PopUnbalanced(domain);
      return;
    }
    const Open& push = stack.back();
    const uint64_t d = time_ns >= push.time_ns ? time_ns - push.time_ns : 0;
    ranges_[push.row - 1].durations.Add(d);
    if (push.stack != 0) AddUse(push, d);
    stack.pop_back();
  }
  void Mark(uint32_t domain, uint32_t name) {
    const uint64_t key = uint64_t{domain} << 32 | name;
    MarkCacheEntry& c = mark_cache_[(key * 0x9E3779B97F4A7C15ull) >> 60];  // kMarkCacheSize = 16
    if (c.key != key) {
      c.count = &marks_[key];  // node-based map: the count never moves
      c.key = key;
    }
    ++*c.count;
  }
  /// Inline: an id started once (the common case); the rest in StartSlow.
  [[gnu::always_inline]] void Start(uint32_t domain, uint32_t name, uint64_t range_id, uint64_t time_ns) {
    if (open_starts_.empty()) {
      if (Open* open = single_starts_.InsertNew(range_id)) {
        open->time_ns = time_ns;
        open->name = name;
        open->domain = domain;
        return;
      }
    }
    StartSlow(domain, name, range_id, time_ns);
  }
  /// Inline: the end of an id started once, after its start (the common case); the rest in EndSlow.
  [[gnu::always_inline]] void End(uint64_t range_id, uint64_t time_ns) {
    if (const Open* single = single_starts_.Find(range_id); single != nullptr && single->time_ns <= time_ns) {
      const uint64_t d = time_ns - single->time_ns;
      const uint32_t row = IndexOf(single->domain, single->name, RangeStyle::kStartEnd);
      if (single->stack != 0) AddUse(*single, d);
      single_starts_.Erase(range_id);
      ranges_[row - 1].durations.Add(d);
      return;
    }
    EndSlow(range_id, time_ns);
  }
  /// The stack (a STACK id) of the range this thread last pushed in `domain` / last started with
  /// `range_id`: when it closes, its duration is summed per (domain, name, stack) (TakeUses).
  void SetPushStack(uint32_t thread, uint32_t domain, uint64_t stack);
  void SetStartStack(uint64_t range_id, uint64_t stack);
  /// A mark of `name` taken at `stack`: a use of duration 0.
  void MarkStack(uint32_t domain, uint32_t name, uint64_t stack);
  /// The ranges with stacks closed so far, summed per (domain, name, stack); names are refs.
  std::vector<StackUse> TakeUses();

  /// Closes the image: ranges still open become unbalanced; ends that arrived before their start
  /// (another thread decoded first) are matched by id and time. The matcher is empty afterwards.
  NvtxSummary Finish();

 private:
  struct Open {
    uint64_t time_ns;
    uint32_t name;
    uint32_t domain;
    uint64_t stack = 0;  ///< EVENT_STACK of its push/start (0 = none)
    uint32_t row = 0;    ///< a push's ranges_ index + 1 (start/end ranges: 0, found at the end)
  };
  void StartSlow(uint32_t domain, uint32_t name, uint64_t range_id, uint64_t time_ns);
  void EndSlow(uint64_t range_id, uint64_t time_ns);
  void AddUse(const Open& o, uint64_t duration_ns, StackUseKind kind = StackUseKind::kRange);
  void PopUnbalanced(uint32_t domain);  ///< a pop on an empty stack
  RangeSamples& Slot(uint32_t domain, uint32_t name, RangeStyle style, bool orphan);
  /// ranges_ index + 1 of (domain, name, style), made if new. Inline: the cache's hit.
  uint32_t IndexOf(uint32_t domain, uint32_t name, RangeStyle style) {
    const uint64_t key = uint64_t{domain} << 32 | name;
    const CacheEntry& c = cache_[static_cast<size_t>(style)][(key * 0x9E3779B97F4A7C15ull) >> 56];  // kCacheSize = 2^8
    return c.key == key ? c.value : IndexOfSlow(domain, name, style);
  }
  uint32_t IndexOfSlow(uint32_t domain, uint32_t name, RangeStyle style);
  /// The open pushes of (thread, domain). Inline: the cache's hit.
  std::vector<Open>& Stack(uint32_t thread, uint32_t domain) {
    const StackCacheEntry& c = stack_cache_[(thread * 7 + domain) & (kStackCacheSize - 1)];
    return c.key == (uint64_t{thread} << 32 | domain) ? *c.stack : StackSlow(thread, domain);
  }
  std::vector<Open>& StackSlow(uint32_t thread, uint32_t domain);
  /// Matches one id's held ends with its open starts, in time order (the sorted rule).
  void MatchLeftovers(std::vector<Open>* starts, std::vector<uint64_t>* ends);

  std::vector<RangeSamples> ranges_;
  // (domain, name) → ranges_ index + 1, per style: open addressing (linear probing, at most half
  // full) whose slots hold only the index, the key being the range's: 8 bytes a name, not a
  // hash-map node (a million distinct names are common). Orphan rows by domain << 2 | style.
  std::vector<uint32_t> index_[2];
  size_t index_used_[2] = {0, 0};
  std::unordered_map<uint64_t, uint32_t> other_index_;
  // A direct-mapped cache in front of index_: ranges repeat, a probe per pop does not.
  struct CacheEntry {
    uint64_t key = UINT64_MAX;
    uint32_t value = 0;
  };
  static constexpr size_t kCacheSize = 256;
  CacheEntry cache_[2][kCacheSize];
  std::unordered_map<uint64_t, uint64_t> marks_;  // domain << 32 | name → count
  struct MarkCacheEntry {  // a direct-mapped cache in front of marks_
    uint64_t key = UINT64_MAX;
    uint64_t* count = nullptr;
  };
  MarkCacheEntry mark_cache_[16];
  std::unordered_map<uint64_t, std::vector<Open>> stacks_;  // thread << 32 | domain
  // A direct-mapped cache in front of stacks_ (node-based: a stack's vector never moves), so that
  // records alternating between domains or threads do not hash into stacks_ each time.
  struct StackCacheEntry {
    uint64_t key = UINT64_MAX;
    std::vector<Open>* stack = nullptr;
  };
  static constexpr size_t kStackCacheSize = 16;
  StackCacheEntry stack_cache_[kStackCacheSize];
  // Open start/end ranges by range id: an id started once in single_starts_ (the common case, no
  // allocation), an id started more than once (forged or damaged) in open_starts_ with all its
  // starts; never in both. open_starts_ vectors hold at least two starts.
  RangeIdMap<Open> single_starts_;
  std::unordered_map<uint64_t, std::vector<Open>> open_starts_;       // by range id
  std::unordered_map<uint64_t, std::vector<uint64_t>> early_ends_;    // by range id: no start yet
  size_t held_ends_ = 0;                                               // Σ early_ends_ sizes
  uint64_t unbalanced_ = 0;
  std::vector<StackUse> uses_;
  std::map<std::tuple<uint32_t, uint32_t, uint64_t, StackUseKind>, size_t> use_index_;
};

}  // namespace trainprof::collector
