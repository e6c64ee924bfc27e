// A small CUDA program with known GPU work, for the CUDA tracing tests.
//   tp_cuda_workload [basic|full|sleep|fork] [ITERATIONS]
// basic: cudaGetDeviceCount, cudaMalloc, one kernel launch, cudaDeviceSynchronize — each call's
//        result printed. Without a GPU (or a driver) CUDA returns an error and the program says
//        which and exits 3: under trainprof it must print and exit exactly the same.
// full:  ITERATIONS (default 10) rounds of: memcpy HtoD from pageable and from pinned memory,
//        memset, kernel `scale` and kernel `offset`, memcpy DtoH to pinned memory,
//        cudaStreamSynchronize; between cudaProfilerStart and cudaProfilerStop; then a CUDA graph
//        of one `scale` kernel launched twice; prints the counts it made ("made: ...").
// sleep: full, then prints "slept-ready" and sleeps 30 s (the test kills it: the periodic flush
//        must already have written the GPU work).
// fork:  full, then fork(); the child prints and _exit(0)s without touching CUDA, the parent
//        runs one more round and exits normally.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void scale(float* p, int n, float f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= f;
}

__global__ void offset(float* p, int n, float d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += d;
}

namespace {

bool Check(const char* what, cudaError_t e) {
  printf("%s: %d %s\n", what, static_cast<int>(e), cudaGetErrorName(e));
  fflush(stdout);
  return e == cudaSuccess;
}

int Basic() {
  int n = -1;
  if (!Check("cudaGetDeviceCount", cudaGetDeviceCount(&n))) return 3;
  printf("devices: %d\n", n);
  float* d = nullptr;
  if (!Check("cudaMalloc", cudaMalloc(&d, 1 << 20))) return 3;
  scale<<<4, 256>>>(d, 1024, 2.0f);
  if (!Check("launch", cudaGetLastError())) return 3;
  if (!Check("cudaDeviceSynchronize", cudaDeviceSynchronize())) return 3;
  cudaFree(d);
  return 0;
}

struct Counts {
  int scale = 0, offset = 0, htod_pageable = 0, htod_pinned = 0, dtoh = 0, memset = 0, syncs = 0;
  long long bytes_htod = 0, bytes_dtoh = 0;
};

constexpr int kN = 1 << 20;  // floats per buffer: 4 MiB

bool Round(float* dev, float* pinned, std::vector<float>& pageable, cudaStream_t s, Counts* c) {
  const size_t bytes = kN * sizeof(float);
  bool ok = Check("memcpy HtoD pageable", cudaMemcpyAsync(dev, pageable.data(), bytes, cudaMemcpyHostToDevice, s));
  ++c->htod_pageable;
  c->bytes_htod += bytes;
  ok &= Check("memcpy HtoD pinned", cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, s));
  ++c->htod_pinned;
  c->bytes_htod += bytes;
  ok &= Check("memset", cudaMemsetAsync(dev, 0, bytes, s));
  ++c->memset;
  scale<<<kN / 256, 256, 0, s>>>(dev, kN, 1.5f);
  ++c->scale;
  offset<<<kN / 256, 256, 0, s>>>(dev, kN, 0.5f);
  ++c->offset;
  ok &= Check("launches", cudaGetLastError());
  ok &= Check("memcpy DtoH pinned", cudaMemcpyAsync(pinned, dev, bytes, cudaMemcpyDeviceToHost, s));
  ++c->dtoh;
  c->bytes_dtoh += bytes;
  ok &= Check("cudaStreamSynchronize", cudaStreamSynchronize(s));
  ++c->syncs;
  return ok;
}

int Full(const char* mode, int iterations) {
  if (Basic() != 0) return 3;
  float* dev = nullptr;
  float* pinned = nullptr;
  std::vector<float> pageable(kN, 1.0f);
  cudaStream_t s;
  if (!Check("cudaMalloc", cudaMalloc(&dev, kN * sizeof(float))) ||
      !Check("cudaMallocHost", cudaMallocHost(&pinned, kN * sizeof(float))) ||
      !Check("cudaStreamCreate", cudaStreamCreate(&s))) {
    return 3;
  }
  Counts c;
  Check("cudaProfilerStart", cudaProfilerStart());
  for (int i = 0; i < iterations; ++i) {
    if (!Round(dev, pinned, pageable, s, &c)) return 3;
  }
  Check("cudaProfilerStop", cudaProfilerStop());

  // A graph of one kernel, captured from the stream and launched twice.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  Check("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  scale<<<kN / 256, 256, 0, s>>>(dev, kN, 1.0f);
  Check("cudaStreamEndCapture", cudaStreamEndCapture(s, &graph));
  int graph_kernels = 0;
  if (Check("cudaGraphInstantiate", cudaGraphInstantiate(&exec, graph, 0))) {
    for (int i = 0; i < 2; ++i) {
      if (Check("cudaGraphLaunch", cudaGraphLaunch(exec, s))) ++graph_kernels;
    }
  }
  Check("cudaStreamSynchronize", cudaStreamSynchronize(s));
  ++c.syncs;
  printf("made: scale=%d offset=%d graph_scale=%d htod_pageable=%d htod_pinned=%d dtoh=%d memset=%d "
         "stream_syncs=%d bytes_htod=%lld bytes_dtoh=%lld profiler_ranges=1\n",
         c.scale, c.offset, graph_kernels, c.htod_pageable, c.htod_pinned, c.dtoh, c.memset, c.syncs,
         c.bytes_htod, c.bytes_dtoh);
  fflush(stdout);

  if (strcmp(mode, "sleep") == 0) {
    printf("slept-ready\n");
    fflush(stdout);
    sleep(30);
  } else if (strcmp(mode, "fork") == 0) {
    pid_t pid = fork();
    if (pid == 0) {
      printf("child: no CUDA here\n");
      fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (!Round(dev, pinned, pageable, s, &c)) return 3;
    printf("parent: one more round\n");
  }
  cudaFreeHost(pinned);
  cudaFree(dev);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "basic";
  int iterations = argc > 2 ? atoi(argv[2]) : 10;
  if (strcmp(mode, "basic") == 0) return Basic();
  return Full(mode, iterations);
}
