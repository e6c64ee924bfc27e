// JSON of the CUDA tables: integers are ns or bytes; mean, std, median, percent and bandwidth are
// derived numbers (docs/report-schema.md).
#include "collector/render/render_json_cuda.h"

namespace trainprof::collector {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

// The time statistics of a row, named as in the NVTX ranges.
void AddTime(const SampleStats& s, Json* j) {
  (*j)["total_ns"] = s.total;
  (*j)["percent"] = nullptr;  // placeholder keeps the documented order; set by the caller
  (*j)["mean_ns"] = s.mean;
  (*j)["std_ns"] = s.std;
  (*j)["min_ns"] = s.min;
  (*j)["median_ns"] = s.median;
  (*j)["max_ns"] = s.max;
}

}  // namespace

Json CudaApiJson(const std::vector<CudaApiRow>& rows) {
  Json out = Json::array();
  for (const CudaApiRow& r : rows) {
    Json j = {{"name", r.name}, {"api", r.api}, {"calls", r.time.count}};
    AddTime(r.time, &j);
    j["percent"] = r.percent;
    j["errors"] = r.errors;
    j["unfinished"] = r.unfinished;
    out.push_back(std::move(j));
  }
  return out;
}

Json KernelsJson(const std::vector<KernelRow>& rows) {
  Json out = Json::array();
  for (const KernelRow& r : rows) {
    Json j = {{"name", r.name}, {"mangled", r.mangled}, {"instances", r.time.count}};
    AddTime(r.time, &j);
    j["percent"] = r.percent;
    j["grid"] = r.grid;
    j["block"] = r.block;
    j["grid_most_common"] = r.grid_most_common;
    j["block_most_common"] = r.block_most_common;
    j["grid_variants"] = r.grid_variants;
    j["block_variants"] = r.block_variants;
    out.push_back(std::move(j));
  }
  return out;
}

Json MemoryOpsJson(const std::vector<MemoryOpRow>& rows) {
  Json out = Json::array();
  for (const MemoryOpRow& r : rows) {
    Json j = {{"kind", r.kind}, {"label", r.label}, {"count", r.time.count}};
    AddTime(r.time, &j);
    j["percent"] = r.percent;
    j["total_bytes"] = r.size.total;
    j["mean_bytes"] = r.size.mean;
    j["min_bytes"] = r.size.min;
    j["median_bytes"] = r.size.median;
    j["max_bytes"] = r.size.max;
    j["bandwidth_gbps"] = OrNull(r.bandwidth_gbps);
    j["pageable_count"] = r.pageable_count;
    j["pageable_bytes"] = r.pageable_bytes;
    out.push_back(std::move(j));
  }
  return out;
}

Json DevicesJson(const std::vector<DeviceRow>& rows) {
  Json out = Json::array();
  for (const DeviceRow& d : rows) {
    const bool lat = d.latency_count > 0;
    out.push_back({{"pid", OrNull(d.pid)},
                   {"host", d.host},
                   {"device", d.device},
                   {"name", d.name},
                   {"processes", d.processes},
                   {"kernels", d.kernels},
                   {"kernel_ns", d.kernel_ns},
                   {"memcpys", d.memcpys},
                   {"memsets", d.memsets},
                   {"memory_ns", d.memory_ns},
                   {"busy_ns", d.busy_ns},
                   {"lifetime_ns", d.lifetime_ns},
                   {"busy_percent", OrNull(d.busy_percent)},
                   {"active_begin_ns", d.active_begin_ns},
                   {"active_end_ns", d.active_end_ns},
                   {"active_busy_percent", OrNull(d.active_busy_percent)},
                   {"launch_latency",
                    {{"count", d.latency_count},
                     {"mean_ns", lat ? Json(d.latency_mean_ns) : Json(nullptr)},
                     {"median_ns", lat ? Json(d.latency_median_ns) : Json(nullptr)},
                     {"p95_ns", lat ? Json(d.latency_p95_ns) : Json(nullptr)}}}});
  }
  return out;
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
