// Loads the injection library late, with dlopen (not LD_PRELOAD), after many other shared
// objects, then records NVTX ranges through it. Usage: tp_late_dlopen LIB OUTPUT_DIR N
// The library must load (its TLS is initial-exec, for async-signal-safety, but only a few dozen
// bytes: glibc's static TLS surplus for dlopen'ed libraries holds it) and record the N ranges.
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const char* libs[] = {"libm.so.6", "libz.so.1", "libstdc++.so.6", "libgcc_s.so.1", "libpthread.so.0",
                        "libdl.so.2", "librt.so.1", "libresolv.so.2", "libutil.so.1", "libcrypt.so.1"};
  int loaded = 0;
  for (const char* l : libs) loaded += dlopen(l, RTLD_NOW | RTLD_GLOBAL) != nullptr;
  setenv("TRAINPROF_OUTPUT_DIR", argv[2], 1);
  setenv("TRAINPROF_LIB", argv[1], 1);
  setenv("NVTX_INJECTION64_PATH", argv[1], 1);
  if (dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == nullptr) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  long n = atol(argv[3]);
  for (long i = 0; i < n; ++i) {
    nvtxRangePushA("late");
    nvtxRangePop();
  }
  printf("loaded %d libraries, then trainprof; %ld ranges\n", loaded, n);
  return 0;
}
