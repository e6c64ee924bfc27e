// Exec'd by nvtx_workload: 7 x "exec_work" of 1 ms, then exit status 3.
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdlib>
#include <thread>

int main() {
  for (int i = 0; i < 7; ++i) {
    nvtxRangePushA("exec_work");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    nvtxRangePop();
  }
  return 3;
}
