// TRAINPROF_SAMPLE as the library reads it, and the header's sample_* kStacks entries
// (inject/stacks/sample_settings.h).
#include "stacks/sample_settings.h"

#include <gtest/gtest.h>

#include <string>

namespace trainprof::inject {
namespace {

TEST(SampleSettings, OffUnlessAWholeNumberUpToTheMaximum) {
  uint32_t hz = 7;
  EXPECT_TRUE(ParseSampleHz(nullptr, &hz));
  EXPECT_EQ(hz, 0u);
  EXPECT_TRUE(ParseSampleHz("1000", &hz));
  EXPECT_EQ(hz, 1000u);
  EXPECT_TRUE(ParseSampleHz("10000", &hz));
  EXPECT_EQ(hz, 10000u);
  for (const char* bad : {"", "10001", "-1", "1k", "4294967297", " 9"}) {
    hz = 7;
    EXPECT_FALSE(ParseSampleHz(bad, &hz)) << bad;
    EXPECT_EQ(hz, 0u) << bad;
  }
}

TEST(SampleSettings, MetadataEntriesAreNulSeparated) {
  char buf[64];
  uint32_t len = FormatSampleMetadata(1000, 64, "", buf, sizeof(buf));
  EXPECT_EQ(std::string(buf, len), std::string("sample_hz=1000\0sample_signal=64", 31));
  EXPECT_EQ(FormatSampleMetadata(0, 64, "", buf, sizeof(buf)), 0u);   // off: nothing
  EXPECT_EQ(FormatSampleMetadata(1000, 64, "", buf, 10), 0u);         // does not fit
}

TEST(SampleSettings, MetadataNamesAnUnsupportedPython) {
  char buf[128];
  uint32_t len = FormatSampleMetadata(1000, 64, "CPython 3.14 free-threaded", buf, sizeof(buf));
  const std::string want("sample_hz=1000\0sample_signal=64\0python_unsupported=CPython 3.14 free-threaded", 77);
  EXPECT_EQ(std::string(buf, len), want);
  len = FormatSampleMetadata(1000, 64, "", buf, sizeof(buf));  // read (or no Python): no entry
  EXPECT_EQ(std::string(buf, len), std::string("sample_hz=1000\0sample_signal=64", 31));
}

}  // namespace
}  // namespace trainprof::inject
