#include "collector/stats/gpu_idle_kinds.h"

#include <algorithm>
#include <map>
#include <utility>

#include "collector/base/sample_stats.h"
#include "collector/base/sort_runs.h"
#include "collector/model/cuda_calls.h"

namespace trainprof::collector {
namespace {

struct Op {
  uint64_t start = 0, end = 0, correlation = 0;
};

template <typename T>
void AddOps(const std::vector<T>& records, const TimeWindow& w, std::map<std::pair<uint32_t, uint32_t>, std::vector<Op>>* out) {
  for (const T& r : records) {
    if (w.Owns(r.start_ns)) (*out)[{r.device, r.stream}].push_back({r.start_ns, r.end_ns, r.correlation});
  }
}

std::optional<double> Share(uint64_t part, uint64_t idle) {
  if (idle == 0) return std::nullopt;
  return Percent(static_cast<double>(part), static_cast<double>(idle));
}

}  // namespace

void SetIdleTotals(StreamIdleKinds* row) {
  row->idle_ns = row->host_wait_ns + row->kernel_wait_ns + row->other_ns;
  row->host_wait_percent = Share(row->host_wait_ns, row->idle_ns);
  row->kernel_wait_percent = Share(row->kernel_wait_ns, row->idle_ns);
  row->other_percent = Share(row->other_ns, row->idle_ns);
}

IdleKindsSweep::IdleKindsSweep(size_t images, uint64_t kernel_wait_ns)
    : kernel_wait_ns_(kernel_wait_ns), last_end_(images) {}

void IdleKindsSweep::Add(const TimeWindow& w, const std::vector<const CudaData*>& images,
                         const std::vector<const IdMap<uint64_t>*>& call_begin) {
  for (size_t i = 0; i < images.size(); ++i) {
    const CudaData& c = *images[i];
    std::map<StreamKey, std::vector<Op>> ops;
    AddOps(c.kernels, w, &ops);
    AddOps(c.memcpys, w, &ops);
    AddOps(c.memsets, w, &ops);
    for (auto& [key, stream_ops] : ops) {
      StreamIdleKinds& row = rows_[key];
      row.device = key.first;
      row.stream = key.second;
      // The ops by start (stable: the order they were recorded in breaks ties), each gap from the
      // op before it, the first one's from the stream's last op in an earlier window.
      SortRuns(stream_ops, [](const Op& a, const Op& b) { return a.start < b.start; });
      row.ops += stream_ops.size();
      for (const Op& op : stream_ops) {
        if (op.correlation == 0 || call_begin[i]->Find(op.correlation) == nullptr) {
          ++unlaunched_.ops;
          unlaunched_.ns += op.end - op.start;
        }
      }
      auto [last, first_window] = last_end_[i].try_emplace(key, 0);
      for (size_t k = first_window ? 1 : 0; k < stream_ops.size(); ++k) {
        const uint64_t prev_end = k == 0 ? last->second : stream_ops[k - 1].end;
        const Op& op = stream_ops[k];
        const uint64_t gap = op.start > prev_end ? op.start - prev_end : 0;
        const uint64_t* call = op.correlation == 0 ? nullptr : call_begin[i]->Find(op.correlation);
        if (call != nullptr && *call > prev_end) {
          row.host_wait_ns += gap;
        } else if (gap < kernel_wait_ns_) {
          row.kernel_wait_ns += gap;
        } else {
          row.other_ns += gap;
        }
      }
      last->second = stream_ops.back().end;
    }
  }
}

std::vector<StreamIdleKinds> IdleKindsSweep::Rows() && {
  std::vector<StreamIdleKinds> out;
  out.reserve(rows_.size());
  for (auto& [key, row] : rows_) {
    SetIdleTotals(&row);
    out.push_back(row);
  }
  return out;
}

std::vector<StreamIdleKinds> IdleKindsByStream(const std::vector<const CudaData*>& images, uint64_t kernel_wait_ns,
                                               UnlaunchedOps* unlaunched) {
  std::vector<IdMap<uint64_t>> call_begin;
  call_begin.reserve(images.size());
  for (const CudaData* c : images) call_begin.push_back(EnterByCorrelation(*c));
  std::vector<const IdMap<uint64_t>*> of;
  for (const IdMap<uint64_t>& m : call_begin) of.push_back(&m);
  IdleKindsSweep sweep(images.size(), kernel_wait_ns);
  sweep.Add(TimeWindow{}, images, of);
  if (unlaunched != nullptr) *unlaunched = sweep.unlaunched();
  return std::move(sweep).Rows();
}

}  // namespace trainprof::collector
