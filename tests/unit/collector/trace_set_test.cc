// Paths → trace files, and loading them from disk.
#include <gtest/gtest.h>

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
