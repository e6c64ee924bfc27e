#include "output_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

namespace trainprof::launcher {
namespace {

PatternContext TestContext() {
  PatternContext ctx;
  ctx.hostname = "node7";
  ctx.cwd = "/work/run";
  ctx.getenv = [](const std::string& name) -> std::optional<std::string> {
    static const std::map<std::string, std::string> vars = {{"SLURM_JOB_ID", "4242"}, {"EMPTY", ""}};
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  return ctx;
}

std::string Expand(const std::string& pattern, pid_t pid = 123) {
  std::string error;
  auto p = OutputPattern::Parse(pattern, TestContext(), &error);
  EXPECT_TRUE(p.has_value()) << pattern << ": " << error;
  return p ? p->Expand(pid) : std::string();
}

std::string ParseError(const std::string& pattern) {
  std::string error;
  auto p = OutputPattern::Parse(pattern, TestContext(), &error);
  EXPECT_FALSE(p.has_value()) << pattern;
  return error;
}

TEST(OutputPattern, LiteralAbsolutePathIsKept) {
  EXPECT_EQ(Expand("/scratch/traces"), "/scratch/traces");
}

TEST(OutputPattern, RelativePathIsMadeAbsoluteAndNormalised) {
  EXPECT_EQ(Expand("out"), "/work/run/out");
  EXPECT_EQ(Expand("./a/./b/../c/"), "/work/run/a/c");
  EXPECT_EQ(Expand("../x"), "/work/x");
}

TEST(OutputPattern, PidExpandsToTheGivenPid) {
  std::string error;
  auto p = OutputPattern::Parse("run-%p", TestContext(), &error);
  ASSERT_TRUE(p.has_value()) << error;
  EXPECT_TRUE(p->has_pid());
  EXPECT_EQ(p->Expand(4711), "/work/run/run-4711");
  EXPECT_EQ(Expand("%p/%p"), "/work/run/123/123");
  EXPECT_FALSE(OutputPattern::Parse("run", TestContext(), &error)->has_pid());
}

TEST(OutputPattern, HostnameAndEnvironment) {
  EXPECT_EQ(Expand("/t/%h-%p"), "/t/node7-123");
  EXPECT_EQ(Expand("/t/job%q{SLURM_JOB_ID}"), "/t/job4242");
  EXPECT_EQ(Expand("/t/a%q{UNSET_VARIABLE}b"), "/t/ab");
  EXPECT_EQ(Expand("/t/a%q{EMPTY}b"), "/t/ab");
}

TEST(OutputPattern, PercentPercentIsALiteralPercent) {
  EXPECT_EQ(Expand("/t/100%%-%p"), "/t/100%-123");
  EXPECT_EQ(Expand("/t/%%p"), "/t/%p");
}

TEST(OutputPattern, EnvironmentValueIsNotExpandedAgain) {
  PatternContext ctx = TestContext();
  ctx.getenv = [](const std::string&) -> std::optional<std::string> { return "x%p"; };
  std::string error;
  auto p = OutputPattern::Parse("/t/%q{V}", ctx, &error);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->has_pid());
  EXPECT_EQ(p->Expand(5), "/t/x%p");
}

TEST(OutputPattern, Errors) {
  EXPECT_NE(ParseError("out-%x").find("unknown expansion '%x'"), std::string::npos);
  EXPECT_NE(ParseError("out-%x").find("%p"), std::string::npos);  // lists the valid ones
  EXPECT_NE(ParseError("out%").find("lone '%'"), std::string::npos);
  EXPECT_NE(ParseError("out-%q").find("%q must be followed by {VARIABLE}"), std::string::npos);
  EXPECT_NE(ParseError("out-%qHOME").find("{VARIABLE}"), std::string::npos);
  EXPECT_NE(ParseError("out-%q{HOME").find("{VARIABLE}"), std::string::npos);
  EXPECT_NE(ParseError("out-%q{}").find("not an environment variable name"), std::string::npos);
  EXPECT_NE(ParseError("out-%q{A-B}").find("not an environment variable name"), std::string::npos);
  EXPECT_NE(ParseError("%q{UNSET_VARIABLE}").find("empty path"), std::string::npos);
  EXPECT_NE(ParseError("").find("empty path"), std::string::npos);
}

TEST(OutputPattern, CurrentContextIsAbsolute) {
  PatternContext ctx = CurrentPatternContext();
  EXPECT_FALSE(ctx.hostname.empty());
  EXPECT_EQ(ctx.cwd.front(), '/');
  setenv("TRAINPROF_TEST_OUTPUT_VAR", "v1", 1);
  std::string error;
  auto p = OutputPattern::Parse("/t/%q{TRAINPROF_TEST_OUTPUT_VAR}", ctx, &error);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->Expand(1), "/t/v1");
}

TEST(DefaultOutputName, HasTheDocumentedShape) {
  std::string name = DefaultOutputName(std::time(nullptr));
  ASSERT_EQ(name.size(), std::string("trainprof-YYYYmmdd-HHMMSS").size()) << name;
  EXPECT_EQ(name.substr(0, 10), "trainprof-");
  EXPECT_EQ(name[18], '-');
  for (size_t i : {10, 11, 12, 13, 14, 15, 16, 17, 19, 20, 21, 22, 23, 24}) {
    EXPECT_TRUE(name[i] >= '0' && name[i] <= '9') << name;
  }
}

class MakeDirectoriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/trainprof-output-path-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string root_;
};

TEST_F(MakeDirectoriesTest, CreatesParentsAndAcceptsExisting) {
  std::string dir = root_ + "/a/b/c";
  EXPECT_EQ(MakeDirectories(dir), 0);
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  EXPECT_EQ(MakeDirectories(dir), 0);
  EXPECT_EQ(MakeDirectories(dir + "/"), 0);
}

TEST_F(MakeDirectoriesTest, FileInTheWayIsAnError) {
  std::ofstream(root_ + "/file") << "x";
  EXPECT_EQ(MakeDirectories(root_ + "/file"), ENOTDIR);
  EXPECT_EQ(MakeDirectories(root_ + "/file/sub"), ENOTDIR);
}

}  // namespace
}  // namespace trainprof::launcher
