// The identity a trace header records: what tells two processes with one pid apart.
#include "process_identity.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace trainprof::inject {
namespace {

// Field 22 of /proc/self/stat, read the simple way (a comm without spaces: this test binary).
uint64_t StartTicksOfSelf() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  for (int i = 3; i <= 22; ++i) fields >> f;
  return std::stoull(f);
}

TEST(ProcessIdentity, ReadsNamespaceStartTimeAndBootId) {
  if (access("/proc/self/stat", R_OK) != 0) GTEST_SKIP() << "no /proc";
  ProcessIdentity id = ReadProcessIdentity();
  struct stat st;
  ASSERT_EQ(stat("/proc/self/ns/pid", &st), 0);
  EXPECT_EQ(id.pid_namespace, static_cast<uint64_t>(st.st_ino));
  uint64_t ticks = StartTicksOfSelf();
  EXPECT_EQ(id.start_ticks, ticks == 0 ? 1 : ticks);
  uint8_t zero[16] = {};
  EXPECT_NE(memcmp(id.boot_id, zero, 16), 0);
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string text;
  boot >> text;
  char hex[3];
  snprintf(hex, sizeof hex, "%02x", id.boot_id[0]);
  EXPECT_EQ(text.substr(0, 2), hex);
}

TEST(ProcessIdentity, AForkedChildHasAnotherStartTimeOrTheSameTickButItsOwnPid) {
  ProcessIdentity parent = ReadProcessIdentity();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    ProcessIdentity child = ReadProcessIdentity();
    ssize_t n = write(fds[1], &child, sizeof child);
    _exit(n == sizeof child ? 0 : 1);
  }
  ProcessIdentity child;
  ASSERT_EQ(read(fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  int status = 0;
  waitpid(pid, &status, 0);
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(child.pid_namespace, parent.pid_namespace);
  EXPECT_EQ(memcmp(child.boot_id, parent.boot_id, 16), 0);
  EXPECT_GE(child.start_ticks, parent.start_ticks);
  EXPECT_FALSE(ChildrenInOtherPidNamespace());
}

TEST(ProcessIdentity, RunIdIsExactly32HexDigits) {
  uint8_t out[16];
  ASSERT_TRUE(ParseRunId("00112233445566778899aabbccddeeFF", out));
  EXPECT_EQ(out[0], 0x00);
  EXPECT_EQ(out[1], 0x11);
  EXPECT_EQ(out[15], 0xff);
  EXPECT_FALSE(ParseRunId("00112233445566778899aabbccddee", out));    // short
  EXPECT_FALSE(ParseRunId("00112233445566778899aabbccddeeff0", out)); // long
  EXPECT_FALSE(ParseRunId("0011223344556677889zaabbccddeeff", out));  // not hex
  EXPECT_EQ(out[1], 0);  // zeroed on failure
  EXPECT_FALSE(ParseRunId(nullptr, out));
}

}  // namespace
}  // namespace trainprof::inject
