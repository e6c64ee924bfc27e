// CUDA tracing through CUPTI, for one process.
//
//   cuInit ──► InitializeInjection (cuda_injection.cc) ──► StartCudaTracing(), once per process:
//              libcupti found and dlopen'ed (cupti_locate.h), its functions resolved
//              (cupti_api.h), a subscriber for the runtime and driver API callbacks, activity
//              buffers and our clock registered, the activity kinds enabled, the flush thread
//              started, an atexit handler registered; GPU_STATUS kOn — or, if any step fails,
//              GPU_STATUS kUnavailable and one `trainprof:` line, and everything else records on.
//   API call ──► OnApiCallback on the calling thread (hot path: no allocation, lock or system
//              call once a function's name is interned): CUDA_API_ENTER / CUDA_API_EXIT.
//   buffers ──► CUPTI's thread or the flush thread: activity records → GPU_* records
//              (activity_convert.h), CUPTI's drop counts → GPU_DROPPED.
//   exit() ──► the atexit handler stops the flush thread, forces a flush, GPU_STATUS kFlushed.
//   fork() ──► OnForkChildCuda(): the child never touches the inherited CUDA/CUPTI state (no
//              flush, no unsubscribe; the flush thread does not exist there). A child whose parent
//              never started CUDA tracing may start its own when it calls cuInit.
#pragma once

namespace trainprof::inject::cupti {

/// Sets up CUDA tracing in this process (see above). Thread-safe; later calls do nothing.
void StartCudaTracing();

/// Child side of fork(), from the library's atfork handler.
void OnForkChildCuda();

}  // namespace trainprof::inject::cupti
