#include "collector/model/kernel_configs.h"

namespace trainprof::collector {

size_t KernelConfigs::Hash::operator()(const KernelConfig& c) const {
  // FNV-1a over the ten 32-bit fields (field by field: the struct's bytes are not hashed).
  const uint32_t fields[] = {c.grid[0],       c.grid[1],          c.grid[2],
                             c.block[0],      c.block[1],         c.block[2],
                             c.registers,     c.static_shared,    c.dynamic_shared,
                             static_cast<uint32_t>(c.launch)};
  uint64_t h = 14695981039346656037ull;
  for (uint32_t f : fields) {
    h ^= f;
    h *= 1099511628211ull;
  }
  return static_cast<size_t>(h ^ (h >> 32));
}

uint32_t KernelConfigs::Intern(const KernelConfig& c) {
  if (configs_[last_] == c) return last_;
  if (c == configs_[0]) return last_ = 0;
  auto [it, fresh] = index_.try_emplace(c, static_cast<uint32_t>(configs_.size()));
  if (fresh) configs_.push_back(c);
  return last_ = it->second;
}

uint32_t KernelConfigs::Find(const KernelConfig& c) const {
  if (c == configs_[0]) return 0;
  auto it = index_.find(c);
  return it == index_.end() ? UINT32_MAX : it->second;
}

}  // namespace trainprof::collector
