#include "collector/model/cuda_calls.h"

#include <array>
#include <cctype>

namespace trainprof::collector {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

constexpr std::array<std::string_view, 7> kSyncCalls = {
    "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaThreadSynchronize",
    "cuCtxSynchronize",      "cuStreamSynchronize",   "cuEventSynchronize"};

// "_ptsz" / "_ptds" variants (per-thread default stream) are the same call.
std::string_view WithoutPerThreadSuffix(std::string_view s) {
  for (std::string_view suffix : {"_ptsz", "_ptds"}) {
    if (s.size() > suffix.size() && s.ends_with(suffix)) return s.substr(0, s.size() - suffix.size());
  }
  return s;
}

}  // namespace

std::string CudaApiDisplayName(std::string_view s) {
  const size_t v = s.rfind("_v");
  if (v == std::string_view::npos || v == 0 || s.size() - (v + 2) < 4) return std::string(s);
  for (size_t i = v + 2; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::string(s);
  }
  return std::string(s.substr(0, v));
}

Correlated CorrelateGpuRecords(const CudaData& data) { return CorrelateGpuRecords(std::vector{&data}); }

Correlated CorrelateGpuRecords(const std::vector<const CudaData*>& sources) {
  IdSpan copies, kernels;
  for (const CudaData* data : sources) {
    for (const GpuMemcpy& m : data->memcpys) copies.Add(m.correlation);
    for (const GpuKernel& k : data->kernels) kernels.Add(k.correlation);
  }
  Correlated c{IdMap<const GpuMemcpy*>(copies), IdMap<const GpuKernel*>(kernels)};
  for (const CudaData* data : sources) {
    for (const GpuMemcpy& m : data->memcpys) c.copies.Emplace(m.correlation, &m);
    for (const GpuKernel& k : data->kernels) c.kernels.Emplace(k.correlation, &k);
  }
  return c;
}

IdMap<uint64_t> EnterByCorrelation(const CudaData& data) { return EnterByCorrelation(std::vector{&data}); }

IdMap<uint64_t> EnterByCorrelation(const std::vector<const CudaData*>& sources) {
  IdSpan span;
  for (const CudaData* data : sources) {
    for (const CudaCall& c : data->calls) span.Add(c.correlation);
  }
  IdMap<uint64_t> enter(span);
  for (const CudaData* data : sources) {
    for (const CudaCall& c : data->calls) enter.Emplace(c.correlation, c.begin_ns);
  }
  return enter;
}

CallClass ClassifyCall(std::string_view name, const GpuMemcpy* copy, bool has_kernel) {
  const std::string_view base = WithoutPerThreadSuffix(name);
  for (std::string_view s : kSyncCalls) {
    if (base == s) return CallClass::kSync;
  }
  if (StartsWith(base, "cudaMemcpy") || StartsWith(base, "cuMemcpy")) {
    const bool async = base.find("Async") != std::string_view::npos;
    if (!async || (copy != nullptr && copy->pageable())) return CallClass::kCopy;
    return CallClass::kOther;
  }
  if (has_kernel || StartsWith(base, "cudaLaunch") || StartsWith(base, "cuLaunch") ||
      StartsWith(base, "cudaGraphLaunch") || StartsWith(base, "cuGraphLaunch")) {
    return CallClass::kLaunch;
  }
  return CallClass::kOther;
}

std::string MemcpyKindName(format::MemcpyKind kind) {
  using K = format::MemcpyKind;
  switch (kind) {
    case K::kHtoD: return "HtoD";
    case K::kDtoH: return "DtoH";
    case K::kHtoA: return "HtoA";
    case K::kAtoH: return "AtoH";
    case K::kAtoA: return "AtoA";
    case K::kAtoD: return "AtoD";
    case K::kDtoA: return "DtoA";
    case K::kDtoD: return "DtoD";
    case K::kHtoH: return "HtoH";
    case K::kPtoP: return "PtoP";
    case K::kUnknown: return "unknown";
  }
  return "kind " + std::to_string(static_cast<uint32_t>(kind));
}

}  // namespace trainprof::collector
