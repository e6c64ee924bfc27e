// libtp_pynvtx.so: NVTX for Python programs without the `nvtx` package (Debian's PyTorch has no
// NVTX): ctypes calls these, as a program calls libnvToolsExt. tests/workloads/python_callsites.py
// loads it with ctypes.PyDLL (the GIL held during the call, as the `nvtx` package and
// torch.cuda.nvtx hold it) and with ctypes.CDLL (the GIL released: a range without Python frames).
#include <nvtx3/nvToolsExt.h>

extern "C" {
__attribute__((visibility("default"))) int tp_nvtx_push(const char* name) { return nvtxRangePushA(name); }
__attribute__((visibility("default"))) int tp_nvtx_pop() { return nvtxRangePop(); }
}
