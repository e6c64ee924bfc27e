#include "collector/symbols/sample_frames.h"

#include <algorithm>

namespace trainprof::collector {
namespace {

std::vector<SymbolFrame> Placeholder(const char* name) {
  SymbolFrame f;
  f.function = name;
  return {f};
}

}  // namespace

std::vector<SymbolFrame> SampleFrames(const ImageStacks& stacks, uint64_t id, Symbolizer* symbols) {
  if (id == 0) return Placeholder("<no stack>");
  ShownStack shown = symbols->Show(stacks, id);
  if (!shown.known) return Placeholder("<unknown stack>");
  std::vector<SymbolFrame>& f = shown.frames;
  const bool python = std::any_of(f.begin(), f.end(), [](const SymbolFrame& s) { return s.python; });
  f.erase(std::remove_if(f.begin(), f.end(),
                         [&](const SymbolFrame& s) { return python ? !s.python : s.function == "__restore_rt"; }),
          f.end());
  if (f.empty()) return Placeholder("<no frames>");
  return std::move(f);
}

}  // namespace trainprof::collector
