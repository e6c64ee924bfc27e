// The CUDA sections of the text report (docs/report.md): GPU devices, CUDA API, GPU kernels, GPU
// memory operations, like `nsys stats` prints cuda_api_sum, cuda_gpu_kern_sum and
// cuda_gpu_mem_time_sum / cuda_gpu_mem_size_sum.
#pragma once

#include <string>

#include "collector/report/report.h"

namespace trainprof::collector {

/// The sections over all processes ("" when no process has CUDA records).
std::string CudaSectionsText(const Report& report);

/// One process's CUDA API, kernel and memory tables (--by-process); "" when it has none.
std::string ProcessCudaText(const ProcessRow& process, const ReportOptions& options);

}  // namespace trainprof::collector
