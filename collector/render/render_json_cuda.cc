// JSON of the CUDA tables: integers are ns or bytes; mean, std, median, percent and bandwidth are
// derived numbers (docs/report-schema.md).
#include "collector/render/render_json_cuda.h"
#include "collector/render/table_render.h"
#include "collector/report/report_tables.h"

namespace trainprof::collector {
using Json = nlohmann::ordered_json;

Json CudaApiJson(const std::vector<CudaApiRow>& rows) { return TableJson(CudaApiTableDef(), RowsOf(rows, CudaApiCells)); }
Json KernelsJson(const std::vector<KernelRow>& rows) { return TableJson(KernelTableDef(), RowsOf(rows, KernelCells)); }
Json MemoryOpsJson(const std::vector<MemoryOpRow>& rows) {
  return TableJson(MemoryTableDef(), RowsOf(rows, MemoryCells));
}
Json DevicesJson(const std::vector<DeviceRow>& rows) {
  return TableJson(DeviceTable(), RowsOf(rows, [](const DeviceRow& d) { return DeviceCells(d); }));
}

Json GpuTracingJson(const GpuTracing& g) {
  return {{"state", g.state},
          {"flushed", g.flushed},
          {"cupti_result", OrNull(g.cupti_result)},
          {"cupti_version", g.cupti_version},
          {"driver_version", g.driver_version},
          {"message", g.message},
          {"records_dropped", g.records_dropped},
          {"invalid_timestamps", g.invalid_timestamps},
          {"calls", g.calls},
          {"unfinished_calls", g.unfinished_calls},
          {"unfinished_names", g.unfinished_names},
          {"lost_exits", g.lost_exits},
          {"unmatched_exits", g.unmatched_exits},
          {"api_errors", g.api_errors},
          {"overhead_ns", g.overhead_ns},
          {"capture_pauses", g.capture_pauses}};
}

void AddCudaTables(const CudaTables& t, Json* o) {
  (*o)["cuda_api"] = CudaApiJson(t.api);
  (*o)["cuda_api_omitted"] = t.api_omitted;
  (*o)["gpu_kernels"] = KernelsJson(t.kernels);
  (*o)["gpu_kernels_omitted"] = t.kernels_omitted;
  (*o)["memory_ops"] = MemoryOpsJson(t.memory);
  (*o)["memory_ops_omitted"] = t.memory_omitted;
  (*o)["devices"] = DevicesJson(t.devices);
}

}  // namespace trainprof::collector
