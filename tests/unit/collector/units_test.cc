#include "collector/units.h"

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
  EXPECT_EQ(FormatDuration(123'400'000'000), "123 s");
  EXPECT_EQ(FormatDuration(4'321'000'000'000), "4321 s");
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
