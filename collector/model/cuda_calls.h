// What a CUDA API call is, for the tables and the GPU idle attribution (docs/analysis.md, "GPU
// idle time"): its display name, and whether it launches GPU work or blocks the host until the GPU
// is done (a synchronising call).
//
//   "cudaLaunchKernel_v7000"  ──CudaApiDisplayName──►  "cudaLaunchKernel"   (CUPTI's _vNNNN suffix dropped;
//                                                                           "cuMemcpyDtoH_v2" stays: it is the
//                                                                           driver's own name)
//   kSync     cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize,
//             cudaThreadSynchronize, cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize
//   kCopy     a copy that blocks the host: a synchronous cudaMemcpy* / cuMemcpy* (no "Async" in the
//             name), or an asynchronous one whose copy involves pageable host memory (CUDA runs
//             those synchronously: CUDA Runtime API, "API synchronization behavior")
//   kLaunch   cudaLaunch*, cuLaunch*, cudaGraphLaunch, cuGraphLaunch, or any call with a correlated
//             kernel record (launches through other entry points)
//   kOther    everything else
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collector/base/id_map.h"
#include "collector/model/model.h"

namespace trainprof::collector {

/// CUPTI's function name without its "_v<digits>" version suffix (4 digits or more).
std::string CudaApiDisplayName(std::string_view recorded);

enum class CallClass : uint8_t { kOther, kLaunch, kSync, kCopy };

/// The GPU records of one image by correlation id (the first record of an id where several have it).
struct Correlated {
  IdMap<const GpuMemcpy*> copies;
  IdMap<const GpuKernel*> kernels;
};
Correlated CorrelateGpuRecords(const CudaData& data);
/// The same over the records of `sources`, one after the other (a window's records, then its other
/// partners: CudaWindowData::PartnerSources); pointers into them.
Correlated CorrelateGpuRecords(const std::vector<const CudaData*>& sources);

/// Each call's enter time (CLOCK_MONOTONIC ns) by its correlation id: the first call of an id
/// where several have it, correlation 0 (no id given) included: the GPU idle kinds give an op of
/// id 0 no call themselves.
IdMap<uint64_t> EnterByCorrelation(const CudaData& data);
/// The same over the calls of `sources`, one after the other.
IdMap<uint64_t> EnterByCorrelation(const std::vector<const CudaData*>& sources);

/// The class of a call, from its display name and the copy/kernel it started (nullptr: none).
CallClass ClassifyCall(std::string_view display_name, const GpuMemcpy* copy, bool has_kernel);

/// "HtoD", "DtoH", ... as CUPTI's memcpy kinds; "kind N" for a number this trainprof does not know.
std::string MemcpyKindName(format::MemcpyKind kind);

}  // namespace trainprof::collector
