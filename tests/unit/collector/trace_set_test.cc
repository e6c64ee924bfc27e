// Paths → trace files, and loading them from disk.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;

TEST(TraceSet, DirectoriesAreSearchedRecursivelyAndFilesListedOnce) {
  test::ScratchDir dir;
  std::filesystem::create_directories(dir / "out/node1");
  TraceBuilder a(1), b(2), c(3);
  std::string pa = a.WriteTo(dir / "out");
  std::string pb = b.WriteTo(dir / "out");
  std::string pc = c.WriteTo(dir / "out/node1");
  TraceBuilder::WriteBytes(dir / "out/notes.txt", {'h', 'i'});

  TraceFileList from_dir = FindTraceFiles({dir / "out"});
  EXPECT_TRUE(from_dir.errors.empty());
  EXPECT_EQ(from_dir.files, (std::vector<std::string>{pc, pa, pb}));  // sorted by path

  // The same files named one by one, twice, and through the directory: each once.
  TraceFileList mixed = FindTraceFiles({pa, pb, dir / "out/", pa, dir / "out/./pid-2.trace"});
  EXPECT_EQ(mixed.files, (std::vector<std::string>{pa, pb, pc}));

  // A file named explicitly is taken whatever its name.
  EXPECT_EQ(FindTraceFiles({dir / "out/notes.txt"}).files.size(), 1u);
}

TEST(TraceSet, UnreadablePathsAndEmptyDirectories) {
  test::ScratchDir dir;
  TraceFileList r = FindTraceFiles({dir / "missing"});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].rfind(dir / "missing: ", 0), 0u) << r.errors[0];
  EXPECT_TRUE(r.files.empty());
  std::filesystem::create_directories(dir / "empty");
  TraceFileList e = FindTraceFiles({dir / "empty"});
  EXPECT_TRUE(e.errors.empty());
  EXPECT_TRUE(e.files.empty());
}

// FIFOs, sockets and symbolic link loops (given, or named *.trace in a directory) are warnings
// that name them, found without opening anything; the other paths are still listed.
TEST(TraceSet, NonRegularFilesAndLinkLoopsAreSkippedWithAWarning) {
  test::ScratchDir dir;
  std::filesystem::create_directories(dir / "out");
  TraceBuilder a(1);
  std::string pa = a.WriteTo(dir / "out");
  const std::string fifo = dir / "out/f.trace", loop = dir / "out/loop.trace", outside = dir / "loop";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::create_symlink(loop, loop);
  std::filesystem::create_symlink(outside, outside);
  TraceFileList r = FindTraceFiles({outside, dir / "out", fifo});
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.files, (std::vector<std::string>{pa}));
  std::sort(r.warnings.begin(), r.warnings.end());  // a directory lists in no set order
  EXPECT_EQ(r.warnings, (std::vector<std::string>{
                            outside + ": a symbolic link loop (Too many levels of symbolic links): skipped",
                            fifo + ": a FIFO, not a trace file: skipped",
                            loop + ": a symbolic link loop (Too many levels of symbolic links): skipped"}));
  EXPECT_EQ(r.losses[Loss::symlink_loops], 2u);  // counted for the report's stats
  EXPECT_EQ(r.losses[Loss::not_regular_files], 1u);
  EXPECT_EQ(FindTraceFiles({fifo, fifo}).losses[Loss::not_regular_files], 1u);  // said once, counted once
}

TEST(TraceSet, LoadTraceKeepsDamagedFilesInTheList) {
  test::ScratchDir dir;
  TraceBuilder a(1, 0), b(2, 1);
  int t = b.Thread(2);
  b.Mark(t, b.start_ns() + 5, "m");
  std::string pa = a.WriteTo(dir.path());
  std::string pb = b.WriteTo(dir.path());
  TraceBuilder::WriteBytes(dir / "pid-3.trace", {});
  Trace trace = LoadTrace(FindTraceFiles({dir.path()}).files);
  ASSERT_EQ(trace.files.size(), 3u);
  EXPECT_TRUE(trace.files[0].usable);
  EXPECT_FALSE(trace.files[2].usable);
  EXPECT_EQ(trace.files[2].errors[0], "empty file (0 bytes)");
  ASSERT_EQ(trace.processes.size(), 2u);
  EXPECT_EQ(trace.processes[1].parent, 0);
  EXPECT_EQ(trace.processes[1].records, 2u);
}

}  // namespace
}  // namespace trainprof::collector

namespace trainprof::collector {
namespace {

// The number of decoding threads changes nothing in the result; a bad TRAINPROF_REPORT_THREADS
// is ignored (was: "-1" read as ULONG_MAX threads, one per file, which could abort).
TEST(TraceSet, DecodingThreadsDoNotChangeTheResult) {
  test::ScratchDir dir;
  std::vector<std::string> paths;
  for (int pid = 1; pid <= 12; ++pid) {
    TraceBuilder b(pid, pid == 1 ? 0 : 1);
    int t = b.Thread(pid);
    for (int i = 0; i < 50; ++i) {
      b.Push(t, b.start_ns() + 100 * i, "name" + std::to_string((pid * 7 + i) % 9));
      b.Pop(t, b.start_ns() + 100 * i + pid + i);
    }
    paths.push_back(b.WriteTo(dir.path()));
  }
  auto render = [&](const char* threads) {
    if (threads) {
      setenv("TRAINPROF_REPORT_THREADS", threads, 1);
    } else {
      unsetenv("TRAINPROF_REPORT_THREADS");
    }
    Trace trace = LoadTrace(paths);
    unsetenv("TRAINPROF_REPORT_THREADS");
    std::string out;
    for (size_t i = 0; i < trace.strings.size(); ++i) out += std::string(trace.strings.Get(static_cast<StringId>(i))) + "\n";
    for (const Process& p : trace.processes) {
      for (const RangeSamples& r : p.first().nvtx_summary.ranges) {
        out += std::to_string(p.pid) + " " + std::to_string(r.key.name) + " " + std::to_string(r.durations.total()) + "\n";
      }
    }
    return out;
  };
  const std::string one = render("1");
  EXPECT_EQ(render("2"), one);
  EXPECT_EQ(render("8"), one);
  EXPECT_EQ(render("-1"), one);
  EXPECT_EQ(render("100000"), one);
  EXPECT_EQ(render("zz"), one);
  EXPECT_EQ(render(nullptr), one);
}

// A FIFO among the paths (e.g. swapped in after the directory was listed) is refused at once,
// never waited on.
TEST(TraceSet, AFifoIsRefusedWithoutWaiting) {
  test::ScratchDir dir;
  const std::string fifo = dir / "pid-9.trace";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  TraceBuilder a(1, 0);
  const std::string pa = a.WriteTo(dir.path());
  Trace trace = LoadTrace({pa, fifo});  // would block in open() without O_NONBLOCK
  ASSERT_EQ(trace.files.size(), 2u);
  EXPECT_TRUE(trace.files[0].usable);
  EXPECT_FALSE(trace.files[1].usable);
  ASSERT_EQ(trace.files[1].errors.size(), 1u);
  EXPECT_EQ(trace.files[1].errors[0], "not a regular file");
}

}  // namespace
}  // namespace trainprof::collector
