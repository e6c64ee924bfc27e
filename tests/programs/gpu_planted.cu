// GPU training-loop shapes with one planted GPU bottleneck each, for scripts/gpu_check (a GPU is
// needed to run them; here they only build). Each "step" is a trainprof data-wait range followed
// by GPU work, so the collector's step analysis applies as to a PyTorch loop.
//
//   tp_gpu_planted sync   [steps]  each step: ~2 ms of kernels, then a 4-byte DtoH copy of the
//                                  loss and cudaStreamSynchronize (what .item() does), then 3 ms
//                                  of host work while the GPU idles: sync-bound
//   tp_gpu_planted launch [steps]  each step: 2000 tiny kernels (a few us each) launched one by
//                                  one: the GPU idles between them: launch-bound
//   tp_gpu_planted busy   [steps]  each step: one long kernel (~20 ms): the GPU is busy
// Exit status 0 on success; 2 on a CUDA error (printed).
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

__global__ void Spin(float* out, long long cycles) {
  long long start = clock64();
  float x = threadIdx.x;
  while (clock64() - start < cycles) x = x * 0.999f + 0.001f;
  if (threadIdx.x == 0) out[blockIdx.x] = x;
}

__global__ void Tiny(float* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * 1.0001f + 1.0f;
}

bool Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "tp_gpu_planted: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// A data wait as the Python shim records it (domain "trainprof", category 1 = kDataWait).
nvtxDomainHandle_t Phases() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA("trainprof");
  return d;
}

void Range(const char* name, uint32_t category, bool push) {
  if (push) {
    nvtxEventAttributes_t a = {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = category;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(Phases(), &a);
  } else {
    nvtxDomainRangePop(Phases());
  }
}

void SleepMs(double ms) { std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(ms * 1000))); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tp_gpu_planted sync|launch|busy [steps]\n");
    return 2;
  }
  const char* mode = argv[1];
  const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
  int clock_khz = 0;
  if (!Check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), "cudaDeviceGetAttribute")) return 2;
  const long long cycles_per_ms = static_cast<long long>(clock_khz);
  float *dev = nullptr, host = 0;
  const int n = 1 << 16;
  if (!Check(cudaMalloc(&dev, n * sizeof(float)), "cudaMalloc")) return 2;
  if (!Check(cudaMemset(dev, 0, n * sizeof(float)), "cudaMemset")) return 2;
  cudaStream_t s;
  if (!Check(cudaStreamCreate(&s), "cudaStreamCreate")) return 2;

  for (int step = 0; step < steps; ++step) {
    Range("enumerate(DataLoader)#Planted.__next__", 1, true);
    SleepMs(0.2);
    Range(nullptr, 0, false);
    Range("Model.forward", 7, true);
    if (std::strcmp(mode, "sync") == 0) {
      Spin<<<132, 128, 0, s>>>(dev, 2 * cycles_per_ms);
      Range(nullptr, 0, false);
      cudaMemcpyAsync(&host, dev, sizeof(float), cudaMemcpyDeviceToHost, s);  // loss.item()
      if (!Check(cudaStreamSynchronize(s), "cudaStreamSynchronize")) return 2;
      SleepMs(3);  // host work (logging, metrics) while the GPU idles
    } else if (std::strcmp(mode, "launch") == 0) {
      for (int k = 0; k < 2000; ++k) Tiny<<<1, 32, 0, s>>>(dev, 32);
      Range(nullptr, 0, false);
      if (!Check(cudaStreamSynchronize(s), "cudaStreamSynchronize")) return 2;
    } else {
      Spin<<<132, 128, 0, s>>>(dev, 20 * cycles_per_ms);
      Range(nullptr, 0, false);
      if (!Check(cudaStreamSynchronize(s), "cudaStreamSynchronize")) return 2;
    }
  }
  if (!Check(cudaGetLastError(), "kernel launch")) return 2;
  cudaStreamDestroy(s);
  cudaFree(dev);
  std::printf("%s: %d steps\n", mode, steps);
  return 0;
}
