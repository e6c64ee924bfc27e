// OutputFile: report/export -o never replaces a device, FIFO or symlink with a regular file, stages
// under a fresh random name (nothing planted at a predictable name is written through), and
// refuses another user's symlink in a sticky world-writable directory.
#include "output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "temp_dir_test.h"

namespace trainprof::launcher {
namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class OutputFileTest : public test::TempDirTest {
 protected:
  OutputFileTest() : TempDirTest("trainprof-output-file") {}
};

TEST_F(OutputFileTest, MissingOrRegularGoesThroughATemporaryRenamedIntoPlace) {
  std::string error;
  auto f = OutputFile::Open(Path("report.json"), &error);
  ASSERT_TRUE(f) << error;
  EXPECT_EQ(f->target(), Path("report.json"));
  ASSERT_FALSE(f->staged_name().empty());
  EXPECT_EQ(f->staged_name().rfind(".trainprof-", 0), 0u) << f->staged_name();
  EXPECT_FALSE(fs::exists(Path("report.json")));  // not before Commit
  ASSERT_EQ(write(f->fd(), "new", 3), 3);
  ASSERT_TRUE(f->Commit(&error)) << error;
  EXPECT_EQ(Read(Path("report.json")), "new");
  EXPECT_FALSE(fs::exists(Path(f->staged_name())));

  std::ofstream(Path("old.json")) << "old";
  ASSERT_TRUE(WriteOutputFile(Path("old.json"), "replaced", &error)) << error;
  EXPECT_EQ(Read(Path("old.json")), "replaced");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);  // no temporaries
}

TEST_F(OutputFileTest, AnUncommittedFileLeavesNothingAndTheOldFileIntact) {
  std::ofstream(Path("old.json")) << "old";
  std::string error;
  {
    auto f = OutputFile::Open(Path("old.json"), &error);
    ASSERT_TRUE(f) << error;
    ASSERT_EQ(write(f->fd(), "half", 4), 4);
  }
  EXPECT_EQ(Read(Path("old.json")), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(OutputFileTest, TemporaryNamesAreFreshEachTime) {
  std::string error;
  auto a = OutputFile::Open(Path("r.json"), &error);
  auto b = OutputFile::Open(Path("r.json"), &error);
  ASSERT_TRUE(a && b) << error;
  EXPECT_NE(a->staged_name(), b->staged_name());
  EXPECT_EQ(a->staged_name().size(), std::string(".trainprof-").size() + 12);
}

// The old code staged at "<target>.tmp.<pid>", opened without O_EXCL: a symlink planted there
// made it write the victim (and then rename the link onto the target).
TEST_F(OutputFileTest, ASymlinkAtTheOldPredictableTemporaryNameIsNotWrittenThrough) {
  std::ofstream(Path("victim")) << "victim";
  fs::create_symlink(Path("victim"), Path("report.json.tmp." + std::to_string(getpid())));
  std::string error;
  ASSERT_TRUE(WriteOutputFile(Path("report.json"), "report", &error)) << error;
  EXPECT_EQ(Read(Path("victim")), "victim");
  EXPECT_FALSE(fs::is_symlink(Path("report.json")));
  EXPECT_EQ(Read(Path("report.json")), "report");
}

TEST_F(OutputFileTest, DevicesAndFifosAreWrittenInPlace) {
  std::string error;
  auto null = OutputFile::Open("/dev/null", &error);
  ASSERT_TRUE(null) << error;
  EXPECT_EQ(null->target(), "/dev/null");
  EXPECT_TRUE(null->staged_name().empty());
  EXPECT_TRUE(null->Commit(&error)) << error;
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0600), 0);
  int reader = open(Path("fifo").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(WriteOutputFile(Path("fifo"), "through the fifo", &error)) << error;
  char buf[64] = {};
  EXPECT_EQ(read(reader, buf, sizeof(buf)), 16);
  EXPECT_STREQ(buf, "through the fifo");
  close(reader);
  EXPECT_TRUE(fs::is_fifo(Path("fifo")));
}

TEST_F(OutputFileTest, ADirectoryIsAnError) {
  std::string error;
  EXPECT_FALSE(OutputFile::Open(dir_, &error));
  EXPECT_EQ(error, "Is a directory");
}

TEST_F(OutputFileTest, OwnSymlinksAreFollowedSoTheLinkStays) {
  std::ofstream(Path("target")) << "old";
  fs::create_symlink("target", Path("link"));
  fs::create_symlink(Path("link"), Path("link2"));  // absolute, to a link
  std::string error;
  auto f = OutputFile::Open(Path("link2"), &error);
  ASSERT_TRUE(f) << error;
  EXPECT_EQ(f->target(), Path("target"));
  ASSERT_TRUE(f->Commit(&error)) << error;
  EXPECT_TRUE(fs::is_symlink(Path("link2")));
  EXPECT_TRUE(fs::is_symlink(Path("link")));
  EXPECT_EQ(Read(Path("target")), "");

  fs::create_symlink("nowhere", Path("dangling"));
  ASSERT_TRUE(WriteOutputFile(Path("dangling"), "x", &error)) << error;
  EXPECT_EQ(Read(Path("nowhere")), "x");
  EXPECT_TRUE(fs::is_symlink(Path("dangling")));

  fs::create_symlink("/dev/null", Path("to-null"));
  auto to_null = OutputFile::Open(Path("to-null"), &error);
  ASSERT_TRUE(to_null) << error;
  EXPECT_TRUE(to_null->staged_name().empty());

  // A loop is an error, not a hang.
  fs::create_symlink("loop-b", Path("loop-a"));
  fs::create_symlink("loop-a", Path("loop-b"));
  EXPECT_FALSE(OutputFile::Open(Path("loop-a"), &error));
  EXPECT_NE(error.find("Too many levels of symbolic links"), std::string::npos) << error;
}

// As root, "another user" is made with lchown; elsewhere the test cannot plant one.
TEST_F(OutputFileTest, AnotherUsersSymlinkInAStickyWorldWritableDirectoryIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to plant a link owned by another user";
  ASSERT_EQ(mkdir(Path("shared").c_str(), 0777), 0);
  ASSERT_EQ(chmod(Path("shared").c_str(), 01777), 0);
  std::ofstream(Path("victim")) << "victim";
  const std::string link = Path("shared/report.json");
  fs::create_symlink(Path("victim"), link);
  ASSERT_EQ(lchown(link.c_str(), 65534, 65534), 0);
  std::string error;
  EXPECT_FALSE(OutputFile::Open(link, &error));
  EXPECT_NE(error.find(link + " is a symlink owned by uid 65534 in the sticky world-writable directory " +
                       Path("shared")),
            std::string::npos)
      << error;
  EXPECT_FALSE(WriteOutputFile(link, "report", &error));
  EXPECT_EQ(Read(Path("victim")), "victim");
  EXPECT_EQ(fs::read_symlink(link), Path("victim"));
  // The same link owned by us, or by the directory's owner, is followed.
  ASSERT_EQ(lchown(link.c_str(), 0, 0), 0);
  EXPECT_TRUE(WriteOutputFile(link, "mine", &error)) << error;
  EXPECT_EQ(Read(Path("victim")), "mine");
  ASSERT_EQ(chown(Path("shared").c_str(), 65534, 65534), 0);
  ASSERT_EQ(lchown(link.c_str(), 65534, 65534), 0);
  EXPECT_TRUE(WriteOutputFile(link, "dir owner's", &error)) << error;
  // Not sticky, or not world-writable: followed (the kernel's rule).
  ASSERT_EQ(lchown(link.c_str(), 12345, 12345), 0);
  EXPECT_FALSE(WriteOutputFile(link, "x", &error));
  ASSERT_EQ(chmod(Path("shared").c_str(), 0777), 0);
  EXPECT_TRUE(WriteOutputFile(link, "not sticky", &error)) << error;
  ASSERT_EQ(chmod(Path("shared").c_str(), 01775), 0);
  EXPECT_TRUE(WriteOutputFile(link, "not world-writable", &error)) << error;
  EXPECT_EQ(Read(Path("victim")), "not world-writable");
}

// The temporary was "<name>.tmp-<12>": a target name of 239 to 255 bytes failed.
TEST_F(OutputFileTest, ATargetNameOfTheLongestLengthWorks) {
  std::string error;
  const std::string name(255, 'r');
  ASSERT_TRUE(WriteOutputFile(Path(name), "long", &error)) << error;
  EXPECT_EQ(Read(Path(name)), "long");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

// "-o newout/" made a regular file "newout"; the shell's ">newout/" says "Is a directory".
TEST_F(OutputFileTest, ANameEndingInASlashIsADirectoryNotAFile) {
  std::string error;
  EXPECT_FALSE(WriteOutputFile(Path("newout/"), "x", &error));
  EXPECT_NE(error.find("Is a directory"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(Path("newout")));
  std::ofstream(Path("file")) << "old";
  EXPECT_FALSE(WriteOutputFile(Path("file/"), "x", &error));
  EXPECT_EQ(Read(Path("file")), "old");
}

// open(O_WRONLY) of a FIFO nobody reads blocked for ever.
TEST_F(OutputFileTest, AFifoWithoutAReaderIsAnErrorNotAHang) {
  ASSERT_EQ(mkfifo(Path("report.txt").c_str(), 0666), 0);
  alarm(20);  // the old code hung here: fail, do not hang the suite
  std::string error;
  EXPECT_FALSE(WriteOutputFile(Path("report.txt"), "x", &error));
  alarm(0);
  EXPECT_EQ(error, "it is a FIFO that nothing reads from (trainprof does not wait for a reader)");
  EXPECT_TRUE(fs::is_fifo(Path("report.txt")));
}

TEST_F(OutputFileTest, AnotherUsersFifoInAStickyWorldWritableDirectoryIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to plant a FIFO owned by another user";
  ASSERT_EQ(mkdir(Path("shared").c_str(), 0777), 0);
  ASSERT_EQ(chmod(Path("shared").c_str(), 01777), 0);
  const std::string fifo = Path("shared/report.txt");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0666), 0);
  ASSERT_EQ(chown(fifo.c_str(), 65534, 65534), 0);
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // even with a reader waiting
  ASSERT_GE(reader, 0);
  std::string error;
  EXPECT_FALSE(WriteOutputFile(fifo, "secret", &error));
  EXPECT_EQ(error, "it is a FIFO owned by uid 65534 in the sticky world-writable directory " + Path("shared") +
                       " (owned by uid 0): not opened, another user may have planted it (the fs.protected_fifos "
                       "rule; remove it or write elsewhere)");
  char buf[16];
  EXPECT_EQ(read(reader, buf, sizeof(buf)), 0);  // nothing came through (no writer: end of file)
  close(reader);
  ASSERT_EQ(chown(fifo.c_str(), 0, 0), 0);  // ours: written in place
  reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  EXPECT_TRUE(WriteOutputFile(fifo, "mine", &error)) << error;
  EXPECT_EQ(read(reader, buf, sizeof(buf)), 4);
  close(reader);
}

// "-o /dev/stdout" with stdout redirected to a file replaced that file (a new inode, the shell's
// earlier output lost). Such a path is the descriptor: written where it stands.
TEST_F(OutputFileTest, DescriptorPathsAreTheOpenDescriptorWrittenInPlace) {
  const std::string log = Path("log.txt");
  std::ofstream(log) << "before\n";
  struct stat was;
  ASSERT_EQ(stat(log.c_str(), &was), 0);
  int fd = open(log.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  int n = fcntl(fd, F_DUPFD, 40);
  close(fd);
  ASSERT_GE(n, 40);
  std::string error;
  for (std::string path : {"/dev/fd/" + std::to_string(n), "/proc/self/fd/" + std::to_string(n),
                           "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(n)}) {
    auto f = OutputFile::Open(path, &error);
    ASSERT_TRUE(f) << path << ": " << error;
    EXPECT_TRUE(f->is_stream());
    EXPECT_TRUE(f->staged_name().empty());
    ASSERT_EQ(write(f->fd(), "report\n", 7), 7);
    ASSERT_TRUE(f->Commit(&error)) << error;
  }
  ASSERT_TRUE(WriteOutputFile("/dev/fd/" + std::to_string(n), "after\n", &error)) << error;
  close(n);
  EXPECT_EQ(Read(log), "before\nreport\nreport\nreport\nafter\n");
  struct stat now;
  ASSERT_EQ(stat(log.c_str(), &now), 0);
  EXPECT_EQ(now.st_ino, was.st_ino);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
  EXPECT_EQ(StreamPathFd("/dev/stdout"), 1);
  EXPECT_EQ(StreamPathFd("/dev/stderr"), 2);
  EXPECT_EQ(StreamPathFd("/dev/fd/x"), std::nullopt);
  EXPECT_EQ(StreamPathFd("/dev/stdout2"), std::nullopt);
  EXPECT_FALSE(OutputFile::Open("/dev/fd/999", &error));
  EXPECT_EQ(error, "descriptor 999 is not open (Bad file descriptor)");
}

// Replacing a file is a rename in its directory: say that, not just "Permission denied" /
// "Operation not permitted".
TEST_F(OutputFileTest, RefusalsSayWhyTheFileCannotBeReplaced) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  ASSERT_EQ(mkdir(Path("ro").c_str(), 0755), 0);
  std::ofstream(Path("ro/report.txt")) << "old";
  ASSERT_EQ(chmod(Path("ro/report.txt").c_str(), 0666), 0);
  ASSERT_EQ(mkdir(Path("shared").c_str(), 0777), 0);
  ASSERT_EQ(chmod(Path("shared").c_str(), 01777), 0);
  std::ofstream(Path("shared/theirs.txt")) << "theirs";
  ASSERT_EQ(chown(Path("shared/theirs.txt").c_str(), 12345, 12345), 0);
  ASSERT_EQ(chmod(Path("shared/theirs.txt").c_str(), 0666), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  pid_t pid = fork();
  if (pid == 0) {
    if (setresuid(65534, 65534, 65534) != 0) _exit(10);
    std::string e1, e2;
    bool w1 = WriteOutputFile(Path("ro/report.txt"), "x", &e1);
    bool w2 = WriteOutputFile(Path("shared/theirs.txt"), "x", &e2);
    bool ok = !w1 && e1 == "the directory " + Path("ro") + " is not writable (the file is written as a new file in "
                               "it, then renamed onto report.txt): Permission denied";
    ok = ok && !w2 && e2 == "it is owned by uid 12345 in the sticky directory " + Path("shared") +
                                ": only its owner, the directory's owner or root may replace it (the report is "
                                "written as a new file renamed onto it)";
    if (!ok) fprintf(stderr, "%s\n%s\n", e1.c_str(), e2.c_str());
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(Read(Path("ro/report.txt")), "old");
  EXPECT_EQ(Read(Path("shared/theirs.txt")), "theirs");
}

// The directory the walk reached is the one written in: renaming it away and planting a link at
// its name after Open() does not redirect the file.
TEST_F(OutputFileTest, TheFileLandsInTheDirectoryTheWalkReached) {
  ASSERT_EQ(mkdir(Path("sub").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(Path("victim").c_str(), 0755), 0);
  std::string error;
  auto f = OutputFile::Open(Path("sub/r.txt"), &error);
  ASSERT_TRUE(f) << error;
  EXPECT_EQ(f->target(), Path("sub/r.txt"));
  fs::rename(Path("sub"), Path("sub-old"));
  fs::create_symlink(Path("victim"), Path("sub"));
  ASSERT_EQ(write(f->fd(), "r", 1), 1);
  ASSERT_TRUE(f->Commit(&error)) << error;
  EXPECT_EQ(Read(Path("sub-old/r.txt")), "r");
  EXPECT_TRUE(fs::is_empty(Path("victim")));
}

}  // namespace
}  // namespace trainprof::launcher
