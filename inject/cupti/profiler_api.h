// The seam for capture ranges: a program's cudaProfilerStart / cudaProfilerStop (or
// cuProfilerStart / cuProfilerStop called outside a runtime call) lands here, once per call, on
// the calling thread, right after the call's CUDA_API_ENTER record.
//
// Today it records a CAPTURE record (on = start, reason kCudaProfilerApi). Capture ranges —
// gating all recording on these calls — will be built on this function; nothing else in the
// CUPTI layer knows about them.
#pragma once

namespace trainprof::inject::cupti {

void OnCudaProfilerApi(bool start) noexcept;

}  // namespace trainprof::inject::cupti
