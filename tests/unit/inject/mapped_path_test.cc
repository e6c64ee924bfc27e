// MappedPath (inject/stacks/mapped_path.h): the file behind an address, from /proc/self/maps.
#include "stacks/mapped_path.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

namespace trainprof::inject {
namespace {

int InThisBinary() { return 7; }

TEST(MappedPath, AnAddressOfTheExecutableGivesItsRealPath) {
  char real[PATH_MAX];
  ASSERT_NE(realpath("/proc/self/exe", real), nullptr);
  char out[4097];
  const size_t n = MappedPath(reinterpret_cast<uintptr_t>(&InThisBinary), out, sizeof(out));
  EXPECT_EQ(std::string(out, n), real);
  EXPECT_EQ(out[n], '\0');
}

TEST(MappedPath, AnAddressOfLibcGivesAnAbsolutePath) {
  char out[4097];
  const size_t n = MappedPath(reinterpret_cast<uintptr_t>(&getpid), out, sizeof(out));
  ASSERT_GT(n, 0u);
  EXPECT_EQ(out[0], '/');
  EXPECT_NE(std::string(out).find("libc"), std::string::npos) << out;
}

TEST(MappedPath, AnonymousMemoryOrTooSmallABufferGivesNothing) {
  void* anon = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anon, MAP_FAILED);
  char out[4097] = "untouched";
  EXPECT_EQ(MappedPath(reinterpret_cast<uintptr_t>(anon), out, sizeof(out)), 0u);
  munmap(anon, 4096);
  char tiny[4] = "abc";
  EXPECT_EQ(MappedPath(reinterpret_cast<uintptr_t>(&InThisBinary), tiny, sizeof(tiny)), 0u);
  EXPECT_STREQ(tiny, "abc");
  EXPECT_EQ(MappedPath(0, out, sizeof(out)), 0u);
}

}  // namespace
}  // namespace trainprof::inject
