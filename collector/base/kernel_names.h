// Kernel names for display. CUPTI reports a kernel by its mangled name (`_Z6matmulPfS_S_i`); the
// report demangles it (abi::__cxa_demangle, the C++ ABI's demangler that c++filt uses) and, unless
// `--full-names`, shortens it, since the demangled names of template kernels (PyTorch, CUTLASS,
// Thrust) run to kilobytes:
//
//   void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>(int, ...)
//     ──► at::native::vectorized_elementwise_kernel<...>
//
// The kernel tables stay keyed by the mangled name, so kernels whose shortened names are equal
// remain separate rows. Rules: docs/report.md ("Kernel names").
#pragma once

#include <string>
#include <string_view>

namespace trainprof::collector {

/// The demangled name, or `name` unchanged when it is not a mangled C++ name (an `extern "C"`
/// kernel: it must start with "_Z") or does not demangle (e.g. a name cut at 4096 bytes by the
/// writer).
std::string DemangleKernelName(std::string_view name);

/// `demangled` shortened: the return type and the parameter list are dropped, and each template
/// argument list outside brackets is replaced by "<...>". A name whose brackets do not balance is
/// returned unchanged.
std::string ShortenKernelName(std::string_view demangled);

/// The name the report shows: DemangleKernelName, then ShortenKernelName unless `full`.
std::string KernelDisplayName(std::string_view mangled, bool full);

/// Whether a kernel (mangled or plain name, as recorded) is an NCCL collective kernel: its
/// demangled name without return type matches `^nccl.*Kernel` (ncclKernel_AllReduce_RING_LL_Sum_float,
/// ncclDevKernel_AllReduce_Sum_f32_RING_LL, ...). The rule is Holistic Trace Analysis's
/// (hta/utils/utils.py, `is_comm_kernel`: NCCL_KERNEL_RE), case-sensitive as there; HTA matches the
/// name as Kineto writes it, which for NCCL's kernels (not templates) has no return type either.
bool IsNcclKernel(std::string_view name);

}  // namespace trainprof::collector
