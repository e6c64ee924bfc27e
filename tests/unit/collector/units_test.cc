#include "collector/base/units.h"

#include <gtest/gtest.h>

namespace trainprof::collector {
namespace {

TEST(Units, DurationThreeSignificantDigits) {
  EXPECT_EQ(FormatDuration(0), "0 ns");
  EXPECT_EQ(FormatDuration(5), "5 ns");
  EXPECT_EQ(FormatDuration(830), "830 ns");
  EXPECT_EQ(FormatDuration(12.5), "12.5 ns");
  EXPECT_EQ(FormatDuration(1000), "1.00 \xC2\xB5s");
  EXPECT_EQ(FormatDuration(12'345), "12.3 \xC2\xB5s");
  EXPECT_EQ(FormatDuration(5'120'000), "5.12 ms");
  EXPECT_EQ(FormatDuration(1'200'000'000), "1.20 s");
  EXPECT_EQ(FormatDuration(99'900'000'000), "99.9 s");
}

// From 100 s minutes, from 1 h hours, three significant digits as for the other units.
TEST(Units, DurationMinutesAndHours) {
  EXPECT_EQ(FormatDuration(100e9), "1.67 min");
  EXPECT_EQ(FormatDuration(123'400'000'000), "2.06 min");
  EXPECT_EQ(FormatDuration(750e9), "12.5 min");
  EXPECT_EQ(FormatDuration(3'540e9), "59.0 min");
  EXPECT_EQ(FormatDuration(3'600e9), "1.00 h");
  EXPECT_EQ(FormatDuration(4'321e9), "1.20 h");
  EXPECT_EQ(FormatDuration(16.2 * 3'600e9), "16.2 h");
  EXPECT_EQ(FormatDuration(1'234.0 * 3'600e9), "1234 h");
  // Rounding into the next unit: 99.97 s is not "100 s", 59.98 min is not "60.0 min".
  EXPECT_EQ(FormatDuration(99'970'000'000), "1.67 min");
  EXPECT_EQ(FormatDuration(59.98 * 60e9), "1.00 h");
  EXPECT_EQ(FormatDuration(-750e9), "-12.5 min");
}

TEST(Units, DurationRoundsIntoTheNextUnit) {
  EXPECT_EQ(FormatDuration(999.6), "1.00 \xC2\xB5s");
  EXPECT_EQ(FormatDuration(999'600), "1.00 ms");
  EXPECT_EQ(FormatDuration(999'700'000), "1.00 s");
  EXPECT_EQ(FormatDuration(9'996), "10.0 \xC2\xB5s");
}

TEST(Units, Bytes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1500), "1.50 KB");
  EXPECT_EQ(FormatBytes(12'300'000), "12.3 MB");
  EXPECT_EQ(FormatBytes(1e9), "1.00 GB");
}

TEST(Units, PercentAndUtc) {
  EXPECT_EQ(FormatPercent(12.345), "12.3");
  EXPECT_EQ(FormatPercent(100), "100.0");
  EXPECT_EQ(FormatUtc(1'700'000'000'123'000'000ull), "2023-11-14 22:13:20.123 UTC");
}

}  // namespace
}  // namespace trainprof::collector
