// PyTorch operators (`trainprof run --trace=torch-ops`): the library records each operator
// (aten::addmm, ...) as a range push/pop in the NVTX domain kTorchOpsDomain on the thread that ran
// it, named by the operator (docs/trace-format.md "PyTorch operators"). The collector turns these
// ranges into its operator table instead of NVTX ranges.
#pragma once

namespace trainprof::format {

inline constexpr const char* kTorchOpsDomain = "trainprof.torch-ops";

}  // namespace trainprof::format
