// `trainprof run --sample=HZ` (launcher/sample_options.h): checked, passed on as TRAINPROF_SAMPLE.
#include "sample_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "inject_env.h"

namespace trainprof::launcher {
namespace {

TEST(SampleOptions, WholeNumbersUpTo10000) {
  std::string error;
  EXPECT_EQ(ParseSampleHz("", &error), 0u);  // not given: off
  EXPECT_EQ(ParseSampleHz("0", &error), 0u);
  EXPECT_EQ(ParseSampleHz("1", &error), 1u);
  EXPECT_EQ(ParseSampleHz("1000", &error), 1000u);
  EXPECT_EQ(ParseSampleHz("10000", &error), 10000u);
  EXPECT_EQ(error, "");
}

TEST(SampleOptions, OtherTextIsAUsageError) {
  for (const char* bad : {"10001", "-5", "1e3", "1000hz", " 100", "99999999999", "abc"}) {
    std::string error;
    EXPECT_FALSE(ParseSampleHz(bad, &error).has_value()) << bad;
    EXPECT_EQ(error.rfind(std::string("--sample: '") + bad + "'", 0), 0u) << error;
  }
}

TEST(SampleOptions, EnvironmentSetOnlyWhenOn) {
  std::vector<std::string> env{"PATH=/bin", "TRAINPROF_SAMPLE=99"};
  ApplySampleEnvironment(&env, 0);  // an inherited value does not turn sampling on
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/bin"}));
  ApplySampleEnvironment(&env, 1000);
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/bin", "TRAINPROF_SAMPLE=1000"}));
}

}  // namespace
}  // namespace trainprof::launcher
