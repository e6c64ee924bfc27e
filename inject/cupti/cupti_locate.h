// Finding libcupti. Only ever called from InitializeInjection (inside cuInit), never at load.
//
// Order (the first that loads wins):
//   1. a libcupti the process has loaded already (PyTorch's kineto links it): two CUPTIs in one
//      process would fight over the same driver hooks;
//   2. TRAINPROF_CUPTI_PATH, a file or a folder — when set, it is the only other candidate;
//   3. beside the CUDA runtime the process loaded (libcudart.so*, found with dl_iterate_phdr): its
//      folder (CUDA 13 wheels, conda), ../../cuda_cupti/lib (PyTorch's nvidia/cuda_runtime/lib
//      next to nvidia/cuda_cupti/lib), ../extras/CUPTI/lib64 (a toolkit's lib64);
//   4. $CUDA_HOME/{lib64,lib,extras/CUPTI/lib64}, then /usr/local/cuda/{lib64,lib,extras/CUPTI/lib64};
//   5. the loader's own search (LD_LIBRARY_PATH, ld.so.cache).
// In a folder: libcupti.so.<major of the loaded libcudart>, then libcupti.so, then the
// highest-numbered libcupti.so.*.
#pragma once

#include <cstddef>

namespace trainprof::inject::cupti {

inline constexpr size_t kPathMax = 4096;
inline constexpr int kMaxCandidates = 16;

struct LocateInputs {
  const char* loaded_cupti = nullptr;   ///< path of a libcupti already loaded, or null
  const char* cudart = nullptr;         ///< path of the loaded libcudart.so*, or null
  const char* override_path = nullptr;  ///< TRAINPROF_CUPTI_PATH
  const char* cuda_home = nullptr;      ///< CUDA_HOME
};

/// Fills out[0..n) with candidates in order and returns n. A candidate ending in '/' is a folder
/// (searched as described above); one without '/' is a bare name for the loader's search; any
/// other is a path to a file or a folder. Paths too long for kPathMax are left out. Pure.
int CuptiCandidates(const LocateInputs& in, char (*out)[kPathMax], int max);

/// The CUDA major version in a library file name ("libcudart.so.12.4.127" → 12), or 0.
int SonameMajor(const char* path);

/// Loads libcupti (dlopen RTLD_NOW | RTLD_LOCAL), trying the candidates for `override_path` and
/// `cuda_home` in order. Returns the handle and the file it loaded (in `loaded`, kPathMax bytes),
/// or nullptr with what was tried and why it failed in `why` (why_size bytes).
void* OpenCupti(const char* override_path, const char* cuda_home, char* loaded, char* why, size_t why_size);

}  // namespace trainprof::inject::cupti
