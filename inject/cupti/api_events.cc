#include "cupti/api_events.h"

#include <cstring>

namespace trainprof::inject::cupti {
namespace {

using format::CudaApi;

// correlationData of a call we recorded at enter: a tag in the high bits, the correlation below.
constexpr uint64_t kRecordedTag = 0x7470ull << 48;  // "tp"
constexpr uint64_t kSkippedTag = 0x7473ull << 48;   // "ts": counted in the depth, not recorded

}  // namespace

bool DecodeApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data,
                       ApiCall* out) {
  if (data == nullptr) return false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    out->api = CudaApi::kRuntime;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    out->api = CudaApi::kDriver;
  } else {
    return false;
  }
  if (data->callbackSite == CUPTI_API_ENTER) {
    out->enter = true;
  } else if (data->callbackSite == CUPTI_API_EXIT) {
    out->enter = false;
  } else {
    return false;
  }
  out->cbid = cbid;
  out->name = data->functionName;
  out->correlation = data->correlationId;
  out->status = 0;
  if (!out->enter && data->functionReturnValue != nullptr) {
    int32_t status;  // cudaError_t and CUresult are both 32-bit enums
    memcpy(&status, data->functionReturnValue, sizeof(status));
    out->status = static_cast<uint32_t>(status);
  }
  return true;
}

bool TrackNesting(uint32_t* runtime_depth, uint64_t* call_data, const ApiCall& call) {
  const bool runtime = call.api == CudaApi::kRuntime;
  const uint64_t mark = kRecordedTag | call.correlation;
  if (call.enter) {
    if (!runtime && *runtime_depth > 0) {  // made by the runtime call this thread is in
      if (call_data != nullptr) *call_data = 0;
      return false;
    }
    if (runtime) ++*runtime_depth;
    if (call_data != nullptr) *call_data = mark;
    return true;
  }
  if (call_data == nullptr) {  // no per-call data (not seen from CUPTI): decide by depth alone
    if (!runtime) return *runtime_depth == 0;
    if (*runtime_depth == 0) return false;
    --*runtime_depth;
    return true;
  }
  if (*call_data == (kSkippedTag | call.correlation)) {  // entered outside a capture range
    *call_data = 0;
    if (runtime && *runtime_depth > 0) --*runtime_depth;
    return false;
  }
  if (*call_data != mark) return false;  // its enter was not recorded
  *call_data = 0;
  if (runtime && *runtime_depth > 0) --*runtime_depth;
  return true;
}

void SkipRecording(uint64_t* call_data, const ApiCall& call) {
  if (call_data != nullptr) *call_data = kSkippedTag | call.correlation;
}

format::rec::CudaApiEnter ApiEnterRecord(const ApiCall& call, uint32_t name_id) {
  return {.api = static_cast<uint64_t>(call.api), .cbid = call.cbid, .name = name_id, .correlation = call.correlation};
}

format::rec::CudaApiExit ApiExitRecord(const ApiCall& call) {
  return {.correlation = call.correlation, .status = call.status};
}

int ProfilerApiOf(format::CudaApi api, uint32_t cbid) {
  if (api == CudaApi::kRuntime) {
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) return 1;
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) return -1;
  } else {
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) return 1;
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) return -1;
  }
  return 0;
}

}  // namespace trainprof::inject::cupti
