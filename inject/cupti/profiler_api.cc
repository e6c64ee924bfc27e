#include "cupti/profiler_api.h"

#include "recorder.h"

namespace trainprof::inject::cupti {

void OnCudaProfilerApi(bool start) noexcept {
  ThreadState* t = CurrentThread();
  if (t == nullptr) return;
  uint64_t f[2] = {start ? 1u : 0u, static_cast<uint64_t>(format::CaptureReason::kCudaProfilerApi)};
  RecordTimed(t, format::RecordTag::kCapture, f);
}

}  // namespace trainprof::inject::cupti
