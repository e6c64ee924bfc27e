#include "trace_dir.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>

#include "temp_dir_test.h"
#include "trainprof/trace_format.h"

namespace trainprof::launcher {
namespace {

using format::FileHeader;

// The end fields as the launcher leaves them, read back as bytes.
struct End {
  uint32_t kind;
  int32_t code;
  uint64_t monotonic_ns;
};

class TraceDirTest : public test::TempDirTest {
 protected:
  TraceDirTest() : TempDirTest("trainprof-trace-dir-test") {}

  // A header-only trace file (plus `extra` bytes) as the injection library would write it.
  void WriteTrace(const std::string& name, int32_t pid, uint32_t image, uint64_t end_ns = 0,
                  size_t extra = 0, uint8_t run = 0, uint64_t pid_ns = 0, uint64_t ticks = 0) {
    std::string bytes(sizeof(FileHeader) + extra, '\0');
    memcpy(bytes.data(), format::kFileMagic, sizeof(format::kFileMagic));
    uint32_t version = format::kFormatVersion;
    memcpy(bytes.data() + offsetof(FileHeader, version), &version, 4);
    memcpy(bytes.data() + offsetof(FileHeader, pid), &pid, 4);
    memcpy(bytes.data() + offsetof(FileHeader, image_index), &image, 4);
    memcpy(bytes.data() + offsetof(FileHeader, end_monotonic_ns), &end_ns, 8);
    memset(bytes.data() + offsetof(FileHeader, run_id), run, sizeof(FileHeader::run_id));
    memcpy(bytes.data() + offsetof(FileHeader, pid_namespace), &pid_ns, 8);
    memcpy(bytes.data() + offsetof(FileHeader, start_ticks), &ticks, 8);
    std::ofstream(dir_ + "/" + name, std::ios::binary) << bytes;
  }

  std::string Contents(const std::string& name) {
    std::ifstream in(dir_ + "/" + name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  End ReadEnd(const std::string& name) {
    std::string b = Contents(name);
    End e{};
    memcpy(&e.kind, b.data() + format::kEndKindOffset, 4);
    memcpy(&e.code, b.data() + format::kEndKindOffset + 4, 4);
    memcpy(&e.monotonic_ns, b.data() + offsetof(FileHeader, end_monotonic_ns), 8);
    return e;
  }
};

constexpr int ExitedWith(int code) { return code << 8; }  // a waitpid status

TEST_F(TraceDirTest, PatchesTheLastImageOfTheRootPid) {
  WriteTrace("pid-100.trace", 100, 0);
  WriteTrace("pid-100.1.trace", 100, 1);
  WriteTrace("pid-1000.trace", 1000, 0);  // matches the pid-100* prefix, but another pid
  std::string error;
  ASSERT_TRUE(RecordRootEnd(dir_, 100, ExitedWith(3), 777, &error)) << error;
  End e = ReadEnd("pid-100.1.trace");
  EXPECT_EQ(e.kind, static_cast<uint32_t>(format::EndKind::kExit));
  EXPECT_EQ(e.code, 3);
  EXPECT_EQ(e.monotonic_ns, 777u);  // when it was reaped
  EXPECT_EQ(ReadEnd("pid-100.trace").kind, 0u);
  EXPECT_EQ(ReadEnd("pid-1000.trace").kind, 0u);
}

TEST_F(TraceDirTest, RecordsASignal) {
  WriteTrace("pid-7.trace", 7, 0, /*end_ns=*/12345);
  std::string error;
  ASSERT_TRUE(RecordRootEnd(dir_, 7, SIGKILL, 777, &error)) << error;
  End e = ReadEnd("pid-7.trace");
  EXPECT_EQ(e.kind, static_cast<uint32_t>(format::EndKind::kSignal));
  EXPECT_EQ(e.code, SIGKILL);
  EXPECT_EQ(e.monotonic_ns, 12345u);  // the library's own end time is kept
}

TEST_F(TraceDirTest, HeaderPidDecidesNotTheName) {
  WriteTrace("pid-8.trace", 9, 0);
  std::string error;
  EXPECT_FALSE(RecordRootEnd(dir_, 8, ExitedWith(0), 777, &error));
  EXPECT_TRUE(error.empty());
  EXPECT_EQ(ReadEnd("pid-8.trace").kind, 0u);
}

TEST_F(TraceDirTest, LeavesFilesWithoutMagicAlone) {
  std::string junk(sizeof(FileHeader), 'x');
  std::ofstream(dir_ + "/pid-5.trace", std::ios::binary) << junk;
  std::string error;
  EXPECT_FALSE(RecordRootEnd(dir_, 5, ExitedWith(1), 777, &error));
  EXPECT_EQ(Contents("pid-5.trace"), junk);
}

TEST_F(TraceDirTest, NeverCreatesAFile) {
  std::string error;
  EXPECT_FALSE(RecordRootEnd(dir_, 42, ExitedWith(0), 777, &error));
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
  EXPECT_FALSE(RecordRootEnd(dir_ + "/missing", 42, ExitedWith(0), 777, &error));
}

TEST_F(TraceDirTest, SummaryCountsFilesProcessesAndBytes) {
  WriteTrace("pid-100.trace", 100, 0, 0, 1000);
  WriteTrace("pid-100.1.trace", 100, 1);
  WriteTrace("pid-101.trace", 101, 0);
  std::ofstream(dir_ + "/pid-102.trace") << "";  // no header (yet): a file, not a process
  std::ofstream(dir_ + "/notes.txt") << "not a trace";
  ASSERT_EQ(symlink((dir_ + "/pid-101.trace").c_str(), (dir_ + "/pid-103.trace").c_str()), 0);  // not ours
  TraceDirSummary s = SummarizeTraceDir(dir_);
  EXPECT_EQ(s.files, 4u);
  EXPECT_EQ(s.processes, 2u);
  EXPECT_EQ(s.bytes, 3 * sizeof(FileHeader) + 1000);
  EXPECT_EQ(SummarizeTraceDir(dir_ + "/missing").files, 0u);
}

// A FIFO, socket or device named *.trace is never opened (it would block, or never end): the
// summary lists it as skipped, and RecordRootEnd passes it by, even at the root pid's name.
TEST_F(TraceDirTest, FifosSocketsAndDevicesAreSkippedWithoutOpeningThem) {
  WriteTrace("pid-7.trace", 7, 0);
  ASSERT_EQ(mkfifo((dir_ + "/pid-7.1.trace").c_str(), 0600), 0);
  int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sock_path = dir_ + "/s.trace";
  ASSERT_LT(sock_path.size(), sizeof(addr.sun_path));
  memcpy(addr.sun_path, sock_path.c_str(), sock_path.size() + 1);
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const bool dev = mknod((dir_ + "/zero.trace").c_str(), S_IFCHR | 0600, makedev(1, 5)) == 0;  // root only
  TraceDirSummary s = SummarizeTraceDir(dir_);
  EXPECT_EQ(s.files, 1u);
  std::sort(s.skipped.begin(), s.skipped.end());
  std::vector<std::string> want = {dir_ + "/pid-7.1.trace: a FIFO, not a trace file: skipped",
                                   dir_ + "/s.trace: a socket, not a trace file: skipped"};
  if (dev) want.push_back(dir_ + "/zero.trace: a character device, not a trace file: skipped");
  EXPECT_EQ(s.skipped, want);
  std::string error;
  ASSERT_TRUE(RecordRootEnd(dir_, 7, ExitedWith(2), 777, &error)) << error;
  EXPECT_EQ(ReadEnd("pid-7.trace").code, 2);
  close(sock);
}

// Each case: bytes, and how the summary line shows them.
void ExpectBytes(std::initializer_list<std::pair<uint64_t, std::string>> cases) {
  for (const auto& [bytes, shown] : cases) EXPECT_EQ(FormatBytes(bytes), shown) << bytes;
}

// Each case: a path, and how a command line the user may paste quotes it.
void ExpectQuoted(std::initializer_list<std::pair<std::string, std::string>> cases) {
  for (const auto& [path, quoted] : cases) EXPECT_EQ(ShellQuote(path), quoted) << path;
}

TEST(FormatBytes, DecimalUnits) {
  ExpectBytes({
      {0, "0 B"},
      {999, "999 B"},
      {1000, "1.0 kB"},
      {1234567, "1.2 MB"},
      {999999, "1.0 MB"},
      {5'500'000'000, "5.5 GB"},
  });
}

TEST(ShellQuote, OnlyWhenNeeded) {
  ExpectQuoted({
      {"/abs/trainprof-20240101-120000", "/abs/trainprof-20240101-120000"},
      {"/my runs/x", "'/my runs/x'"},
      {"it's", "'it'\\''s'"},
      {"", "''"},
  });
}

TEST(SummaryLine, ReadsLikeTheDocs) {
  EXPECT_EQ(SummaryLine("/abs/dir", {3, 3, 1'200'000}),
            "3 trace files, 3 processes, 1.2 MB in /abs/dir \u2014 next: trainprof report /abs/dir");
  EXPECT_EQ(SummaryLine("/a b", {1, 1, 10}),
            "1 trace file, 1 process, 10 B in /a b \u2014 next: trainprof report '/a b'");
  // run --report: the report follows, no "next".
  EXPECT_EQ(SummaryLine("/abs/dir", {3, 3, 1'200'000}, false), "3 trace files, 3 processes, 1.2 MB in /abs/dir");
}

}  // namespace
}  // namespace trainprof::launcher

namespace trainprof::launcher {
namespace {

const std::string kRunA(32, 'a');  // FileHeader::run_id of bytes 0xaa, in hex
const std::string kRunB(32, 'b');

TEST_F(TraceDirTest, SummaryOfOneRunCountsOnlyItsFiles) {
  WriteTrace("pid-100.trace", 100, 0, 0, 0, 0xaa, 9, 50);
  WriteTrace("pid-100.1.trace", 100, 1, 0, 0, 0xaa, 9, 50);  // its exec'd image: one process
  WriteTrace("pid-1.trace", 1, 0, 0, 0, 0xaa, 10, 60);        // pid 1 of two namespaces:
  WriteTrace("pid-1.1.trace", 1, 0, 0, 0, 0xaa, 11, 60);      // two processes
  WriteTrace("pid-200.trace", 200, 0, 0, 0, 0xbb, 9, 70);     // another run at the same time
  WriteTrace("pid-300.trace", 300, 0);                        // an older file, no run id
  TraceDirSummary s = SummarizeTraceDir(dir_, kRunA);
  EXPECT_EQ(s.files, 4u);
  EXPECT_EQ(s.processes, 3u);
  EXPECT_EQ(s.other_files, 2u);
  EXPECT_EQ(SummarizeTraceDir(dir_, kRunB).files, 1u);
  EXPECT_EQ(SummarizeTraceDir(dir_).files, 6u);
  EXPECT_NE(SummaryLine("/d", s).find("in /d (which also holds 2 trace files of other runs) \u2014 next"),
            std::string::npos)
      << SummaryLine("/d", s);
}

TEST_F(TraceDirTest, RootEndGoesOnlyIntoThisRunsFile) {
  WriteTrace("pid-100.trace", 100, 0, 0, 0, 0xbb);    // an earlier run's root, same pid
  WriteTrace("pid-100.1.trace", 100, 0, 0, 0, 0xaa);  // ours
  std::string error;
  ASSERT_TRUE(RecordRootEnd(dir_, 100, ExitedWith(2), 777, &error, kRunA)) << error;
  EXPECT_EQ(ReadEnd("pid-100.1.trace").code, 2);
  EXPECT_EQ(ReadEnd("pid-100.trace").kind, 0u);
}

TEST(TracePathProblem, SaysWhenTraceFilesWouldPassPathMax) {
  EXPECT_EQ(TracePathProblem("/tmp/out"), "");
  std::string deep = "/" + std::string(PATH_MAX - 20, 'd');
  std::string why = TracePathProblem(deep);
  EXPECT_NE(why.find("too long for trace files"), std::string::npos) << why;
  EXPECT_NE(why.find("PATH_MAX (4096 bytes)"), std::string::npos) << why;
}

}  // namespace
}  // namespace trainprof::launcher
