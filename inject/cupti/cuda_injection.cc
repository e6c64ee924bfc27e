// CUDA injection: the CUDA driver reads CUDA_INJECTION64_PATH inside cuInit, dlopens that library
// (ours, usually preloaded already) and calls its InitializeInjection. Only then is CUPTI loaded:
// a process that never initialises CUDA never maps libcupti.
#include "cupti/cupti_tracer.h"
#include "runtime.h"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  trainprof::inject::EnsureInit();
  trainprof::inject::cupti::StartCudaTracing();
  // Success whatever happened to CUPTI: a failure of ours must never fail the program's cuInit.
  return 1;
}
