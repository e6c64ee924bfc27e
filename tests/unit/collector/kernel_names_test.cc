// Kernel names: demangling (abi::__cxa_demangle) and the shortened display form.
#include "collector/base/kernel_names.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace trainprof::collector {
namespace {

// What g++ mangles for at::native::gemm_kernel<Pack<LinearCombination<float, 0>, ..., <float, n-1>>>
// (float*, int): n template arguments, a name of several KB once demangled.
std::string GemmKernel(int n) {
  std::string s = "_ZN2at6native11gemm_kernelI4PackIJN7cutlass8epilogue6thread17LinearCombinationIfLi0EEE";
  for (int k = 1; k < n; ++k) s += "NS6_IfLi" + std::to_string(k) + "EEE";
  return s + "EEEEvPfi";
}

// Each case: a kernel name as recorded, and as the report shows it demangled.
void ExpectDemangled(std::initializer_list<std::pair<std::string, std::string>> cases) {
  for (const auto& [recorded, shown] : cases) EXPECT_EQ(DemangleKernelName(recorded), shown) << recorded;
}

// Each case: a demangled kernel name, and its shortened form.
void ExpectShortened(std::initializer_list<std::pair<std::string, std::string>> cases) {
  for (const auto& [full, shortened] : cases) EXPECT_EQ(ShortenKernelName(full), shortened) << full;
}

TEST(KernelNames, Demangle) {
  ExpectDemangled({
      {"_Z6matmulPfS_S_i", "matmul(float*, float*, float*, int)"},
      {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
       "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
       "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"},
      // Not mangled (extern "C" kernels; "f" would demangle to "float" as a type): as is.
      {"f", "f"},
      {"vector_add", "vector_add"},
      {"", ""},
      // Does not demangle (cut by the writer at 4096 bytes, or garbage): as is.
      {"_ZN2at6native29vectorized_elem", "_ZN2at6native29vectorized_elem"},
      {"_Z", "_Z"},
  });
}

TEST(KernelNames, Shorten) {
  ExpectShortened({
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
       "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
       "at::native::vectorized_elementwise_kernel<...>"},
      {"matmul(float*, float*, float*, int)", "matmul"},
      {"void (anonymous namespace)::kernel<int>(int*)", "(anonymous namespace)::kernel<...>"},
      {"void cutlass::Kernel<cutlass::gemm::kernel::Gemm<float> >(cutlass::gemm::kernel::Gemm<float>::Params)",
       "cutlass::Kernel<...>"},
      {"void ns::Outer<int>::run<float>(float*)", "ns::Outer<...>::run<...>"},
      {"unsigned int count_kernel(int)", "count_kernel"},
      // A lambda kernel: the enclosing function's parameter list is part of the name.
      {"void at::native::foo<float>(at::TensorIterator&)::{lambda(int)#1}(int)",
       "at::native::foo<...>(at::TensorIterator&)::{lambda(int)#1}"},
      {"void ns::operator<<(int)", "ns::operator<<"},
      {"vector_add", "vector_add"},
      // Unbalanced brackets (a name that did not demangle, cut): unchanged.
      {"void f<int(float", "void f<int(float"},
      {"a>b", "a>b"},
  });
}

TEST(KernelNames, SeveralKilobyteTemplateNames) {
  const std::string mangled = GemmKernel(60);
  EXPECT_EQ(mangled.size(), 852u);
  const std::string full = DemangleKernelName(mangled);
  EXPECT_EQ(full.size(), 3459u);
  EXPECT_EQ(full.rfind("void at::native::gemm_kernel<Pack<cutlass::epilogue::thread::LinearCombination<float, 0>, ", 0),
            0u);
  EXPECT_EQ(full.substr(full.size() - 72), "cutlass::epilogue::thread::LinearCombination<float, 59> > >(float*, int)");
  EXPECT_EQ(KernelDisplayName(mangled, false), "at::native::gemm_kernel<...>");
  EXPECT_EQ(KernelDisplayName(mangled, true), full);
  // Cut in the middle (as the writer cuts at kMaxStringBytes): shown as recorded.
  const std::string cut = mangled.substr(0, 500);
  EXPECT_EQ(KernelDisplayName(cut, false), cut);
  EXPECT_EQ(KernelDisplayName(cut, true), cut);
}

}  // namespace
}  // namespace trainprof::collector
