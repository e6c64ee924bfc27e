// `trainprof report` wiring: options, outputs and exit statuses.
#include "report_command.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdio_ext.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace trainprof::launcher {
namespace {

using test::ReadFile;
using test::TraceBuilder;

struct Outcome {
  int status;
  std::string out, err;
};

Outcome RunCaptured(const ReportArgs& args) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int status = RunReport(args);
  Outcome o{status, ::testing::internal::GetCapturedStdout(), ::testing::internal::GetCapturedStderr()};
  return o;
}

// One intact file and one cut in the middle of its chunk.
std::string MakeRun(const test::ScratchDir& dir) {
  TraceBuilder ok(1, 0);
  int t = ok.Thread(1);
  ok.Push(t, ok.start_ns() + 10, "step");
  ok.Pop(t, ok.start_ns() + 1'010);
  ok.WriteTo(dir.path());
  TraceBuilder cut(2, 1);
  int u = cut.Thread(2);
  cut.Push(u, cut.start_ns() + 10, "step");
  cut.Pop(u, cut.start_ns() + 20);
  std::vector<uint8_t> bytes = cut.Build();
  bytes.resize(format::kHeaderRegionSize + 64 + 6);
  TraceBuilder::WriteBytes(dir / "pid-2.trace", bytes);
  return dir / "pid-2.trace";
}

TEST(ReportCommand, NoTracesIsExit2) {
  test::ScratchDir dir;
  Outcome o = RunCaptured({.paths = {dir.path()}});
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err, "trainprof: error: no trace files (*.trace, *.pt.trace.json[.gz], *.summary) found in " + dir.path() + "\n");
  EXPECT_EQ(o.out, "");
}

TEST(ReportCommand, UnreadablePathIsExit2) {
  test::ScratchDir dir;
  MakeRun(dir);
  Outcome o = RunCaptured({.paths = {dir.path(), dir / "typo"}});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("trainprof: error: " + (dir / "typo") + ": "), std::string::npos) << o.err;
  EXPECT_EQ(o.out, "");
}

TEST(ReportCommand, DamagedFileIsAWarningAndExit0) {
  test::ScratchDir dir;
  std::string damaged = MakeRun(dir);
  Outcome o = RunCaptured({.paths = {dir.path()}});
  EXPECT_EQ(o.status, 0);
  EXPECT_EQ(o.err, "trainprof: warning: " + damaged + ": chunk 0 truncated at byte 16454 (its records end at byte " +
                       "16463) (16448 of 16454 bytes usable)\n");
  EXPECT_NE(o.out.find("trainprof report: 2 trace files (1 damaged), 2 processes on 1 host"), std::string::npos) << o.out;
}

TEST(ReportCommand, StrictMakesDamageExit2) {
  test::ScratchDir dir;
  MakeRun(dir);
  Outcome o = RunCaptured({.paths = {dir.path()}, .strict = true});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("trainprof: warning: "), std::string::npos);
  EXPECT_NE(o.err.find("trainprof: error: 1 damaged trace file (--strict)"), std::string::npos);
  EXPECT_FALSE(o.out.empty());  // the report is still written

  // Nothing damaged: strict is 0.
  test::ScratchDir clean;
  TraceBuilder(5).WriteTo(clean.path());
  EXPECT_EQ(RunCaptured({.paths = {clean.path()}, .strict = true}).status, 0);
}

TEST(ReportCommand, NoUsableTraceIsExit2) {
  test::ScratchDir dir;
  TraceBuilder::WriteBytes(dir / "pid-1.trace", {});
  Outcome o = RunCaptured({.paths = {dir.path()}});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("trainprof: warning: " + (dir / "pid-1.trace") + ": empty file (0 bytes)"),
            std::string::npos);
  EXPECT_NE(o.err.find("trainprof: error: the trace file " + (dir / "pid-1.trace") + " could not be read"),
            std::string::npos) << o.err;
}

TEST(ReportCommand, JsonToAFile) {
  test::ScratchDir dir;
  MakeRun(dir);
  std::string out = dir / "report.json";
  Outcome o = RunCaptured({.paths = {dir / "pid-1.trace"}, .format = "json", .output = out});
  EXPECT_EQ(o.status, 0);
  EXPECT_EQ(o.out, "");
  nlohmann::json j = nlohmann::json::parse(ReadFile(out));
  EXPECT_EQ(j["processes"].size(), 1u);
  EXPECT_EQ(j["nvtx_ranges"][0]["total_ns"], 1000);
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {  // no temporary left
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  }
}

TEST(ReportCommand, CsvToADirectoryAndToAPrefix) {
  test::ScratchDir dir;
  MakeRun(dir);
  Outcome o = RunCaptured({.paths = {dir.path()}, .format = "csv", .output = dir / "csv/", .by_process = true});
  EXPECT_EQ(o.status, 0);
  for (const char* name : {"files.csv", "processes.csv", "threads.csv", "nvtx_ranges.csv", "nvtx_marks.csv",
                           "nvtx_ranges_by_process.csv"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / (std::string("csv/") + name))) << name;
  }
  EXPECT_EQ(ReadFile(dir / "csv/nvtx_ranges.csv").substr(0, 10), "name,domai");

  o = RunCaptured({.paths = {dir.path()}, .format = "csv", .output = dir / "run1-"});
  EXPECT_EQ(o.status, 0);
  EXPECT_TRUE(std::filesystem::exists(dir / "run1-processes.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir / "run1-nvtx_ranges_by_process.csv"));

  o = RunCaptured({.paths = {dir.path()}, .format = "csv"});
  EXPECT_EQ(o.out.rfind("# files.csv\r\npath,pid,bytes", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("\r\n# nvtx_ranges.csv\r\n"), std::string::npos);
}

TEST(ReportCommand, UnwritableOutputIsExit1) {
  test::ScratchDir dir;
  MakeRun(dir);
  Outcome o = RunCaptured({.paths = {dir.path()}, .output = dir / "no/such/dir/report.txt"});
  EXPECT_EQ(o.status, 1);
  EXPECT_NE(o.err.find("trainprof: error: cannot write " + (dir / "no/such/dir/report.txt")), std::string::npos);
}

// Runs the report with stdout (fd 1) replaced by `fd` (or closed when fd < 0).
Outcome RunWithStdout(const ReportArgs& args, int fd) {
  std::fflush(stdout);
  ::testing::internal::CaptureStderr();  // first: it may leave a descriptor open at the lowest number
  const int saved = ::dup(1);
  if (fd >= 0) {
    ::dup2(fd, 1);
  } else {
    ::close(1);
  }
  int status = RunReport(args);
  __fpurge(stdout);  // what could not be written must not reach the real stdout later
  std::clearerr(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  return {status, "", ::testing::internal::GetCapturedStderr()};
}

TEST(ReportCommand, FailedWriteToStdoutIsAnError) {
  test::ScratchDir dir;
  MakeRun(dir);
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (full < 0) GTEST_SKIP() << "no /dev/full";
  for (const char* format : {"text", "json", "csv"}) {
    Outcome o = RunWithStdout({.paths = {dir / "pid-1.trace"}, .format = format}, full);
    EXPECT_EQ(o.status, 1) << format;
    EXPECT_EQ(o.err, "trainprof: error: cannot write the report to stdout: " + std::string(std::strerror(ENOSPC)) + "\n")
        << format;
  }
  ::close(full);

  Outcome closed = RunWithStdout({.paths = {dir / "pid-1.trace"}}, -1);
  EXPECT_EQ(closed.status, 1);
  EXPECT_EQ(closed.err, "trainprof: error: cannot write the report to stdout: " + std::string(std::strerror(EBADF)) + "\n");
}

// Runs the report in a child process under RLIMIT_FSIZE = `limit` bytes, stdout and stderr to
// files in dir; returns the child's wait status.
int RunUnderFileSizeLimit(const test::ScratchDir& dir, const ReportArgs& args, rlim_t limit) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open((dir / "stdout.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open((dir / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    rlimit lim{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    int status = RunReport(args);
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(status);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// A file size limit (ulimit -f) makes writes fail: a write error like any other, not death by
// SIGXFSZ, and no temporary file is left behind.
TEST(ReportCommand, FileSizeLimitIsAWriteError) {
  test::ScratchDir dir;
  MakeRun(dir);
  const std::string report = dir / "report.json";
  int status = RunUnderFileSizeLimit(dir, {.paths = {dir / "pid-1.trace"}, .format = "json", .output = report}, 512);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(ReadFile(dir / "stderr.txt"), "trainprof: error: cannot write " + report + ": " + std::strerror(EFBIG) + "\n");
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename().string().rfind("report.json", 0), std::string::npos) << e.path();
  }

  status = RunUnderFileSizeLimit(dir, {.paths = {dir / "pid-1.trace"}, .format = "json"}, 512);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(ReadFile(dir / "stderr.txt"),
            "trainprof: error: cannot write the report to stdout: " + std::string(std::strerror(EFBIG)) + "\n");
}

// A name id nothing defines, in an otherwise intact file, is NVTX misuse: no damage, --strict passes.
TEST(ReportCommand, UndefinedNameIdIsNotDamage) {
  test::ScratchDir dir;
  TraceBuilder b(7, 1);
  int t = b.Thread(7);
  b.RawFields(t, static_cast<uint8_t>(format::RecordTag::kMark), {10, 0, 555, 0});
  b.WriteTo(dir.path());
  Outcome o = RunCaptured({.paths = {dir.path()}, .strict = true});
  EXPECT_EQ(o.status, 0);
  EXPECT_EQ(o.err, "");
  EXPECT_NE(o.out.find("trainprof report: 1 trace file, 1 process on 1 host"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\n  pid 7: NVTX misuse: 1 undefined name id\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  <string #555>\n"), std::string::npos) << o.out;
}

// --full-names: kernel names demangled whole instead of shortened, in text and JSON.
TEST(ReportCommand, FullNames) {
  test::ScratchDir dir;
  TraceBuilder b(8, 1);
  int t = b.Thread(8), g = b.Thread(9);
  b.ApiCall(t, b.start_ns() + 1'000, b.start_ns() + 2'000, "cudaLaunchKernel_v7000", 1);
  b.Kernel(g, {.start = b.start_ns() + 3'000,
               .end = b.start_ns() + 5'000,
               .name = "_ZN7cutlass6KernelINS_4gemm6kernel4GemmIfEEEEvNT_6ParamsE",
               .correlation = 1});
  b.WriteTo(dir.path());
  Outcome shortened = RunCaptured({.paths = {dir.path()}});
  EXPECT_EQ(shortened.status, 0);
  EXPECT_NE(shortened.out.find("  cutlass::Kernel<...>\n"), std::string::npos) << shortened.out;
  Outcome full = RunCaptured({.paths = {dir.path()}, .full_names = true});
  EXPECT_NE(full.out.find("  void cutlass::Kernel<cutlass::gemm::kernel::Gemm<float> >"
                          "(cutlass::gemm::kernel::Gemm<float>::Params)\n"),
            std::string::npos)
      << full.out;
  Outcome json = RunCaptured({.paths = {dir.path()}, .format = "json", .full_names = true});
  nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["summary"]["full_names"], true);
  EXPECT_EQ(j["gpu_kernels"][0]["name"],
            "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<float> >(cutlass::gemm::kernel::Gemm<float>::Params)");
  EXPECT_EQ(j["gpu_kernels"][0]["mangled"], "_ZN7cutlass6KernelINS_4gemm6kernel4GemmIfEEEEvNT_6ParamsE");
}

TEST(ReportCommand, TopMustNotBeNegative) {
  CLI::App app;
  ReportArgs args;
  AddReportOptions(app.add_subcommand("report"), &args);
  const char* argv[] = {"trainprof", "report", "--top", "-1", "out/"};
  EXPECT_THROW(app.parse(static_cast<int>(std::size(argv)), const_cast<char**>(argv)), CLI::ParseError);
  EXPECT_EQ(args.top, 0u);
}

TEST(ReportCommand, OptionsParse) {
  CLI::App app;
  CLI::App* sub = app.add_subcommand("report");
  ReportArgs args;
  AddReportOptions(sub, &args);
  const char* argv[] = {"trainprof", "report", "--format", "json", "-o",       "r.json",  "--by-process",
                        "--top",     "5",      "--strict", "--full-names", "out/", "x.trace"};
  app.parse(static_cast<int>(std::size(argv)), const_cast<char**>(argv));
  EXPECT_EQ(args.paths, (std::vector<std::string>{"out/", "x.trace"}));
  EXPECT_EQ(args.format, "json");
  EXPECT_EQ(args.output, "r.json");
  EXPECT_TRUE(args.by_process);
  EXPECT_EQ(args.top, 5u);
  EXPECT_TRUE(args.strict);
  EXPECT_TRUE(args.full_names);

  CLI::App app2;
  ReportArgs args2;
  AddReportOptions(app2.add_subcommand("report"), &args2);
  const char* bad[] = {"trainprof", "report", "--format", "xml", "out/"};
  EXPECT_THROW(app2.parse(5, const_cast<char**>(bad)), CLI::ValidationError);
  CLI::App app3;
  ReportArgs args3;
  AddReportOptions(app3.add_subcommand("report"), &args3);
  const char* none[] = {"trainprof", "report"};
  EXPECT_THROW(app3.parse(2, const_cast<char**>(none)), CLI::RequiredError);
}

}  // namespace
}  // namespace trainprof::launcher
