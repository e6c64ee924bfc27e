// A library tp_callsites dlopens after start (tests/e2e/test_stacks.py): its ranges' stacks have
// addresses in a module loaded late, which the trace must describe with a MODULE record.
#include <nvtx3/nvToolsExt.h>

extern "C" __attribute__((visibility("default"), noinline)) void plugin_step(int i) {
  nvtxRangePushA("plugin");
  static volatile int sink = 0;
  sink = sink + i;
  nvtxRangePop();
}
