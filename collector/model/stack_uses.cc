#include "collector/model/stack_uses.h"

#include <iterator>
#include <map>
#include <tuple>

#include "collector/model/cuda_calls.h"

namespace trainprof::collector {

const char* StackedKindName(StackedKind k) {
  static constexpr const char* kNames[] = {"range", "mark", "cuda"};  // in StackedKind's order
  return kNames[static_cast<size_t>(k) < std::size(kNames) ? static_cast<size_t>(k) : 0];
}

std::vector<NamedStackUse> StackUsesOf(const TraceImage& image, const StringPool& strings) {
  std::map<std::tuple<StackedKind, std::string, uint64_t>, NamedStackUse> by_key;
  auto add = [&](StackedKind kind, std::string name, uint64_t stack, uint64_t count, uint64_t total_ns) {
    NamedStackUse& u = by_key[{kind, name, stack}];
    u.kind = kind;
    u.name = std::move(name);
    u.stack = stack;
    u.count += count;
    u.total_ns += total_ns;
  };
  for (const StackUse& u : image.stacks.uses) {
    std::string name(u.name == 0 ? std::string_view("<unnamed>") : strings.Get(u.name));
    if (u.domain != 0) name = std::string(strings.Get(u.domain)) + ":" + name;
    add(u.kind == StackUseKind::kMark ? StackedKind::kMark : StackedKind::kRange, std::move(name), u.stack, u.count,
        u.total_ns);
  }
  for (const CudaCall& c : image.cuda.calls) {
    if (c.stack == 0) continue;
    add(StackedKind::kCuda, CudaApiDisplayName(strings.Get(c.name)), c.stack, 1, c.returned ? c.duration() : 0);
  }
  std::vector<NamedStackUse> out;
  out.reserve(by_key.size());
  for (auto& [key, u] : by_key) out.push_back(std::move(u));
  return out;
}

}  // namespace trainprof::collector
