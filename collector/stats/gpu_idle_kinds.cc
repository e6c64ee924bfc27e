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

using StreamKey = std::pair<uint32_t, uint32_t>;  // device, stream

template <typename T>
void AddOps(const std::vector<T>& records, std::map<StreamKey, std::vector<Op>>* out) {
  for (const T& r : records) (*out)[{r.device, r.stream}].push_back({r.start_ns, r.end_ns, r.correlation});
}

// Classifies the gaps of one stream's ops (sorted here) into `row`.
void Classify(std::vector<Op>* ops, const IdMap<uint64_t>& call_begin,
              uint64_t kernel_wait_ns, StreamIdleKinds* row) {
  SortRuns(*ops, [](const Op& a, const Op& b) { return a.start < b.start; });
  row->ops += ops->size();
  for (size_t i = 1; i < ops->size(); ++i) {
    const uint64_t prev_end = (*ops)[i - 1].end;
    const Op& op = (*ops)[i];
    const uint64_t gap = op.start > prev_end ? op.start - prev_end : 0;
    const uint64_t* call = call_begin.Find(op.correlation);
    if (call != nullptr && *call > prev_end) {
      row->host_wait_ns += gap;
    } else if (gap < kernel_wait_ns) {
      row->kernel_wait_ns += gap;
    } else {
      row->other_ns += gap;
    }
  }
}

std::optional<double> Share(uint64_t part, uint64_t idle) {
  if (idle == 0) return std::nullopt;
  return Percent(static_cast<double>(part), static_cast<double>(idle));
}

}  // namespace

std::vector<StreamIdleKinds> IdleKindsByStream(const std::vector<const CudaData*>& images, uint64_t kernel_wait_ns) {
  std::map<StreamKey, StreamIdleKinds> rows;
  for (const CudaData* c : images) {
    const IdMap<uint64_t> call_begin = EnterByCorrelation(*c, /*skip_zero=*/true);
    std::map<StreamKey, std::vector<Op>> ops;
    AddOps(c->kernels, &ops);
    AddOps(c->memcpys, &ops);
    AddOps(c->memsets, &ops);
    for (auto& [key, stream_ops] : ops) {
      StreamIdleKinds& row = rows[key];
      row.device = key.first;
      row.stream = key.second;
      Classify(&stream_ops, call_begin, kernel_wait_ns, &row);
    }
  }
  std::vector<StreamIdleKinds> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) {
    row.idle_ns = row.host_wait_ns + row.kernel_wait_ns + row.other_ns;
    row.host_wait_percent = Share(row.host_wait_ns, row.idle_ns);
    row.kernel_wait_percent = Share(row.kernel_wait_ns, row.idle_ns);
    row.other_percent = Share(row.other_ns, row.idle_ns);
    out.push_back(row);
  }
  return out;
}

}  // namespace trainprof::collector
