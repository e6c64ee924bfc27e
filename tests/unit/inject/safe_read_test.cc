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

TEST(SafeRead, ManyReadsAroundAnUnreadablePart) {
  const long page = sysconf(_SC_PAGESIZE);
  auto* p = static_cast<char*>(mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  auto* gone = static_cast<char*>(mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_EQ(munmap(gone, page), 0);
  memcpy(p, "abcdefgh", 8);
  char a[4], b[4], c[4], d[4];
  const auto at = [](const char* x) { return reinterpret_cast<uintptr_t>(x); };
  ReadPart all[] = {{a, at(p), 4}, {b, at(p + 4), 4}, {c, at(gone), 4}, {d, at(p), 4}};
  SafeReader r(getpid());
  bool ok[4];
  EXPECT_EQ(r.ReadMany(all, 2, ok), 2u);
  EXPECT_EQ(memcmp(b, "efgh", 4), 0);
  // One part unreadable: the others are still read, in a second batch.
  memset(d, 0, 4);
  EXPECT_EQ(r.ReadMany(all, 4, ok), 3u);
  EXPECT_TRUE(ok[0] && ok[1] && !ok[2] && ok[3]);
  EXPECT_EQ(memcmp(d, "abcd", 4), 0);
  ReadPart null_first[] = {{a, 0, 4}, {b, at(p), 4}};
  EXPECT_EQ(r.ReadMany(null_first, 2, ok), 1u);
  EXPECT_TRUE(!ok[0] && ok[1]);
  EXPECT_EQ(SafeReader(0).ReadMany(all, 2, ok), 0u);
  munmap(p, page);
}

}  // namespace
}  // namespace trainprof::inject::stacks
