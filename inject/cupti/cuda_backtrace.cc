#include "cupti/cuda_backtrace.h"

#include <cstring>

namespace trainprof::inject::cupti {

bool CudaCallWantsStack(const char* name) {
  if (name == nullptr) return false;
  static const char* const kPrefixes[] = {
      "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaThreadSynchronize",
      "cudaMemcpy",            "cudaMalloc",            "cudaFree",
      "cuCtxSynchronize",      "cuStreamSynchronize",   "cuEventSynchronize",   "cuMemcpy",
      "cuMemAlloc",            "cuMemFree",
  };
  if (strstr(name, "Async") != nullptr) return false;  // stream-ordered: does not block the host
  for (const char* p : kPrefixes) {
    if (strncmp(name, p, strlen(p)) == 0) return true;
  }
  return false;
}

}  // namespace trainprof::inject::cupti
