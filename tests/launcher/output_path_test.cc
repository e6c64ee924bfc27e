#include "output_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <utility>
#include <vector>

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

// Each case: a pattern, and the directory it expands to (pid 123).
void ExpectExpansions(std::initializer_list<std::pair<std::string, std::string>> cases) {
  for (const auto& [pattern, dir] : cases) EXPECT_EQ(Expand(pattern), dir) << pattern;
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
  ExpectExpansions({
      {"/t/%h-%p", "/t/node7-123"},
      {"/t/job%q{SLURM_JOB_ID}", "/t/job4242"},
      {"/t/a%q{UNSET_VARIABLE}b", "/t/ab"},
      {"/t/a%q{EMPTY}b", "/t/ab"},
  });
}

// A %q value is one name: '/' becomes '_' and a "." or ".." component it makes gets '_' for its
// dots, so no value takes the directory anywhere the pattern does not put it.
TEST(OutputPattern, EnvironmentValueStaysInsideTheDirectory) {
  PatternContext ctx = TestContext();
  ctx.getenv = [](const std::string& name) -> std::optional<std::string> {
    static const std::map<std::string, std::string> vars = {
        {"UP", "../x"}, {"SLASH", "a/b"}, {"DOTDOT", ".."}, {"DOT", "."}, {"ABS", "/etc"},
        {"DEEP", "../../../../etc/cron.d"}, {"JOB", "1.5"}};
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  auto expand = [&](const std::string& pattern, std::vector<std::string>* notes = nullptr) {
    std::string error;
    auto p = OutputPattern::Parse(pattern, ctx, &error);
    EXPECT_TRUE(p.has_value()) << pattern << ": " << error;
    if (notes != nullptr && p) *notes = p->notes();
    return p ? p->Expand(9) : std::string();
  };
  std::vector<std::string> notes;
  EXPECT_EQ(expand("/runs/%q{UP}", &notes), "/runs/.._x");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "note: %q{UP} is '../x'; used as '.._x' (a %q value is one name: '/' becomes '_'; for a "
                      "directory from the environment write \"$UP\" for the shell)");
  EXPECT_EQ(expand("/runs/%q{SLASH}"), "/runs/a_b");
  EXPECT_EQ(expand("/runs/%q{DOTDOT}", &notes), "/runs/__");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("'..'; used as '__'"), std::string::npos) << notes[0];
  EXPECT_EQ(expand("/runs/%q{DOT}/x"), "/runs/_/x");
  EXPECT_EQ(expand("/runs/.%q{DOT}"), "/runs/._");  // with the pattern's own dot
  EXPECT_EQ(expand("/runs/%q{DOT}%q{DOT}"), "/runs/__");
  EXPECT_EQ(expand("/runs/%q{DOTDOT}-%p"), "/runs/..-9");  // a name, not "..": kept
  EXPECT_EQ(expand("/runs/%q{DOT}%p"), "/runs/.9");
  EXPECT_EQ(expand("%q{ABS}"), "/work/run/_etc");
  EXPECT_EQ(expand("/runs/%q{DEEP}"), "/runs/.._.._.._.._etc_cron.d");
  EXPECT_EQ(expand("/runs/job-%q{JOB}", &notes), "/runs/job-1.5");
  EXPECT_TRUE(notes.empty());
  // The pattern's own ".." is the user's: kept.
  EXPECT_EQ(expand("/runs/../%q{SLASH}"), "/a_b");
}

// An empty value at the start of a relative pattern made it absolute: "%q{UNSET}/x" was "/x".
TEST(OutputPattern, AnEmptyValueKeepsARelativePatternRelative) {
  ExpectExpansions({
      {"%q{UNSET}/tpq-escape", "/work/run/tpq-escape"},
      {"%q{EMPTY}/tpq-escape", "/work/run/tpq-escape"},
      {"%q{EMPTY}/", "/work/run"},
      {"%q{EMPTY}//%q{EMPTY}/x-%p", "/work/run/x-123"},
      {"/%q{EMPTY}/abs", "/abs"},  // an absolute pattern stays absolute
  });
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

}  // namespace
}  // namespace trainprof::launcher
