// The GPU sections of a process's summary (summary_codec.h): its GPU ops (`gpu_ops`), its device
// uses (`devices`) and what its CUDA records give over its steps (`steps_gpu`), as JSON values and
// back, every field checked on reading (docs/summary-format.md, "Sections").
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "collector/summary/process_summary.h"

namespace trainprof::collector {

nlohmann::json GpuOpsJson(const GpuOpsSummary& g);
nlohmann::json DevicesJson(const std::vector<DeviceUse>& uses);
nlohmann::json StepsGpuJson(const StepsGpu& g);

/// Throw SummaryError naming the field (summary_fields.h) where a value is wrong.
GpuOpsSummary ReadGpuOps(const nlohmann::json& j);
std::vector<DeviceUse> ReadDevices(const nlohmann::json& j);
StepsGpu ReadStepsGpu(const nlohmann::json& j);

}  // namespace trainprof::collector
