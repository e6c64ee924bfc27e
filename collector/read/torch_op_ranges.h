// PyTorch operators recorded by `--trace=torch-ops` (format/trainprof/torch_ops.h): the range
// pushes and pops of the domain kTorchOpsDomain, matched per thread into HostOps (kOperator), the
// events the operator table is made of (collector/stats/host_ops.h), instead of NVTX ranges.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/model/model.h"

namespace trainprof::collector {

class TorchOpRanges {
 public:
  /// An operator `name` began on `thread` (index into TraceImage::threads) at `time_ns`.
  void Push(uint32_t thread, StringId name, uint64_t time_ns);
  /// The innermost open operator of `thread` ended at `time_ns`: appended to `out`. A pop with
  /// nothing open is ignored (counted in unmatched()).
  void Pop(uint32_t thread, uint64_t time_ns, std::vector<HostOp>* out);
  /// Operators still open at the end of the image (the process ended inside them, or the file is
  /// cut): appended to `out` ending at `end_ns`, as NVTX ranges left open are closed.
  void CloseAll(uint64_t end_ns, std::vector<HostOp>* out);
  uint64_t unmatched() const { return unmatched_; }

 private:
  struct Open {
    uint64_t begin_ns;
    StringId name;
  };
  std::vector<std::vector<Open>> open_;  // by thread
  uint64_t unmatched_ = 0;
};

}  // namespace trainprof::collector
