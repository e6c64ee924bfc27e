#include "child_process.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>

namespace trainprof::launcher {
namespace {

TEST(ForwardingRule, OnlySignalsSentByOtherProcesses) {
  const pid_t child = 500;
  EXPECT_TRUE(ShouldForwardSignal(SI_USER, 77, child));   // kill -TERM <trainprof>
  EXPECT_TRUE(ShouldForwardSignal(SI_QUEUE, 77, child));  // sigqueue
  EXPECT_TRUE(ShouldForwardSignal(SI_TKILL, 77, child));  // tgkill
  EXPECT_FALSE(ShouldForwardSignal(SI_USER, child, child));  // the command signalled us
  EXPECT_FALSE(ShouldForwardSignal(SI_KERNEL, 0, child));    // Ctrl-C: the tty told everyone
  EXPECT_TRUE(IsForwardedSignal(SIGINT));
  EXPECT_TRUE(IsForwardedSignal(SIGQUIT));
  EXPECT_FALSE(IsForwardedSignal(SIGCHLD));
  EXPECT_FALSE(IsForwardedSignal(SIGUSR1));
}

TEST(ExitStatus, LikeAShell) {
  EXPECT_EQ(ExitStatusFromWait(7 << 8), 7);
  EXPECT_EQ(ExitStatusFromWait(SIGTERM), 143);
  EXPECT_EQ(ExitStatusFromWait(SIGKILL | 0x80), 137);  // with a core dump flag
  EXPECT_EQ(ExitStatusForExecError(ENOENT), 127);
  EXPECT_EQ(ExitStatusForExecError(E2BIG), 127);
  EXPECT_EQ(ExitStatusForExecError(EACCES), 126);
  EXPECT_EQ(ExitStatusForExecError(ENOEXEC), 126);
  EXPECT_EQ(DescribeExecError("pyhton", ENOENT), "pyhton: command not found");
  EXPECT_EQ(DescribeExecError("./train", ENOENT), "./train: No such file or directory");
  EXPECT_EQ(DescribeExecError("./data.csv", EACCES), "./data.csv: Permission denied");
}

bool SigintBlocked() {
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, nullptr, &now);
  return sigismember(&now, SIGINT);
}

TEST(ChildProcess, RunsAndReportsTheExitCode) {
  ChildProcess child;
  StartFailure failure;
  ASSERT_TRUE(child.Start({"sh", "-c", "exit 3"}, {"PATH=/usr/bin:/bin"}, nullptr, &failure));
  EXPECT_GT(child.pid(), 0);
  EXPECT_TRUE(SigintBlocked());
  int status = child.Wait();
  EXPECT_EQ(ExitStatusFromWait(status), 3);
  EXPECT_TRUE(SigintBlocked());  // still forwarding: descendants may be left to wait for
  EXPECT_TRUE(child.WaitDescendants(1000, [](const std::vector<pid_t>&) {}).empty());
  EXPECT_FALSE(SigintBlocked());  // restored after WaitDescendants
}

TEST(ChildProcess, WaitsForOrphanedDescendantsAndReturnsTheirStatus) {
  ChildProcess child;
  StartFailure failure;
  // The shell exits at once; its background child (exit 5 after 0.3 s) is reparented to us.
  ASSERT_TRUE(child.Start({"sh", "-c", "(sleep 0.3; exit 5) & exit 0"}, {"PATH=/usr/bin:/bin"}, nullptr, &failure));
  EXPECT_EQ(ExitStatusFromWait(child.Wait()), 0);
  std::vector<pid_t> slow;
  auto reaped = child.WaitDescendants(50, [&](const std::vector<pid_t>& running) { slow = running; });
  ASSERT_EQ(reaped.size(), 1u);
  EXPECT_EQ(ExitStatusFromWait(reaped[0].status), 5);
  EXPECT_GT(reaped[0].reaped_ns, 0u);
  ASSERT_EQ(slow.size(), 1u);  // noted as still running after 50 ms
  EXPECT_EQ(slow[0], reaped[0].pid);
  EXPECT_FALSE(SigintBlocked());
}

TEST(ChildProcess, PrepareRunsInTheChildAndEditsItsEnvironment) {
  ChildProcess child;
  StartFailure failure;
  pid_t parent = getpid();
  auto prepare = [parent](std::vector<std::string>* env) {
    if (getpid() == parent) return EPERM;  // must not run in the parent
    env->push_back("CHILD_PID=" + std::to_string(getpid()));
    return 0;
  };
  ASSERT_TRUE(child.Start({"sh", "-c", "test \"$CHILD_PID\" = \"$$\""}, {"PATH=/usr/bin:/bin"},
                          prepare, &failure));
  EXPECT_EQ(ExitStatusFromWait(child.Wait()), 0);
}

TEST(ChildProcess, ReportsExecFailureThroughThePipe) {
  ChildProcess child;
  StartFailure failure;
  EXPECT_FALSE(child.Start({"trainprof-no-such-command"}, {"PATH=/usr/bin:/bin"}, nullptr, &failure));
  EXPECT_EQ(failure.stage, StartFailure::Stage::kExec);
  EXPECT_EQ(failure.error, ENOENT);
  EXPECT_FALSE(SigintBlocked());
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);  // already reaped
}

TEST(ChildProcess, ReportsPrepareFailure) {
  ChildProcess child;
  StartFailure failure;
  auto prepare = [](std::vector<std::string>*) { return ENOSPC; };
  EXPECT_FALSE(child.Start({"true"}, {"PATH=/usr/bin:/bin"}, prepare, &failure));
  EXPECT_EQ(failure.stage, StartFailure::Stage::kPrepare);
  EXPECT_EQ(failure.error, ENOSPC);
}

}  // namespace
}  // namespace trainprof::launcher
