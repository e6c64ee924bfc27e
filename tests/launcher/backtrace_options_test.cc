// `trainprof run --backtrace=LIST` (launcher/backtrace_options.h): normalised for the library,
// usage errors named.
#include "backtrace_options.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace trainprof::launcher {
namespace {

std::string Ok(const std::string& text) {
  std::string error;
  auto v = ParseBacktraceList(text, &error);
  EXPECT_TRUE(v.has_value()) << text << ": " << error;
  return v.value_or("");
}

std::string Error(const std::string& text) {
  std::string error;
  EXPECT_FALSE(ParseBacktraceList(text, &error).has_value()) << text;
  return error;
}

TEST(BacktraceOptions, Normalised) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "cuda:1000"},  // not given: the default
      {"cuda", "cuda:1000"},           {"nvtx", "nvtx"}, {"nvtx,cuda:5000", "cuda:5000,nvtx"},
      {"cuda:0,nvtx,nvtx", "cuda:0,nvtx"}, {"none", "none"},
  };
  for (const auto& [given, normalised] : cases) EXPECT_EQ(Ok(given), normalised) << given;
}

TEST(BacktraceOptions, UsageErrorsSayWhatIsWrong) {
  EXPECT_EQ(Error("stacks"), "--backtrace: unknown value 'stacks' (valid: cuda, cuda:THRESHOLD_NS, nvtx, none; comma-separated)");
  EXPECT_EQ(Error("nvtx,"), "--backtrace: unknown value '' (valid: cuda, cuda:THRESHOLD_NS, nvtx, none; comma-separated)");
  EXPECT_EQ(Error("cuda:1us"),
            "--backtrace: 'cuda:1us': the threshold is a whole number of nanoseconds up to 1e15 (e.g. cuda:1000)");
  EXPECT_NE(Error("cuda:-5").find("whole number"), std::string::npos);
  EXPECT_NE(Error("cuda:2000000000000000").find("up to 1e15"), std::string::npos);
  EXPECT_EQ(Error("none,nvtx"), "--backtrace=none,nvtx: 'none' cannot be combined with other values");
}

TEST(BacktraceOptions, Environment) {
  std::vector<std::string> env = {"PATH=/bin", "TRAINPROF_BACKTRACE=nvtx"};
  ApplyBacktraceEnvironment(&env, "cuda:1000");
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/bin", "TRAINPROF_BACKTRACE=cuda:1000"}));
}

}  // namespace
}  // namespace trainprof::launcher
