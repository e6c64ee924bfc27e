#include "collector/stats/kernel_categories.h"

#include <algorithm>
#include <unordered_map>

#include "collector/base/kernel_names.h"
#include "collector/base/sample_stats.h"
#include "collector/model/cuda_calls.h"

namespace trainprof::collector {
namespace {

constexpr size_t Slot(KernelCategory c) { return static_cast<size_t>(c); }

// The bits of the exclusive parts: computation 1, communication 2, memory 4 (HTA's order of
// kernel_type_to_analysis, so "computation overlapping communication" is 3).
constexpr unsigned kComp = 1, kComm = 2, kMem = 4;

std::optional<double> Share(uint64_t part, uint64_t whole) {
  if (whole == 0) return std::nullopt;
  return Percent(static_cast<double>(part), static_cast<double>(whole));
}

}  // namespace

const char* KernelCategoryName(KernelCategory c) {
  switch (c) {
    case KernelCategory::kComputation: return "computation";
    case KernelCategory::kCommunication: return "communication";
    case KernelCategory::kMemory: return "memory";
    case KernelCategory::kOther:
    case KernelCategory::kCount: break;
  }
  return "other";
}

KernelCategory KernelCategoryOf(std::string_view name) {
  if (IsNcclKernel(name)) return KernelCategory::kCommunication;
  const std::string d = DemangleKernelName(name);
  const std::string_view s = d;
  if (s.starts_with("Memcpy") || s.starts_with("Memset") || s.starts_with("dma")) return KernelCategory::kMemory;
  if (s.find("Memcpy") != std::string_view::npos || s.find("Sync") != std::string_view::npos) {
    return KernelCategory::kOther;
  }
  return KernelCategory::kComputation;
}

CategorizedActivity CategorizeActivity(const Process& process, const StringPool& strings) {
  std::vector<const CudaData*> records;
  for (const TraceImage& img : process.images) records.push_back(&img.cuda);
  return CategorizeActivity(process, strings, TimeWindow{}, records,
                            std::vector<const IdMap<uint64_t>*>(records.size(), nullptr));
}

CategorizedActivity CategorizeActivity(const Process& process, const StringPool& strings, const TimeWindow& w,
                                       const std::vector<const CudaData*>& records,
                                       const std::vector<const IdMap<uint64_t>*>& enter) {
  CategorizedActivity out;
  std::array<std::vector<Interval>, kKernelCategories> parts;
  std::unordered_map<StringId, KernelCategory> category;  // demangling is slow: once a name
  for (size_t i = 0; i < records.size(); ++i) {
    const CudaData& c = *records[i];
    std::vector<const GpuKernel*> nccl;
    for (const GpuKernel& k : c.kernels) {
      auto [it, inserted] = category.try_emplace(k.name, KernelCategory::kOther);
      if (inserted) it->second = KernelCategoryOf(strings.Get(k.name));
      if (w.Owns(k.start_ns)) ++out.kernels;
      if (!w.Overlaps(k.start_ns, k.end_ns)) continue;
      parts[Slot(it->second)].push_back(w.Clip(k.start_ns, k.end_ns));
      if (it->second == KernelCategory::kCommunication) nccl.push_back(&k);
    }
    for (const GpuMemcpy& m : c.memcpys) {
      if (w.Overlaps(m.start_ns, m.end_ns)) parts[Slot(KernelCategory::kMemory)].push_back(w.Clip(m.start_ns, m.end_ns));
    }
    for (const GpuMemset& m : c.memsets) {
      if (w.Overlaps(m.start_ns, m.end_ns)) parts[Slot(KernelCategory::kMemory)].push_back(w.Clip(m.start_ns, m.end_ns));
    }
    if (nccl.empty()) continue;
    IdMap<uint64_t> own;  // → launch call enter
    const IdMap<uint64_t>* enter_of = enter[i];
    if (enter_of == nullptr) {
      own = EnterByCorrelation(process.images[i].cuda);
      enter_of = &own;
    }
    for (const GpuKernel* k : nccl) {
      const uint64_t* launch = enter_of->Find(k->correlation);
      if (launch != nullptr) out.communication.push_back({*launch, w.Clip(k->start_ns, k->end_ns)});
    }
  }
  // The union of all from the categories' unions (equal to the union of every record, and
  // without a second copy of the records' intervals).
  std::vector<Interval> all;
  for (size_t i = 0; i < kKernelCategories; ++i) {
    out.sets[i] = Union(std::move(parts[i]));
    all.insert(all.end(), out.sets[i].begin(), out.sets[i].end());
  }
  out.all = Union(std::move(all));
  std::sort(out.communication.begin(), out.communication.end(),
            [](const LaunchedKernel& a, const LaunchedKernel& b) { return a.launch_ns < b.launch_ns; });
  return out;
}

KernelCategoryBreakdown BreakDownCategories(const CategorizedActivity& activity) {
  // A sweep over the boundaries of the three unions: between two boundaries the set of running
  // categories (a mask) is constant, and its time goes to that mask's part.
  struct Edge {
    uint64_t time;
    unsigned bit;
    bool begin;
  };
  std::vector<Edge> edges;
  const std::pair<KernelCategory, unsigned> kinds[] = {
      {KernelCategory::kComputation, kComp}, {KernelCategory::kCommunication, kComm}, {KernelCategory::kMemory, kMem}};
  for (const auto& [category, bit] : kinds) {
    for (const Interval& i : activity.of(category)) {
      edges.push_back({i.begin, bit, true});
      edges.push_back({i.end, bit, false});
    }
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.time < b.time; });
  std::array<uint64_t, 8> by_mask{};
  unsigned mask = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    mask = edges[i].begin ? (mask | edges[i].bit) : (mask & ~edges[i].bit);
    if (i + 1 < edges.size()) by_mask[mask] += edges[i + 1].time - edges[i].time;
  }
  KernelCategoryBreakdown b;
  b.computation_ns = by_mask[kComp];
  b.communication_ns = by_mask[kComm];
  b.memory_ns = by_mask[kMem];
  b.computation_overlapping_communication_ns = by_mask[kComp | kComm];
  b.communication_overlapping_memory_ns = by_mask[kComm | kMem];
  b.computation_overlapping_memory_ns = by_mask[kComp | kMem];
  b.computation_overlapping_communication_overlapping_memory_ns = by_mask[kComp | kComm | kMem];
  b.communication_total_ns = Length(activity.of(KernelCategory::kCommunication));
  b.communication_hidden_ns = by_mask[kComp | kComm] + by_mask[kComp | kComm | kMem];
  b.communication_hidden_percent = Share(b.communication_hidden_ns, b.communication_total_ns);
  return b;
}

std::vector<StepCommunication> CommunicationPerStep(const CategorizedActivity& activity,
                                                    const std::vector<StepWindow>& steps) {
  std::vector<StepCommunication> out;
  std::vector<std::vector<Interval>> runs(steps.size());
  for (const LaunchedKernel& k : activity.communication) {
    // The last step begun at or before the launch, if it has not ended.
    auto it = std::upper_bound(steps.begin(), steps.end(), k.launch_ns,
                               [](uint64_t t, const StepWindow& s) { return t < s.time.begin; });
    if (it == steps.begin()) continue;
    --it;
    if (k.launch_ns < it->time.end) runs[static_cast<size_t>(it - steps.begin())].push_back(k.run);
  }
  const IntervalSet& computation = activity.of(KernelCategory::kComputation);
  for (size_t i = 0; i < steps.size(); ++i) {
    const IntervalSet comm = Union(std::move(runs[i]));
    StepCommunication s;
    s.step = steps[i].step;
    s.communication_ns = Length(comm);
    s.hidden_ns = Length(Intersect(comm, computation));
    s.hidden_percent = Share(s.hidden_ns, s.communication_ns);
    out.push_back(s);
  }
  return out;
}

}  // namespace trainprof::collector
