#include "capture_options.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "capture_shutdown.h"
#include "inject_env.h"

namespace trainprof::launcher {
namespace {

CaptureOptions Parse(CaptureArgs args, unsigned trace = kTraceAll) {
  std::string error;
  auto o = ParseCaptureOptions(args, trace, &error);
  EXPECT_TRUE(o.has_value()) << error;
  return o.value_or(CaptureOptions{});
}

std::string Error(CaptureArgs args, unsigned trace = kTraceAll) {
  std::string error;
  EXPECT_FALSE(ParseCaptureOptions(args, trace, &error).has_value());
  return error;
}

TEST(CaptureOptions, NoneByDefault) {
  CaptureOptions o = Parse({});
  EXPECT_FALSE(o.any());
  EXPECT_FALSE(o.shuts_down());
  EXPECT_EQ(o.RangeText(), "none");
  EXPECT_FALSE(Parse({"none"}).any());
  EXPECT_FALSE(Parse({"NONE"}).any());
}

TEST(CaptureOptions, Ranges) {
  CaptureOptions cuda = Parse({"cudaProfilerApi"});
  EXPECT_EQ(cuda.range, CaptureOptions::Range::kCudaProfilerApi);
  EXPECT_EQ(cuda.end, CaptureOptions::End::kStop);
  EXPECT_EQ(cuda.RangeText(), "cudaProfilerApi");
  EXPECT_EQ(Parse({"cudaprofilerapi"}).range, CaptureOptions::Range::kCudaProfilerApi);

  CaptureOptions nvtx = Parse({"nvtx:Optimizer.step#SGD.step", "repeat"});
  EXPECT_EQ(nvtx.range, CaptureOptions::Range::kNvtx);
  EXPECT_EQ(nvtx.nvtx_name, "Optimizer.step#SGD.step");
  EXPECT_EQ(nvtx.end, CaptureOptions::End::kRepeat);
  EXPECT_EQ(nvtx.RangeText(), "nvtx:Optimizer.step#SGD.step");
  // The name is everything after the first colon, colons and spaces included.
  EXPECT_EQ(Parse({"nvtx:a:b c"}).nvtx_name, "a:b c");
  EXPECT_TRUE(Parse({"nvtx:step", "stop-shutdown"}).shuts_down());
}

TEST(CaptureOptions, Seconds) {
  CaptureOptions o = Parse({"", "", "2.5", "0.001"});
  EXPECT_EQ(o.delay_ns, 2500000000u);
  EXPECT_EQ(o.duration_ns, 1000000u);
  EXPECT_TRUE(o.any());
  EXPECT_EQ(Parse({"", "", "0"}).delay_ns, 0u);
  EXPECT_EQ(Parse({"", "", "1e3"}).delay_ns, 1000000000000u);
  EXPECT_TRUE(Parse({"", "stop-shutdown", "", "60"}).shuts_down());
}

TEST(CaptureOptions, UsageErrors) {
  EXPECT_NE(Error({"bogus"}).find("unknown value 'bogus' (valid: none, cudaProfilerApi, nvtx:NAME)"), std::string::npos);
  EXPECT_NE(Error({"nvtx"}).find("needs the name"), std::string::npos);
  EXPECT_NE(Error({"nvtx:"}).find("needs the name"), std::string::npos);
  EXPECT_NE(Error({"nvtxstep"}).find("unknown value"), std::string::npos);
  EXPECT_NE(Error({"nvtx:" + std::string(5000, 'x')}).find("5000 bytes"), std::string::npos);
  EXPECT_NE(Error({"nvtx:a", "never"}).find("unknown value 'never' (valid: stop, stop-shutdown, repeat)"),
            std::string::npos);
  for (const char* bad : {"-1", "abc", "1s", "inf", "nan", "0x10", " 1", "1e10"}) {
    EXPECT_NE(Error({"", "", bad}).find("--delay: '"), std::string::npos) << bad;
    EXPECT_NE(Error({"", "", "", bad}).find("--duration: '"), std::string::npos) << bad;
  }
  EXPECT_NE(Error({"", "", "", "0"}).find("greater than 0"), std::string::npos);
  // An end without a range; stop-shutdown is allowed with --duration alone.
  EXPECT_NE(Error({"", "repeat"}).find("needs --capture-range"), std::string::npos);
  EXPECT_NE(Error({"", "stop-shutdown"}).find("needs --capture-range"), std::string::npos);
  EXPECT_NE(Error({"none", "stop", "5"}).find("needs --capture-range"), std::string::npos);
  // Sources the range needs.
  EXPECT_NE(Error({"cudaProfilerApi"}, kTraceNvtx | kTracePython).find("needs CUDA tracing"), std::string::npos);
  EXPECT_NE(Error({"nvtx:a"}, kTraceCuda).find("needs NVTX"), std::string::npos);
  EXPECT_EQ(Parse({"nvtx:a"}, kTracePython).range, CaptureOptions::Range::kNvtx);  // the shim's ranges count
}

TEST(CaptureOptions, Environment) {
  std::vector<std::string> env = {"A=1", "TRAINPROF_CAPTURE_RANGE=nvtx:old", "TRAINPROF_LAUNCHER_PID=1"};
  ApplyCaptureEnvironment(&env, Parse({}), 1000, 42);
  EXPECT_EQ(env, std::vector<std::string>{"A=1"});  // an enclosing run's settings are not inherited

  ApplyCaptureEnvironment(&env, Parse({"nvtx:step", "stop-shutdown", "2", "3"}), 1000, 42);
  EXPECT_EQ(GetEnv(env, "TRAINPROF_CAPTURE_RANGE"), "nvtx:step");
  EXPECT_EQ(GetEnv(env, "TRAINPROF_CAPTURE_RANGE_END"), "stop-shutdown");
  EXPECT_EQ(GetEnv(env, "TRAINPROF_CAPTURE_WINDOW"), "2000001000:5000001000");
  EXPECT_EQ(GetEnv(env, "TRAINPROF_LAUNCHER_PID"), "42");

  ApplyCaptureEnvironment(&env, Parse({"", "", "", "3"}), 1000, 42);  // duration only: from the start
  EXPECT_EQ(GetEnv(env, "TRAINPROF_CAPTURE_WINDOW"), "0:3000001000");
  EXPECT_EQ(GetEnv(env, "TRAINPROF_CAPTURE_RANGE"), std::nullopt);
  EXPECT_EQ(GetEnv(env, "TRAINPROF_CAPTURE_RANGE_END"), std::nullopt);
  EXPECT_EQ(GetEnv(env, "TRAINPROF_LAUNCHER_PID"), std::nullopt);

  ApplyCaptureEnvironment(&env, Parse({"", "", "7"}), 1000, 42);  // delay only: to the end
  EXPECT_EQ(GetEnv(env, "TRAINPROF_CAPTURE_WINDOW"), "7000001000:0");

  ApplyCaptureEnvironment(&env, Parse({"", "stop-shutdown", "", "1"}), 1000, 42);
  EXPECT_EQ(GetEnv(env, "TRAINPROF_CAPTURE_RANGE_END"), "stop-shutdown");
  EXPECT_EQ(GetEnv(env, "TRAINPROF_LAUNCHER_PID"), std::nullopt);  // the launcher times --duration itself
}

TEST(CaptureShutdown, PollTimeout) {
  EXPECT_EQ(PollTimeoutMs(0, 5), -1);
  EXPECT_EQ(PollTimeoutMs(5, 5), 0);
  EXPECT_EQ(PollTimeoutMs(5, 9), 0);
  EXPECT_EQ(PollTimeoutMs(1000001, 0), 2);  // rounded up: never early
  EXPECT_EQ(PollTimeoutMs(UINT64_MAX, 0), 3600000);
}

// A child that ignores SIGTERM, with a grandchild that does not: SIGTERM reaches both, the
// grandchild dies of it, and the grace deadline SIGKILLs the child.
TEST(CaptureShutdown, TermThenKillTheWholeTree) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGTERM, SIG_IGN);
    pid_t grandchild = fork();
    if (grandchild == 0) {
      signal(SIGTERM, SIG_DFL);
      (void)write(ready[1], "g", 1);
      pause();
      _exit(0);
    }
    (void)write(ready[1], "c", 1);
    for (;;) pause();
  }
  char buf[2];
  ASSERT_EQ(read(ready[0], buf, 1), 1);
  ASSERT_EQ(read(ready[0], buf + 1, 1), 1);
  std::vector<pid_t> tree = Descendants(getpid());
  EXPECT_EQ(tree.size(), 2u);
  EXPECT_NE(std::find(tree.begin(), tree.end(), child), tree.end());

  TreeShutdown shutdown(/*duration_end_ns=*/0, "cmd", /*grace_ns=*/200000000);
  EXPECT_EQ(shutdown.NextDeadline(), 0u);
  shutdown.OnShutdownRequest(child);
  EXPECT_TRUE(shutdown.started());
  uint64_t kill_at = shutdown.NextDeadline();
  EXPECT_GT(kill_at, MonotonicNowNs());
  shutdown.OnDeadline(kill_at - 1);  // too early: nothing
  EXPECT_FALSE(shutdown.killed());
  usleep(300000);
  shutdown.OnDeadline(MonotonicNowNs());
  EXPECT_TRUE(shutdown.killed());
  EXPECT_EQ(shutdown.NextDeadline(), 0u);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_NE(shutdown.Summary(137).find("SIGKILL after the grace period"), std::string::npos);
  close(ready[0]);
  close(ready[1]);
}

TEST(CaptureShutdown, DurationDeadline) {
  uint64_t end = MonotonicNowNs() + 1000000000;
  TreeShutdown shutdown(end, "cmd");
  EXPECT_EQ(shutdown.NextDeadline(), end);
  shutdown.OnDeadline(end - 1);
  EXPECT_FALSE(shutdown.started());
  EXPECT_EQ(shutdown.Summary(0), "");
  shutdown.OnDeadline(end);  // no descendants: SIGTERM to none, still started
  EXPECT_TRUE(shutdown.started());
  EXPECT_NE(shutdown.Summary(143).find("--duration ended; SIGTERM): exit status 143"), std::string::npos);
}

}  // namespace
}  // namespace trainprof::launcher
