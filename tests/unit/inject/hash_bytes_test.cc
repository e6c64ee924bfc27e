// HashBytes, the key of the per-thread name cache and of the string table: it must depend on
// exactly the n bytes given (not on what follows them) and separate names of every tail length.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "string_table.h"

namespace trainprof::inject {
namespace {

TEST(HashBytes, OnlyTheGivenBytesCount) {
  // The same n bytes followed by different bytes: the tail loads must not read past n.
  for (size_t n = 0; n <= 17; ++n) {
    std::string a(n, 'x'), b(n, 'x');
    a += "AAAAAAAA";
    b += "BBBBBBBB";
    EXPECT_EQ(HashBytes(a.data(), n), HashBytes(b.data(), n)) << n;
  }
}

TEST(HashBytes, DistinctForEveryLengthAndTail) {
  // Every string of length 0..9 over {a, b}, plus each with one byte changed at every position:
  // no two collide in 64 bits (a tail-assembly bug would merge some of them).
  std::set<std::string> names;
  for (size_t n = 0; n <= 9; ++n) {
    for (uint32_t bits = 0; bits < (1u << n); ++bits) {
      std::string s;
      for (size_t i = 0; i < n; ++i) s += (bits >> i & 1) ? 'b' : 'a';
      names.insert(s);
    }
  }
  std::set<uint64_t> hashes;
  for (const std::string& s : names) hashes.insert(HashBytes(s.data(), s.size()));
  EXPECT_EQ(hashes.size(), names.size());
  // Lengths differ but bytes are all zero: still distinct.
  const char zeros[16] = {};
  std::set<uint64_t> zero_hashes;
  for (size_t n = 0; n <= 16; ++n) zero_hashes.insert(HashBytes(zeros, n));
  EXPECT_EQ(zero_hashes.size(), 17u);
}

}  // namespace
}  // namespace trainprof::inject
