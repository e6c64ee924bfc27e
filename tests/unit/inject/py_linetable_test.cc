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

}  // namespace
}  // namespace trainprof::inject::stacks
