// Descriptors kept above the program's numbering (inject/fd_floor.h) and libunwind initialised
// away from them (inject/stacks/unwind_setup.h).
#include "fd_floor.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "stacks/unwind_setup.h"

namespace trainprof::inject {
namespace {

// The lowest free descriptor number now (what the program's next open gets).
int LowestFree() {
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  close(fd);
  return fd;
}

// The pipes open in this process.
std::vector<int> Pipes() {
  std::vector<int> out;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return out;
  const int self = dirfd(d);
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    int fd = atoi(e->d_name);
    struct stat st;
    if (fd != self && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) out.push_back(fd);
  }
  closedir(d);
  return out;
}

TEST(FdFloor, MoveAboveFloorLeavesTheLowNumberFree) {
  const int low = LowestFree();
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_EQ(fd, low);
  const int high = MoveAboveFloor(fd);
  EXPECT_GE(high, FdFloor());
  EXPECT_EQ(fcntl(high, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ(LowestFree(), low);
  close(high);
}

TEST(FdFloor, PlaceholdersPushOpensAboveTheFloorUntilReleased) {
  const int low = LowestFree();
  {
    LowFdPlaceholders p;
    EXPECT_GT(p.Fill(), 0u);
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, FdFloor());
    close(fd);
  }
  EXPECT_EQ(LowestFree(), low);
}

// The first (and only) libunwind initialisation of this test process: its validation pipe lands
// above the floor, the program's next number stays free, and validated reads are ours.
TEST(Unwinder, InitialisedAboveTheFloorWithSafeValidatedReads) {
  const int low = LowestFree();
  const std::vector<int> before = Pipes();
  ASSERT_TRUE(InitUnwinder());
  EXPECT_TRUE(UnwinderUsesSafeReads());
  EXPECT_EQ(LowestFree(), low);
  for (int fd : Pipes()) {
    bool old = false;
    for (int b : before) old = old || b == fd;
    if (!old) {
      EXPECT_GE(fd, FdFloor()) << "libunwind's pipe at fd " << fd;
    }
  }
  unw_accessors_t* acc = unw_get_accessors(unw_local_addr_space);
  void* validate = reinterpret_cast<void*>(uintptr_t{1});  // a null ucontext, bit 0: validate
  unw_word_t word = 0x1234, val = 0;
  EXPECT_EQ(acc->access_mem(unw_local_addr_space, reinterpret_cast<unw_word_t>(&word), &val, 0, validate), 0);
  EXPECT_EQ(val, word);
  void* gone = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(gone, MAP_FAILED);
  munmap(gone, 4096);
  EXPECT_EQ(acc->access_mem(unw_local_addr_space, reinterpret_cast<unw_word_t>(gone), &val, 0, validate), -1);
  EXPECT_EQ(LowestFree(), low);
  void* pcs[8];
  EXPECT_GT(unw_backtrace(pcs, 8), 0);
}

}  // namespace
}  // namespace trainprof::inject
