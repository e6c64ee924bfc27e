// The names torch.profiler's (Kineto's) traces give GPU work that has no name of its own, used by
// both exports: "Memcpy HtoD (Pageable -> Device)", "Memset (Device)".
#pragma once

#include <string>

#include "collector/model/cuda_model.h"

namespace trainprof::collector {

/// "Pageable", "Pinned", "Device", ... ("Unknown" for a kind CUPTI did not give).
const char* MemoryKindLabel(format::MemoryKind kind);

/// "Memcpy HtoD (Pageable -> Device)".
std::string MemcpyEventName(const GpuMemcpy& m);

/// "Memset (Device)".
std::string MemsetEventName(const GpuMemset& m);

}  // namespace trainprof::collector
