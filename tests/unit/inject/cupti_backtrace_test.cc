// Which CUDA calls take a stack under --backtrace=cuda (inject/cupti/cuda_backtrace.h), by
// CUPTI's function names, versioned ones included.
#include "cupti/cuda_backtrace.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace trainprof::inject::cupti {
namespace {

TEST(CudaCallWantsStack, BlockingCallsOfBothApis) {
  for (const char* name :
       {"cudaDeviceSynchronize_v3020", "cudaStreamSynchronize", "cudaStreamSynchronize_ptsz", "cudaEventSynchronize",
        "cudaMemcpy_v3020", "cudaMemcpy2D_v3020", "cudaMemcpy3D_v3020", "cudaMemcpyToSymbol_v3020", "cudaMalloc_v3020",
        "cudaMallocHost_v3020", "cudaMallocManaged_v6000", "cudaFree_v3020", "cudaFreeHost_v3020", "cuCtxSynchronize",
        "cuStreamSynchronize", "cuEventSynchronize", "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "cuMemcpy",
        "cuMemAlloc_v2", "cuMemAllocHost_v2", "cuMemFree_v2", "cuMemFreeHost"}) {
    EXPECT_TRUE(CudaCallWantsStack(name)) << name;
  }
}

TEST(CudaCallWantsStack, NotLaunchesAsyncCopiesOrStreamOrderedAllocation) {
  for (const char* name : std::initializer_list<const char*>{"cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cudaMemcpy2DAsync_v3020",
                           "cudaMallocAsync_v11020", "cudaFreeAsync_v11020", "cudaFuncGetAttributes_v3020",
                           "cudaStreamCreate", "cuLaunchKernel", "cuMemcpyDtoHAsync_v2", "cuMemAllocAsync",
                           "cuMemFreeAsync", "cudaGetDevice", "", static_cast<const char*>(nullptr)}) {
    EXPECT_FALSE(CudaCallWantsStack(name)) << (name ? name : "(null)");
  }
}

}  // namespace
}  // namespace trainprof::inject::cupti
