// CUPTI runtime/driver API callbacks → CUDA_API_ENTER / CUDA_API_EXIT fields. Pure functions
// (the callback itself is in cupti_tracer.cc), unit-tested with callback data built by hand.
//
// A runtime call and the driver calls it makes are one call: a driver call is recorded only when
// its thread is not inside a runtime call. The enter callback marks the calls it records in
// CUPTI's per-call correlationData, and the exit callback records exactly the calls marked, so a
// call that was running when CUPTI was subscribed (cuInit runs inside the program's first CUDA
// call) leaves no exit without its enter and does not unbalance the depth.
#pragma once

#include <cupti.h>

#include <cstdint>

#include "trainprof/records.h"

namespace trainprof::inject::cupti {

/// One API callback, as the trace needs it.
struct ApiCall {
  bool enter = false;
  format::CudaApi api = format::CudaApi::kRuntime;
  uint32_t cbid = 0;
  const char* name = nullptr;  ///< CUPTI's function name (a global constant)
  uint32_t correlation = 0;
  uint32_t status = 0;         ///< exit: cudaError_t / CUresult of the call
};

/// Decodes a callback of the runtime or driver API domain; false for any other domain or site.
bool DecodeApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data,
                       ApiCall* out);

/// Applies `call` to its thread's runtime-call depth and the call's CUPTI correlationData
/// (`call_data`, may be null); returns whether to record it.
bool TrackNesting(uint32_t* runtime_depth, uint64_t* call_data, const ApiCall& call);

/// After TrackNesting said to record an enter: this call is not recorded after all (outside a
/// capture range), but its depth stays counted; TrackNesting then skips its exit and undoes the
/// depth.
void SkipRecording(uint64_t* call_data, const ApiCall& call);

/// The CUDA_API_ENTER record of `call`, whose function name is the string `name_id`.
format::rec::CudaApiEnter ApiEnterRecord(const ApiCall& call, uint32_t name_id);

/// The CUDA_API_EXIT record of `call`.
format::rec::CudaApiExit ApiExitRecord(const ApiCall& call);

/// +1 for cudaProfilerStart / cuProfilerStart, -1 for the Stops, 0 for any other call.
int ProfilerApiOf(format::CudaApi api, uint32_t cbid);

}  // namespace trainprof::inject::cupti
