#include "collector/export/cuda_names.h"

#include "collector/model/cuda_calls.h"

namespace trainprof::collector {

const char* MemoryKindLabel(format::MemoryKind k) {
  switch (k) {
    case format::MemoryKind::kPageable: return "Pageable";
    case format::MemoryKind::kPinned: return "Pinned";
    case format::MemoryKind::kDevice: return "Device";
    case format::MemoryKind::kArray: return "Array";
    case format::MemoryKind::kManaged: return "Managed";
    case format::MemoryKind::kDeviceStatic: return "Device Static";
    case format::MemoryKind::kManagedStatic: return "Managed Static";
    default: return "Unknown";
  }
}

std::string MemcpyEventName(const GpuMemcpy& m) {
  return "Memcpy " + MemcpyKindName(m.kind) + " (" + MemoryKindLabel(m.src_memory) + " -> " +
         MemoryKindLabel(m.dst_memory) + ")";
}

std::string MemsetEventName(const GpuMemset& m) { return std::string("Memset (") + MemoryKindLabel(m.memory) + ")"; }

}  // namespace trainprof::collector
