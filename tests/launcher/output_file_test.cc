// PlanOutputFile: report/export -o never replaces a device, FIFO or symlink with a regular file.
#include "output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace trainprof::launcher {
namespace {

namespace fs = std::filesystem;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = ::testing::TempDir() + "trainprof-output-file-XXXXXX";
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    dir_ = t;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

const std::string kTmp = ".tmp." + std::to_string(::getpid());

TEST_F(OutputFile, MissingOrRegularGoesThroughATemporaryRenamedIntoPlace) {
  OutputFilePlan missing = PlanOutputFile(Path("report.json"));
  EXPECT_EQ(missing.write_to, Path("report.json") + kTmp);
  EXPECT_EQ(missing.rename_to, Path("report.json"));
  std::ofstream(Path("old.json")) << "old";
  OutputFilePlan regular = PlanOutputFile(Path("old.json"));
  EXPECT_EQ(regular.rename_to, Path("old.json"));
}

TEST_F(OutputFile, DevicesAndFifosAreWrittenInPlace) {
  OutputFilePlan null = PlanOutputFile("/dev/null");
  EXPECT_EQ(null.write_to, "/dev/null");
  EXPECT_TRUE(null.rename_to.empty());
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0600), 0);
  OutputFilePlan fifo = PlanOutputFile(Path("fifo"));
  EXPECT_EQ(fifo.write_to, Path("fifo"));
  EXPECT_TRUE(fifo.rename_to.empty());
}

TEST_F(OutputFile, SymlinksAreFollowedSoTheLinkStays) {
  std::ofstream(Path("target")) << "old";
  fs::create_symlink("target", Path("link"));
  fs::create_symlink(Path("link"), Path("link2"));  // absolute, to a link
  OutputFilePlan p = PlanOutputFile(Path("link2"));
  EXPECT_EQ(p.rename_to, Path("target"));
  EXPECT_EQ(p.write_to, Path("target") + kTmp);
  fs::create_symlink("nowhere", Path("dangling"));
  EXPECT_EQ(PlanOutputFile(Path("dangling")).rename_to, Path("nowhere"));
  fs::create_symlink("/dev/null", Path("to-null"));
  OutputFilePlan to_null = PlanOutputFile(Path("to-null"));
  EXPECT_EQ(to_null.write_to, "/dev/null");
  EXPECT_TRUE(to_null.rename_to.empty());
  // A loop ends (the open then fails with ELOOP and is reported).
  fs::create_symlink("loop-b", Path("loop-a"));
  fs::create_symlink("loop-a", Path("loop-b"));
  EXPECT_FALSE(PlanOutputFile(Path("loop-a")).write_to.empty());
}

}  // namespace
}  // namespace trainprof::launcher
