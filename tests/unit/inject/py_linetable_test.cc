// The location-table decoder of the sampler's Python frames (inject/stacks/py_linetable.h) on a
// hand-made table with every kind of entry (CPython's Objects/locations.md, 3.11). Real tables
// are checked against the interpreter by tests/e2e/test_python_async.py.
#include "stacks/py_linetable.h"

#include <gtest/gtest.h>

#include <vector>

namespace trainprof::inject::stacks {
namespace {

// first line 10:
//   units 0-1  no-columns form, line +1        E9 02           → 11
//   unit 2     long form, line -1, columns      F0 03 00 01 01  → 10
//   unit 3     no location                      F8              → -1 (line stays 10)
//   units 4-6  one-line form, line +2           E2 05 06        → 12
//   unit 7     short form (same line)           80 07           → 12
//   unit 8     no-columns, line +100 (2-byte varint) E8 48 03   → 112
const std::vector<int> kTable = {0xE9, 0x02, 0xF0, 0x03, 0x00, 0x01, 0x01, 0xF8, 0xE2,
                                 0x05, 0x06, 0x80, 0x07, 0xE8, 0x48, 0x03};

int Line(int addr, const std::vector<int>& t = kTable) {
  return PyLineForAddress([&](size_t i) { return t[i]; }, t.size(), 10, addr);
}

TEST(PyLineTable, EveryEntryKind) {
  EXPECT_EQ(Line(0), 11);
  EXPECT_EQ(Line(2), 11);
  EXPECT_EQ(Line(4), 10);
  EXPECT_EQ(Line(6), -1);
  EXPECT_EQ(Line(8), 12);
  EXPECT_EQ(Line(12), 12);
  EXPECT_EQ(Line(14), 12);
  EXPECT_EQ(Line(16), 112);
}

TEST(PyLineTable, NotStartedIsTheFirstLine) { EXPECT_EQ(Line(-2), 10); }

TEST(PyLineTable, PastTheEndOrUnreadableIsUnknown) {
  EXPECT_EQ(Line(18), 0);
  EXPECT_EQ(PyLineForAddress([](size_t) { return -1; }, kTable.size(), 10, 4), 0);
  // Cut inside a varint; a table that does not start at an entry.
  EXPECT_EQ(Line(16, std::vector<int>(kTable.begin(), kTable.end() - 1)), 0);
  EXPECT_EQ(Line(0, {0x02, 0xE9}), 0);
}

// CPython 3.10's table (byte pairs: bytes covered, line move; -128: no line), as 3.10.13 compiled
//   def f(a):            (line 1)
//       x = 1            (line 2)
//       <200 blank lines>
//       for i in range(a):   (line 203)
//           x += i           (line 204)
//       return x             (line 205)
// co_lines(): (0, 4, 2), (4, 16, 203), (16, 26, 204), (26, 30, 205); the jump of 201 lines takes
// a zero-byte entry of +127 first.
int Line310(int addr, const std::vector<int>& t, int first = 1) {
  return PyLineForAddress310([&](size_t i) { return t[i]; }, t.size(), first, addr);
}

TEST(PyLineTable, Python310Table) {
  const std::vector<int> t = {4, 1, 0, 127, 12, 74, 10, 1, 4, 1};
  EXPECT_EQ(Line310(0, t), 2);
  EXPECT_EQ(Line310(2, t), 2);
  EXPECT_EQ(Line310(4, t), 203);
  EXPECT_EQ(Line310(14, t), 203);
  EXPECT_EQ(Line310(16, t), 204);
  EXPECT_EQ(Line310(26, t), 205);
  EXPECT_EQ(Line310(28, t), 205);
  EXPECT_EQ(Line310(30, t), 0);  // past the end: unknown
  EXPECT_EQ(Line310(-2, t), 1);  // not started (f_lasti -1): the first line
}

TEST(PyLineTable, Python310NoLineAndNegativeMoves) {
  // 2 bytes at +1, 2 bytes with no line (-128: the line does not move), 2 bytes at +1, 2 at -3.
  const std::vector<int> t = {2, 1, 2, 0x80, 2, 1, 2, 0xFD};
  EXPECT_EQ(Line310(0, t, 10), 11);
  EXPECT_EQ(Line310(2, t, 10), -1);
  EXPECT_EQ(Line310(4, t, 10), 12);
  EXPECT_EQ(Line310(6, t, 10), 9);
  // An unreadable byte: unknown.
  EXPECT_EQ(PyLineForAddress310([](size_t i) { return i < 2 ? 2 : -1; }, 4, 10, 2), 0);
}

}  // namespace
}  // namespace trainprof::inject::stacks
