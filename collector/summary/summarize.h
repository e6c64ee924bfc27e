// The map step of a report: one process of a trace into its summary (process_summary.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "collector/model/model.h"
#include "collector/summary/process_summary.h"

namespace trainprof::collector {

/// The summary of trace.processes[i]; `nvtx`: its NVTX summary (stats/nvtx_stats.h CollectNvtx or
/// TakeNvtx), `cuda`: its images' CUDA digests (CollectCudaDigests or TakeCudaDigests), moved in.
/// Names stay StringIds of trace.strings. `symbols`: the symbolizer of its stacks, shared by the
/// processes of a report so that each file is opened once (the summary's symbol problems are
/// those it met first for this process).
ProcessSummary SummarizeProcess(const Trace& trace, size_t i, NvtxSummary nvtx, std::vector<CudaDigest> cuda,
                                Symbolizer* symbols);

/// The CUDA digests of `p`'s images, in image order: copied, or moved out of the images (which are
/// left with empty digests).
std::vector<CudaDigest> CollectCudaDigests(const Process& p);
std::vector<CudaDigest> TakeCudaDigests(Process* p);

/// argv as one shell-like line: arguments with spaces or quotes are single-quoted.
std::string JoinCommand(const std::vector<std::string>& argv);

}  // namespace trainprof::collector
