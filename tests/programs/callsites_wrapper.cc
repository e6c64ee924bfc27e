// A range opened by a helper of the program's own, for the call-site table's split by caller
// (tests/e2e/test_stacks.py): an RAII scope class in the style of NVTX's own nvtx3::scoped_range,
// kept out of line (as a helper in another translation unit is), whose constructor pushes the
// range for every caller.
//
//   main thread: 30 x read_shard() and 10 x write_log(), each opening "io" through ScopedRange
//
//   tp_callsites_wrapper
// Built with -g and frame pointers.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>

namespace {

volatile unsigned g_sink = 0;

void Spin(unsigned n) {
  for (unsigned i = 0; i < n; ++i) g_sink = g_sink + i;
}

}  // namespace

// Keeps the depth of open ranges, as such helpers do for their checks (it also keeps the push from
// being a tail call, after which the constructor's frame would not be on the stack).
class ScopedRange {
 public:
  __attribute__((noinline, noipa)) explicit ScopedRange(const char* name) {
    nvtxRangePushA(name);
    ++depth_;
  }
  __attribute__((noinline, noipa)) ~ScopedRange() {
    nvtxRangePop();
    --depth_;
  }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;

 private:
  static inline int depth_ = 0;
};

__attribute__((noinline, noipa)) void read_shard(int i) {
  ScopedRange range("io");
  Spin(2000 + static_cast<unsigned>(i));
}

__attribute__((noinline, noipa)) void write_log(int i) {
  ScopedRange range("io");
  Spin(500 + static_cast<unsigned>(i));
}

int main() {
  for (int i = 0; i < 40; ++i) {
    if (i % 4 == 3) {
      write_log(i);
    } else {
      read_shard(i);
    }
  }
  printf("callsites done\n");
  return 0;
}
