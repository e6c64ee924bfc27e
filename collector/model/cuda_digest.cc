#include "collector/model/cuda_digest.h"

#include <algorithm>
#include <tuple>

namespace trainprof::collector {
namespace {

uint64_t ApiKey(StringId name, format::CudaApi api) {
  return uint64_t{name} << 8 | static_cast<uint8_t>(api);
}

MemoryOpSamples& MemoryRow(std::vector<MemoryOpSamples>* rows, bool memset, format::MemcpyKind kind) {
  for (MemoryOpSamples& r : *rows) {
    if (r.memset == memset && (memset || r.kind == kind)) return r;
  }
  MemoryOpSamples& r = rows->emplace_back();
  r.memset = memset;
  r.kind = memset ? format::MemcpyKind::kUnknown : kind;
  return r;
}

void MergeCounts(std::map<LaunchDim, uint64_t>* into, const std::map<LaunchDim, uint64_t>& from) {
  for (const auto& [dim, n] : from) (*into)[dim] += n;
}

}  // namespace

void CudaDigest::Call(const CudaCall& c) {
  ++calls_;
  const uint64_t key = ApiKey(c.name, c.api);
  if (key != last_api_key_) {
    auto [it, fresh] = api_index_.try_emplace(key, static_cast<uint32_t>(api_.size()));
    if (fresh) {
      CudaApiSamples& row = api_.emplace_back();
      row.name = c.name;
      row.api = c.api;
    }
    last_api_key_ = key;
    last_api_ = it->second;
  }
  CudaApiSamples& row = api_[last_api_];
  if (!c.returned && c.exit_lost) {
    ++row.exit_lost;
    return;
  }
  if (!c.returned) {
    ++row.unfinished;
    row.first_unfinished_ns = std::min(row.first_unfinished_ns, c.begin_ns);
    return;
  }
  row.time.Add(c.duration());
  if (c.status != 0) ++row.errors;
}

void CudaDigest::Kernel(const GpuKernel& k, const KernelConfig& config) {
  if (k.name != last_kernel_name_ || last_kernel_ == UINT32_MAX) {
    auto [it, fresh] = kernel_index_.try_emplace(k.name, static_cast<uint32_t>(kernels_.size()));
    if (fresh) kernels_.emplace_back().name = k.name;
    last_kernel_name_ = k.name;
    last_kernel_ = it->second;
  }
  KernelSamples& row = kernels_[last_kernel_];
  row.time.Add(k.duration());
  ++row.grids[{config.grid[0], config.grid[1], config.grid[2]}];
  ++row.blocks[{config.block[0], config.block[1], config.block[2]}];
}

void CudaDigest::Memcpy(const GpuMemcpy& m) {
  MemoryOpSamples& row = MemoryRow(&memory_, false, m.kind);
  row.time.Add(m.duration());
  row.size.Add(m.bytes);
  if (m.pageable()) {
    ++row.pageable_count;
    row.pageable_bytes += m.bytes;
  }
}

void CudaDigest::Memset(const GpuMemset& m) {
  MemoryOpSamples& row = MemoryRow(&memory_, true, format::MemcpyKind::kUnknown);
  row.time.Add(m.duration());
  row.size.Add(m.bytes);
}

void CudaDigest::Overhead(const GpuOverhead& o) { overhead_ns_ += o.end_ns - o.start_ns; }

CudaDigest CudaDigest::FromRows(std::vector<CudaApiSamples> api, std::vector<KernelSamples> kernels,
                                std::vector<MemoryOpSamples> memory, uint64_t calls, uint64_t overhead_ns) {
  CudaDigest d;
  StringId top = 0;
  for (const CudaApiSamples& r : api) top = std::max(top, r.name);
  for (const KernelSamples& r : kernels) top = std::max(top, r.name);
  d.api_ = std::move(api);
  d.kernels_ = std::move(kernels);
  // Memory rows of one key merged (Remap leaves them as they are: the reader makes one a key).
  std::sort(memory.begin(), memory.end(), [](const MemoryOpSamples& a, const MemoryOpSamples& b) {
    return std::tie(a.memset, a.kind) < std::tie(b.memset, b.kind);
  });
  for (MemoryOpSamples& m : memory) {
    if (!d.memory_.empty() && d.memory_.back().memset == m.memset && d.memory_.back().kind == m.kind) {
      MemoryOpSamples& into = d.memory_.back();
      into.time.Merge(m.time);
      into.size.Merge(m.size);
      into.pageable_count += m.pageable_count;
      into.pageable_bytes += m.pageable_bytes;
      continue;
    }
    d.memory_.push_back(std::move(m));
  }
  d.calls_ = calls;
  d.overhead_ns_ = overhead_ns;
  std::vector<StringId> identity(static_cast<size_t>(top) + 1);
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<StringId>(i);
  d.Remap(identity);
  return d;
}

void CudaDigest::Remap(const std::vector<StringId>& pool_of_ref) {
  auto map = [&](StringId ref) { return ref < pool_of_ref.size() ? pool_of_ref[ref] : StringId{0}; };
  for (CudaApiSamples& r : api_) r.name = map(r.name);
  for (KernelSamples& r : kernels_) r.name = map(r.name);

  std::stable_sort(api_.begin(), api_.end(), [](const CudaApiSamples& a, const CudaApiSamples& b) {
    return std::tie(a.name, a.api) < std::tie(b.name, b.api);
  });
  std::vector<CudaApiSamples> api;
  api_index_.clear();
  for (CudaApiSamples& r : api_) {
    if (!api.empty() && api.back().name == r.name && api.back().api == r.api) {
      CudaApiSamples& into = api.back();
      into.time.Merge(r.time);
      into.errors += r.errors;
      into.unfinished += r.unfinished;
      into.exit_lost += r.exit_lost;
      into.first_unfinished_ns = std::min(into.first_unfinished_ns, r.first_unfinished_ns);
      continue;
    }
    api_index_.emplace(ApiKey(r.name, r.api), static_cast<uint32_t>(api.size()));
    api.push_back(std::move(r));
  }
  api_ = std::move(api);

  std::stable_sort(kernels_.begin(), kernels_.end(),
                   [](const KernelSamples& a, const KernelSamples& b) { return a.name < b.name; });
  std::vector<KernelSamples> kernels;
  kernel_index_.clear();
  for (KernelSamples& r : kernels_) {
    if (!kernels.empty() && kernels.back().name == r.name) {
      kernels.back().time.Merge(r.time);
      MergeCounts(&kernels.back().grids, r.grids);
      MergeCounts(&kernels.back().blocks, r.blocks);
      continue;
    }
    kernel_index_.emplace(r.name, static_cast<uint32_t>(kernels.size()));
    kernels.push_back(std::move(r));
  }
  kernels_ = std::move(kernels);

  std::sort(memory_.begin(), memory_.end(), [](const MemoryOpSamples& a, const MemoryOpSamples& b) {
    return std::tie(a.memset, a.kind) < std::tie(b.memset, b.kind);
  });
  last_api_key_ = UINT64_MAX;
  last_kernel_ = UINT32_MAX;
}

CudaDigest DigestOf(const CudaData& data) {
  CudaDigest d;
  for (const CudaCall& c : data.calls) d.Call(c);
  for (const GpuKernel& k : data.kernels) d.Kernel(k, data.kernel_configs[k.config]);
  for (const GpuMemcpy& m : data.memcpys) d.Memcpy(m);
  for (const GpuMemset& m : data.memsets) d.Memset(m);
  for (const GpuOverhead& o : data.overheads) d.Overhead(o);
  // Already pool ids: the identity, for the same row order as the reader's.
  StringId top = 0;
  for (const CudaApiSamples& r : d.api()) top = std::max(top, r.name);
  for (const KernelSamples& r : d.kernels()) top = std::max(top, r.name);
  std::vector<StringId> identity(size_t{top} + 1);
  for (StringId i = 0; i <= top; ++i) identity[i] = i;
  d.Remap(identity);
  return d;
}

}  // namespace trainprof::collector
