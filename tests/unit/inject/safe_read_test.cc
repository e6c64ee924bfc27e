// SafeReader (inject/stacks/safe_read.h): memory that was unmapped is reported, never faulted on.
#include "stacks/safe_read.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace trainprof::inject::stacks {
namespace {

TEST(SafeRead, ReadsMappedAndRefusesUnmapped) {
  ASSERT_TRUE(SafeReadWorks());
  const long page = sysconf(_SC_PAGESIZE);
  auto* p = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  strcpy(p, "frame");
  SafeReader r(getpid());
  char buf[16] = {};
  EXPECT_TRUE(r.Read(buf, reinterpret_cast<uintptr_t>(p), 6));
  EXPECT_STREQ(buf, "frame");
  ASSERT_EQ(munmap(p + page, page), 0);
  EXPECT_FALSE(r.Read(buf, reinterpret_cast<uintptr_t>(p + page), 8));
  EXPECT_FALSE(r.Read(buf, reinterpret_cast<uintptr_t>(p + page - 4), 8));  // straddles the end
  EXPECT_FALSE(r.Read(buf, 8, 8));                                           // NULL's page
  EXPECT_FALSE(SafeReader(0).Read(buf, reinterpret_cast<uintptr_t>(p), 6));  // refused reader
  munmap(p, page);
}

}  // namespace
}  // namespace trainprof::inject::stacks
