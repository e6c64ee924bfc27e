// JSON of the CUDA tables and of a process's GPU tracing state (docs/report-schema.md, "CUDA").
#pragma once

#include <nlohmann/json.hpp>

#include "collector/stats/cuda_tables.h"
#include "collector/stats/gpu_tracing.h"

namespace trainprof::collector {

nlohmann::ordered_json CudaApiJson(const std::vector<CudaApiRow>& rows);
nlohmann::ordered_json KernelsJson(const std::vector<KernelRow>& rows);
nlohmann::ordered_json MemoryOpsJson(const std::vector<MemoryOpRow>& rows);
nlohmann::ordered_json DevicesJson(const std::vector<DeviceRow>& rows);
nlohmann::ordered_json GpuTracingJson(const GpuTracing& gpu);

/// Adds cuda_api, cuda_api_omitted, gpu_kernels, gpu_kernels_omitted, memory_ops,
/// memory_ops_omitted and devices to `object`, in that order.
void AddCudaTables(const CudaTables& tables, nlohmann::ordered_json* object);

}  // namespace trainprof::collector
