// Test utility: training phases (format/trainprof/phases.h) on one TraceBuilder thread, as the
// Python shim records them: push/pop ranges in the NVTX domain "trainprof" with the phase as
// category, and the kDataEnd mark after a StopIteration.
//
//   TraceBuilder main(200);
//   PhaseThread m(main, 200);
//   uint64_t t = m.Step(T0, {.wait = 30 * kMs, .forward = 4 * kMs, .backward = 5 * kMs});
//
// Records of one thread must go forward in time: emit ranges in time order (outer push first).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trace_builder.h"
#include "trainprof/phases.h"

namespace trainprof::test {

inline constexpr uint64_t kMs = 1'000'000;
using format::Phase;

/// Durations of the phases of one plain step, run back to back in this order.
struct StepPlan {
  uint64_t wait = 0;
  uint64_t zero_grad = 0;
  uint64_t forward = 0;
  uint64_t backward = 0;
  uint64_t optimizer = 0;
  uint64_t other = 0;  ///< unrecorded time at the end of the step
};

class PhaseThread {
 public:
  PhaseThread(TraceBuilder& b, uint32_t tid)
      : b_(&b), th_(b.Thread(tid)), domain_(b.Domain(th_, format::kPhaseDomain)) {}

  int thread() const { return th_; }
  TraceBuilder& builder() { return *b_; }
  /// The name of Step's forwards ("": DefaultName's "Net.forward"); a DDP rank's is
  /// "DistributedDataParallel.forward", the wrapper's.
  std::string forward_name;

  void Push(uint64_t t, Phase p, std::string_view name = "") {
    b_->Push(th_, t, name.empty() ? DefaultName(p) : name, domain_, static_cast<uint64_t>(p));
  }
  void Pop(uint64_t t) { b_->Pop(th_, t, domain_); }
  void Range(uint64_t begin, uint64_t end, Phase p, std::string_view name = "") {
    Push(begin, p, name);
    Pop(end);
  }
  /// The mark the shim writes after a __next__ that raised StopIteration.
  void DataEnd(uint64_t t) {
    b_->Mark(th_, t, "DataLoader StopIteration", domain_, static_cast<uint64_t>(Phase::kDataEnd));
  }
  /// A mark of the phase domain (kDataLoader, kDataLoaderBatch: docs/trace-format.md).
  void Mark(uint64_t t, Phase p, std::string_view name) {
    b_->Mark(th_, t, name, domain_, static_cast<uint64_t>(p));
  }
  /// A data wait of `d` from t on the loader `loader` (its description): the wait range with the
  /// kDataLoaderBatch mark inside; returns its end.
  uint64_t LoaderWait(uint64_t t, uint64_t d, std::string_view loader) {
    Push(t, Phase::kDataWait);
    Mark(t + 1, Phase::kDataLoaderBatch, loader);
    Pop(t + d);
    return t + d;
  }
  /// A StopIteration call: a data wait of `d` at t and its kDataEnd mark; returns its end.
  uint64_t EpochEnd(uint64_t t, uint64_t d) {
    Range(t, t + d, Phase::kDataWait);
    DataEnd(t + d);
    return t + d;
  }
  /// A step from t: the plan's phases back to back (zero phases left out); returns its end.
  uint64_t Step(uint64_t t, const StepPlan& s) {
    const std::pair<uint64_t, Phase> parts[] = {{s.wait, Phase::kDataWait},
                                                {s.zero_grad, Phase::kZeroGrad},
                                                {s.forward, Phase::kForward},
                                                {s.backward, Phase::kBackward},
                                                {s.optimizer, Phase::kOptimizerStep}};
    for (const auto& [d, p] : parts) {
      if (d == 0) continue;
      Range(t, t + d, p, p == Phase::kForward ? std::string_view(forward_name) : std::string_view());
      t += d;
    }
    return t + s.other;
  }
  /// One batch fetch from t: `items` __getitem__ of `item` each, then collate, then `other`.
  uint64_t Fetch(uint64_t t, int items, uint64_t item, uint64_t collate, uint64_t other = 0) {
    Push(t, Phase::kFetch);
    for (int i = 0; i < items; ++i) {
      Range(t, t + item, Phase::kGetItem);
      t += item;
    }
    if (collate > 0) Range(t, t + collate, Phase::kCollate);
    t += collate + other;
    Pop(t);
    return t;
  }

 private:
  static std::string DefaultName(Phase p) {
    switch (p) {
      case Phase::kDataWait: return "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__";
      case Phase::kFetch: return "_MapDatasetFetcher.fetch";
      case Phase::kGetItem: return "Slow.__getitem__";
      case Phase::kCollate: return "default_collate";
      case Phase::kWorkerInit: return "worker_init_fn:seed";
      case Phase::kForward: return "Net.forward";
      case Phase::kBackward: return "Tensor.backward";
      case Phase::kOptimizerStep: return "Optimizer.step#SGD.step";
      case Phase::kZeroGrad: return "Optimizer.zero_grad#SGD.zero_grad";
      case Phase::kCollective: return "all_reduce";
      default: return "phase";
    }
  }

  TraceBuilder* b_;
  int th_;
  uint64_t domain_;
};

/// A DataLoader worker process of `ppid` (forked, with the shim's role), alive over [start, end):
/// its trace is appended to `files`, its phase thread (tid = pid) returned.
inline PhaseThread WorkerProcess(std::vector<std::unique_ptr<TraceBuilder>>* files, int32_t pid, int32_t ppid,
                                 uint64_t start, uint64_t end) {
  files->push_back(std::make_unique<TraceBuilder>(pid, ppid, start));
  TraceBuilder& w = *files->back();
  w.Flags(format::kFlagForkedChild).HeaderEnd(format::EndKind::kExit, 0, end);
  PhaseThread t(w, static_cast<uint32_t>(pid));
  w.Role(t.thread(), "DataLoader worker");
  return t;
}

}  // namespace trainprof::test
