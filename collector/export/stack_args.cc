#include "collector/export/stack_args.h"

#include "collector/export/chrome_writer.h"

namespace trainprof::collector {

const std::string& StackArgs::Member(const TraceImage& img, uint64_t id) {
  if (id == 0) return none_;
  auto [it, fresh] = members_.try_emplace({&img, id});
  if (!fresh) return it->second;
  const ShownStack shown = symbols_.Show(img.stacks, id);
  std::string& out = it->second;
  if (shown.frames.empty()) return out;  // an undefined id, or only trainprof's frames: no member
  out = "\"stack\":[";
  for (size_t i = 0; i < shown.frames.size(); ++i) {
    if (i > 0) out += ',';
    out += Quote(shown.frames[i].Label());
  }
  out += ']';
  return out;
}

}  // namespace trainprof::collector
