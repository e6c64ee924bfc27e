// The stacked events of one image, named and summed per (what, stack): the ranges and marks the
// reader summed (StackUse) and the CUDA calls with a stack (CudaCall::stack), for the call-site
// table (stats/callsites.h) and the folded export (export/export_folded.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/model/model.h"

namespace trainprof::collector {

/// What a stack was taken at, as the report names it.
enum class StackedKind : uint8_t { kRange, kMark, kCuda };
const char* StackedKindName(StackedKind k);  ///< "range", "mark", "cuda"

struct NamedStackUse {
  StackedKind kind = StackedKind::kRange;
  std::string name;  ///< range or mark name ("domain:name" outside the default domain); CUDA API display name
  uint64_t stack = 0;
  uint64_t count = 0;
  uint64_t total_ns = 0;
};

/// The image's stacked events summed per (kind, name, stack), in a stable order (kind, name, stack).
std::vector<NamedStackUse> StackUsesOf(const TraceImage& image, const StringPool& strings);

}  // namespace trainprof::collector
