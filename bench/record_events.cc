// Records a given number of NVTX events as fast as possible, for the whole-process benchmarks of
// scripts/bench (bytes per record, RSS of the profiled process, report throughput).
//
//   tp_record_events PAIRS [THREADS] [KIND]
//     PAIRS    push+pop pairs (or marks) per thread
//     THREADS  recording threads (default 1)
//     KIND     pushpop (default) | mark | nested (push a, push b, pop, pop: depth 2)
//              | mixed (per iteration 8 records: push "step", push one of 8 layer names, mark,
//                start/end "prefetch", pop, pop, and a push/pop in a domain "torch")
// Prints "events N" (records written by the program's NVTX calls) and its peak RSS (VmHWM) in KiB.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tp_record_events PAIRS [THREADS] [pushpop|mark|nested]\n");
    return 2;
  }
  const long long pairs = std::atoll(argv[1]);
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const char* kind = argc > 3 ? argv[3] : "pushpop";
  auto work = [&] {
    if (std::strcmp(kind, "mark") == 0) {
      for (long long i = 0; i < pairs; ++i) nvtxMarkA("mark");
    } else if (std::strcmp(kind, "nested") == 0) {
      for (long long i = 0; i < pairs; ++i) {
        nvtxRangePushA("outer");
        nvtxRangePushA("inner");
        nvtxRangePop();
        nvtxRangePop();
      }
    } else if (std::strcmp(kind, "mixed") == 0) {
      static const char* const kLayers[8] = {"conv1", "conv2", "bn1", "relu", "pool", "fc1", "fc2", "loss"};
      nvtxDomainHandle_t torch = nvtxDomainCreateA("torch");
      nvtxEventAttributes_t attr = {};
      attr.version = NVTX_VERSION;
      attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
      attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
      attr.message.ascii = "aten::linear";
      for (long long i = 0; i < pairs; ++i) {
        nvtxRangePushA("step");
        nvtxRangePushA(kLayers[i & 7]);
        nvtxMarkA("batch ready");
        nvtxRangeId_t id = nvtxRangeStartA("prefetch");
        nvtxRangeEnd(id);
        nvtxRangePop();
        nvtxDomainRangePushEx(torch, &attr);
        nvtxDomainRangePop(torch);
        nvtxRangePop();
      }
    } else {
      for (long long i = 0; i < pairs; ++i) {
        nvtxRangePushA("step");
        nvtxRangePop();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  const long long per = std::strcmp(kind, "mark") == 0     ? 1
                        : std::strcmp(kind, "nested") == 0 ? 4
                        : std::strcmp(kind, "mixed") == 0  ? 9
                                                           : 2;
  // Peak RSS of this process image (VmHWM: getrusage's ru_maxrss would carry the peak of the
  // process that exec'd us, e.g. a Python driver).
  long hwm_kib = -1;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::sscanf(line, "VmHWM: %ld kB", &hwm_kib) == 1) break;
    }
    std::fclose(f);
  }
  std::printf("events %lld\nmax_rss_kib %ld\n", pairs * per * threads, hwm_kib);
  return 0;
}
