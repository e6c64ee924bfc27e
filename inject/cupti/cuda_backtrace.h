// Which CUDA API calls get a call stack under `--backtrace=cuda[:THRESHOLD_NS]` (the default),
// as Nsight Systems' --cudabacktrace: the calls that block the host thread — synchronisation
// (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, cuCtxSynchronize, ...),
// copies that are not Async (cudaMemcpy, cudaMemcpy2D/3D, cudaMemcpyToSymbol, cuMemcpyDtoH, ...)
// and allocation (cudaMalloc*, cudaFree*, cuMemAlloc*, cuMemFree*, but not the stream-ordered
// *Async ones). Decided by CUPTI's function name, which covers every versioned callback id
// (_v2, _v3020, _ptds...) of one function; the tracer caches the answer per callback id.
// Pure; unit-tested.
#pragma once

namespace trainprof::inject::cupti {

/// Whether a call to the CUDA runtime or driver function `name` (CUPTI's functionName) takes a
/// stack when it lasts at least the --backtrace=cuda threshold. nullptr → false.
bool CudaCallWantsStack(const char* name);

}  // namespace trainprof::inject::cupti
