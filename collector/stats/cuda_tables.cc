#include "collector/stats/cuda_tables.h"

namespace trainprof::collector {
namespace {

template <typename T>
size_t Cut(std::vector<T>* rows, size_t top) {
  if (top == 0 || rows->size() <= top) return 0;
  const size_t omitted = rows->size() - top;
  rows->resize(top);
  return omitted;
}

}  // namespace

CudaTables BuildCudaTables(const std::vector<const CudaDigest*>& images, const std::vector<const Process*>& processes,
                           const StringPool& strings, bool full_names, size_t top, bool merged, bool devices) {
  CudaTables t;
  t.api = CudaApiTable(images, strings);
  t.api_omitted = Cut(&t.api, top);
  t.kernels = KernelTable(images, strings, full_names);
  t.kernels_omitted = Cut(&t.kernels, top);
  t.memory = MemoryTable(images);
  t.memory_omitted = Cut(&t.memory, top);
  if (!devices) {
    // left empty
  } else if (merged) {
    t.devices = MergedDevices(processes, strings);
  } else {
    for (const Process* p : processes) {
      std::vector<DeviceRow> rows = ProcessDevices(*p, strings);
      t.devices.insert(t.devices.end(), rows.begin(), rows.end());
    }
  }
  return t;
}

}  // namespace trainprof::collector
