// Stand-in for the sampler's Python frames: no frames, none counted as missed. The branch
// python-async provides the real one (reading CPython's frame chain from the handler).
#include "stacks/python_async.h"

namespace trainprof::inject {

size_t CapturePythonFramesAsync(uint64_t*, size_t, uint32_t* missed) {
  *missed = 0;
  return 0;
}

}  // namespace trainprof::inject
