#include "collector/read/torch_op_ranges.h"

#include <algorithm>

namespace trainprof::collector {

void TorchOpRanges::Push(uint32_t thread, StringId name, uint64_t time_ns) {
  if (open_.size() <= thread) open_.resize(thread + 1);
  open_[thread].push_back({time_ns, name});
}

void TorchOpRanges::Pop(uint32_t thread, uint64_t time_ns, std::vector<HostOp>* out) {
  if (thread >= open_.size() || open_[thread].empty()) {
    ++unmatched_;
    return;
  }
  const Open o = open_[thread].back();
  open_[thread].pop_back();
  out->push_back({o.begin_ns, time_ns, o.name, thread, HostOpKind::kOperator});
}

void TorchOpRanges::CloseAll(uint64_t end_ns, std::vector<HostOp>* out) {
  for (uint32_t thread = 0; thread < open_.size(); ++thread) {
    while (!open_[thread].empty()) Pop(thread, std::max(end_ns, open_[thread].back().begin_ns), out);
  }
}

}  // namespace trainprof::collector
