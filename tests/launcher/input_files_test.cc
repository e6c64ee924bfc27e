// InputFiles (launcher/input_files.h): an output that is one of the inputs, by device and inode,
// whatever the name it is given by: the same path, a symbolic link, a hard link, a descriptor.
#include "input_files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "output_file.h"
#include "temp_dir_test.h"

namespace trainprof::launcher {
namespace {

class InputFilesTest : public test::TempDirTest {
 protected:
  InputFilesTest() : TempDirTest("trainprof-input-files-test") {}
  void SetUp() override {
    TempDirTest::SetUp();
    std::ofstream(Path("pid-1.trace")) << "trace";
    std::ofstream(Path("other.txt")) << "other";
    ASSERT_EQ(symlink(Path("pid-1.trace").c_str(), Path("link").c_str()), 0);
    ASSERT_EQ(link(Path("pid-1.trace").c_str(), Path("hard").c_str()), 0);
  }
  // The start of every refusal of an output named `what` that is pid-1.trace.
  std::string Refused(const std::string& what, const std::string& input = "pid-1.trace") const {
    return what + " is the input file " + Path(input) + " (device ";
  }
};

TEST_F(InputFilesTest, TheSameFileByAnyNameIsRefusedNamingBoth) {
  const InputFiles inputs({Path("pid-1.trace")});
  for (const std::string name : {"pid-1.trace", "link", "hard", "./pid-1.trace"}) {
    const std::string path = name[0] == '.' ? dir_ + "/sub/../" + name : Path(name);
    if (name[0] == '.') mkdir(Path("sub").c_str(), 0700);
    const std::string error = inputs.CheckPath(path, "-o " + path);
    EXPECT_EQ(error.rfind(Refused("-o " + path), 0), 0u) << error;
    EXPECT_NE(error.find("nothing was written"), std::string::npos) << error;
  }
  EXPECT_EQ(inputs.CheckPath(Path("other.txt"), "-o x"), "");
  EXPECT_EQ(inputs.CheckPath(Path("new.txt"), "-o x"), "");  // not yet there: fine

  // A descriptor (stdout redirected onto an input with >>).
  const int fd = open(Path("hard").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(inputs.CheckFd(fd, "stdout").rfind(Refused("stdout"), 0), 0u);
  close(fd);
}

TEST_F(InputFilesTest, AnOpenedOutputIsCheckedAsTheFileItWouldReplace) {
  const InputFiles inputs({Path("link")});  // an input given through a link: its file counts
  std::string error;
  for (const std::string name : {"pid-1.trace", "link", "hard"}) {
    std::unique_ptr<OutputFile> out = OutputFile::Open(Path(name), &error);
    ASSERT_TRUE(out) << error;
    const std::string error = inputs.Check(*out, "the CSV table " + Path(name));
    EXPECT_EQ(error.rfind(Refused("the CSV table " + Path(name), "link"), 0), 0u) << error;
  }
  std::unique_ptr<OutputFile> fresh = OutputFile::Open(Path("new.csv"), &error);
  ASSERT_TRUE(fresh) << error;
  EXPECT_EQ(inputs.Check(*fresh, "x"), "");
  std::unique_ptr<OutputFile> other = OutputFile::Open(Path("other.txt"), &error);
  ASSERT_TRUE(other) << error;
  EXPECT_EQ(inputs.Check(*other, "x"), "");
  std::ifstream in(Path("pid-1.trace"));
  std::string content;
  in >> content;
  EXPECT_EQ(content, "trace");  // opening wrote nothing
}

}  // namespace
}  // namespace trainprof::launcher
