// A kernel's launch configuration, kept once per distinct value: a training run launches millions
// of kernels with a few hundred distinct (grid, block, registers, shared memory, launch type)
// tuples, so a GpuKernel holds a 4-byte index into its image's KernelConfigs instead of the 40
// bytes (docs/performance.md, "CUDA records: measured, and the plan").
//
//   GpuKernel{..., config = 2} ──► CudaData::kernel_configs[2] = {grid 256x1x1, block 128x1x1, 40 regs, ...}
//
// Index 0 is always the all-zero configuration (a kernel read from a source that has none).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "trainprof/trace_format.h"

namespace trainprof::collector {

/// How a kernel was launched: CUPTI's CUpti_ActivityKernel gridX/Y/Z, blockX/Y/Z,
/// registersPerThread, staticSharedMemory and dynamicSharedMemory (bytes per block), launchType.
struct KernelConfig {
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t registers = 0;       ///< per thread
  uint32_t static_shared = 0;   ///< bytes per block
  uint32_t dynamic_shared = 0;  ///< bytes per block
  format::KernelLaunch launch = format::KernelLaunch::kRegular;
  bool operator==(const KernelConfig&) const = default;
};

/// The distinct launch configurations of one image, each with a stable index.
class KernelConfigs {
 public:
  KernelConfigs() : configs_(1) {}

  /// The index of `c`, added if new. Consecutive kernels mostly repeat a configuration: the last
  /// one is checked before the hash map.
  uint32_t Intern(const KernelConfig& c);

  /// The index Intern gave `c`, without adding it: UINT32_MAX for a configuration never interned.
  uint32_t Find(const KernelConfig& c) const;

  /// The configuration at `index`; the all-zero one (index 0) for an index this table never gave.
  const KernelConfig& operator[](uint32_t index) const {
    return index < configs_.size() ? configs_[index] : configs_[0];
  }
  size_t size() const { return configs_.size(); }

 private:
  struct Hash {
    size_t operator()(const KernelConfig& c) const;
  };
  std::vector<KernelConfig> configs_;
  std::unordered_map<KernelConfig, uint32_t, Hash> index_;
  uint32_t last_ = 0;
};

}  // namespace trainprof::collector
