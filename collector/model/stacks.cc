#include "collector/model/stacks.h"

#include <algorithm>

namespace trainprof::collector {

const Stack* ImageStacks::Find(uint64_t id) const {
  auto it = std::lower_bound(stacks.begin(), stacks.end(), id, [](const Stack& s, uint64_t v) { return s.id < v; });
  return it != stacks.end() && it->id == id ? &*it : nullptr;
}

bool Stack::SampleCut() const {
  const bool python = std::any_of(frames.begin(), frames.end(), [](const StackFrame& f) { return f.python; });
  return std::any_of(frames.begin(), frames.end(), [&](const StackFrame& f) { return f.cut && f.python == python; });
}

const Module* ImageStacks::ModuleOf(uint64_t address) const {
  for (size_t i = modules.size(); i-- > 0;) {
    if (address >= modules[i].start && address < modules[i].end) return &modules[i];
  }
  return nullptr;
}

}  // namespace trainprof::collector
