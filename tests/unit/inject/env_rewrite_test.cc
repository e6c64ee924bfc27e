#include "env_rewrite.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config.h"

namespace trainprof::inject {
namespace {

// Runs RewriteEnv on a vector of strings and returns the result as strings.
std::vector<std::string> Rewrite(std::vector<std::string> env, const Config& cfg, bool follow) {
  std::vector<char*> in;
  for (auto& e : env) in.push_back(e.data());
  in.push_back(nullptr);
  std::vector<char*> out(RewrittenEnvCapacity(in.data()));
  std::string scratch(RewriteScratchBytes(in.data(), cfg), '\0');
  char** result = RewriteEnv(in.data(), cfg, follow, out.data(), scratch.data());
  std::vector<std::string> r;
  for (char** p = result; *p != nullptr; ++p) r.emplace_back(*p);
  return r;
}

Config TestConfig() {
  Config c;
  c.lib_path = "/opt/tp/libtrainprof_inject.so";
  c.python_dir = "/opt/tp/python";
  c.output_dir = "/tmp/out";
  c.saved[0] = "TRAINPROF_OUTPUT_DIR=/tmp/out";
  c.saved[1] = "TRAINPROF_FOLLOW_CHILDREN=1";
  c.saved[4] = "TRAINPROF_LIB=/opt/tp/libtrainprof_inject.so";
  c.saved[6] = "NVTX_INJECTION64_PATH=/opt/tp/libtrainprof_inject.so";
  return c;
}

TEST(EnvRewrite, WithoutFollowStripsOurVariablesAndKeepsTheRest) {
  auto r = Rewrite({"HOME=/root", "LD_PRELOAD=/opt/tp/libtrainprof_inject.so:/usr/lib/libjemalloc.so",
                    "TRAINPROF_OUTPUT_DIR=/tmp/out", "NVTX_INJECTION64_PATH=/opt/tp/libtrainprof_inject.so",
                    "PYTHONPATH=/opt/tp/python:/src", "PATH=/bin"},
                   TestConfig(), false);
  EXPECT_EQ(r, (std::vector<std::string>{"HOME=/root", "LD_PRELOAD=/usr/lib/libjemalloc.so", "PYTHONPATH=/src",
                                         "PATH=/bin"}));
}

TEST(EnvRewrite, WithoutFollowDropsAPreloadThatHeldOnlyUs) {
  auto r = Rewrite({"LD_PRELOAD=/opt/tp/libtrainprof_inject.so", "A=1"}, TestConfig(), false);
  EXPECT_EQ(r, (std::vector<std::string>{"A=1"}));
}

TEST(EnvRewrite, FollowKeepsEverythingThatIsAlreadyThere) {
  std::vector<std::string> env = {"LD_PRELOAD=/opt/tp/libtrainprof_inject.so", "TRAINPROF_OUTPUT_DIR=/tmp/out",
                                  "TRAINPROF_FOLLOW_CHILDREN=1", "TRAINPROF_LIB=/opt/tp/libtrainprof_inject.so",
                                  "NVTX_INJECTION64_PATH=/opt/tp/libtrainprof_inject.so",
                                  "PYTHONPATH=/opt/tp/python", "X=y"};
  EXPECT_EQ(Rewrite(env, TestConfig(), true), env);
}

TEST(EnvRewrite, FollowRestoresVariablesAScrubbingLauncherRemoved) {
  auto r = Rewrite({"LD_PRELOAD=/usr/lib/libjemalloc.so", "X=y"}, TestConfig(), true);
  EXPECT_EQ(r, (std::vector<std::string>{"LD_PRELOAD=/opt/tp/libtrainprof_inject.so:/usr/lib/libjemalloc.so", "X=y",
                                         "TRAINPROF_OUTPUT_DIR=/tmp/out", "TRAINPROF_FOLLOW_CHILDREN=1",
                                         "TRAINPROF_LIB=/opt/tp/libtrainprof_inject.so",
                                         "NVTX_INJECTION64_PATH=/opt/tp/libtrainprof_inject.so",
                                         "PYTHONPATH=/opt/tp/python"}));
}

TEST(EnvRewrite, FollowWithAnEmptyEnvironmentAddsEverything) {
  Config cfg = TestConfig();
  std::vector<char*> out(RewrittenEnvCapacity(nullptr));
  std::string scratch(RewriteScratchBytes(nullptr, cfg), '\0');
  char** r = RewriteEnv(nullptr, cfg, true, out.data(), scratch.data());
  std::vector<std::string> got;
  for (char** p = r; *p != nullptr; ++p) got.emplace_back(*p);
  EXPECT_EQ(got.size(), 6u);
  EXPECT_EQ(got[4], "LD_PRELOAD=/opt/tp/libtrainprof_inject.so");
  EXPECT_EQ(got[5], "PYTHONPATH=/opt/tp/python");
}

TEST(EnvRewrite, WithoutFollowEmptyEnvironmentStaysEmpty) {
  Config cfg = TestConfig();
  std::vector<char*> out(RewrittenEnvCapacity(nullptr));
  std::string scratch(RewriteScratchBytes(nullptr, cfg), '\0');
  EXPECT_EQ(RewriteEnv(nullptr, cfg, false, out.data(), scratch.data())[0], nullptr);
}

TEST(EnvRewrite, QuietFlagsReachExecdChildrenSoFailuresAreSaidOnce) {
  Config cfg = TestConfig();
  cfg.quiet = true;
  cfg.cuda_quiet = true;
  auto r = Rewrite({"X=y"}, cfg, true);
  EXPECT_NE(std::find(r.begin(), r.end(), "TRAINPROF_QUIET=1"), r.end());
  EXPECT_NE(std::find(r.begin(), r.end(), "TRAINPROF_CUDA_QUIET=1"), r.end());
  // Only the one that was said.
  cfg.quiet = false;
  r = Rewrite({"X=y"}, cfg, true);
  EXPECT_EQ(std::find(r.begin(), r.end(), "TRAINPROF_QUIET=1"), r.end());
  EXPECT_NE(std::find(r.begin(), r.end(), "TRAINPROF_CUDA_QUIET=1"), r.end());
  // Already there: not repeated. Without --follow-children: stripped like our other variables.
  r = Rewrite({"TRAINPROF_CUDA_QUIET=1"}, cfg, true);
  EXPECT_EQ(std::count(r.begin(), r.end(), "TRAINPROF_CUDA_QUIET=1"), 1);
  r = Rewrite({"TRAINPROF_CUDA_QUIET=1", "CUDA_INJECTION64_PATH=/opt/tp/libtrainprof_inject.so", "X=y"}, cfg, false);
  EXPECT_EQ(r, (std::vector<std::string>{"X=y"}));
}

TEST(EnvRewrite, SimilarNamesAreNotOurs) {
  auto r = Rewrite({"TRAINPROF_OUTPUT_DIRX=1", "LD_PRELOAD_X=1", "LD_PRELOAD=/opt/tp/libtrainprof_inject.so.bak"},
                   TestConfig(), false);
  EXPECT_EQ(r, (std::vector<std::string>{"TRAINPROF_OUTPUT_DIRX=1", "LD_PRELOAD_X=1",
                                         "LD_PRELOAD=/opt/tp/libtrainprof_inject.so.bak"}));
}

}  // namespace
}  // namespace trainprof::inject
