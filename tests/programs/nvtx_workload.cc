// End-to-end workload with known, planted NVTX activity (see tests/e2e/README.md for the counts).
//
//   main process: 20 x "step" (5 ms sleep, with a nested 1 ms "inner"), 3 marks "checkpoint",
//                 5 x "io" in domain "trainprof_test" (registered string), 4 Start/End ranges
//                 "async_copy" started here and ended by a second thread, one pop on an empty
//                 stack and one range "left_open" never closed.
//   forked child: 10 x "child_work" (2 ms), then _exit(0).
//   exec'd child: tp_nvtx_child, 7 x "exec_work" (1 ms), exit 3.
// Prints the NVTX nesting levels it got back, so tests can check them.
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

static void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

int main(int argc, char** argv) {
  std::string child_path = argc > 1 ? argv[1] : "";
  nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "trainer-main");

  int l0 = nvtxRangePushA("step");
  int l1 = nvtxRangePushA("inner");
  int p1 = nvtxRangePop();
  int p0 = nvtxRangePop();
  int empty = nvtxRangePop();  // pop on an empty stack: a misuse the report counts
  printf("levels push=%d,%d pop=%d,%d empty_pop=%d\n", l0, l1, p1, p0, empty);
  SleepMs(5);
  for (int i = 1; i < 20; ++i) {
    nvtxRangePushA("step");
    SleepMs(4);
    nvtxRangePushA("inner");
    SleepMs(1);
    nvtxRangePop();
    nvtxRangePop();
  }
  for (int i = 0; i < 3; ++i) nvtxMarkA("checkpoint");

  nvtxNameCategoryA(7, "checkpoints");
  nvtxDomainHandle_t domain = nvtxDomainCreateA("trainprof_test");
  nvtxStringHandle_t io = nvtxDomainRegisterStringA(domain, "io");
  for (int i = 0; i < 5; ++i) {
    nvtxEventAttributes_t a = {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = io;
    nvtxDomainRangePushEx(domain, &a);
    SleepMs(1);
    nvtxDomainRangePop(domain);
  }

  nvtxDomainDestroy(domain);

  std::vector<nvtxRangeId_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(nvtxRangeStartA("async_copy"));
  std::thread ender([&] {
    SleepMs(3);
    for (nvtxRangeId_t id : ids) nvtxRangeEnd(id);
  });
  ender.join();

  pid_t forked = fork();
  if (forked == 0) {
    for (int i = 0; i < 10; ++i) {
      nvtxRangePushA("child_work");
      SleepMs(2);
      nvtxRangePop();
    }
    _exit(0);
  }
  pid_t execd = -1;
  if (!child_path.empty()) {
    execd = fork();
    if (execd == 0) {
      execl(child_path.c_str(), child_path.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  int status = 0;
  waitpid(forked, &status, 0);
  int child_status = 0;
  if (execd > 0) waitpid(execd, &child_status, 0);
  printf("forked child exit=%d exec child exit=%d\n", WEXITSTATUS(status), WEXITSTATUS(child_status));
  nvtxRangePushA("left_open");  // never popped: the report counts it as unbalanced
  return 0;
}
