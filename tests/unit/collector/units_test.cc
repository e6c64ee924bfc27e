#include "collector/base/units.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace trainprof::collector {
namespace {

// Each case: nanoseconds, and how they are shown.
void ExpectDurations(std::initializer_list<std::pair<double, std::string>> cases) {
  for (const auto& [ns, shown] : cases) EXPECT_EQ(FormatDuration(ns), shown) << ns << " ns";
}

// Each case: bytes, and how they are shown.
void ExpectBytes(std::initializer_list<std::pair<double, std::string>> cases) {
  for (const auto& [bytes, shown] : cases) EXPECT_EQ(FormatBytes(bytes), shown) << bytes << " B";
}

TEST(Units, DurationThreeSignificantDigits) {
  ExpectDurations({
      {0, "0 ns"},
      {5, "5 ns"},
      {830, "830 ns"},
      {12.5, "12.5 ns"},
      {1000, "1.00 \xC2\xB5s"},
      {12'345, "12.3 \xC2\xB5s"},
      {5'120'000, "5.12 ms"},
      {1'200'000'000, "1.20 s"},
      {99'900'000'000, "99.9 s"},
  });
}

// From 100 s minutes, from 1 h hours, three significant digits as for the other units.
TEST(Units, DurationMinutesAndHours) {
  ExpectDurations({
      {100e9, "1.67 min"},
      {123'400'000'000, "2.06 min"},
      {750e9, "12.5 min"},
      {3'540e9, "59.0 min"},
      {3'600e9, "1.00 h"},
      {4'321e9, "1.20 h"},
      {16.2 * 3'600e9, "16.2 h"},
      {1'234.0 * 3'600e9, "1234 h"},
      // Rounding into the next unit: 99.97 s is not "100 s", 59.98 min is not "60.0 min".
      {99'970'000'000, "1.67 min"},
      {59.98 * 60e9, "1.00 h"},
      {-750e9, "-12.5 min"},
  });
}

TEST(Units, DurationRoundsIntoTheNextUnit) {
  ExpectDurations({
      {999.6, "1.00 \xC2\xB5s"},
      {999'600, "1.00 ms"},
      {999'700'000, "1.00 s"},
      {9'996, "10.0 \xC2\xB5s"},
  });
}

TEST(Units, Bytes) {
  ExpectBytes({
      {0, "0 B"},
      {512, "512 B"},
      {1500, "1.50 KB"},
      {12'300'000, "12.3 MB"},
      {1e9, "1.00 GB"},
  });
}

TEST(Units, PercentAndUtc) {
  EXPECT_EQ(FormatPercent(12.345), "12.3");
  EXPECT_EQ(FormatPercent(100), "100.0");
  EXPECT_EQ(FormatUtc(1'700'000'000'123'000'000ull), "2023-11-14 22:13:20.123 UTC");
}

}  // namespace
}  // namespace trainprof::collector
