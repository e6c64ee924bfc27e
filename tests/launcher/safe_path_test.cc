// OpenOutputDirectory (trainprof/path_walk.h): the kernel's fs.protected_symlinks rule applied by trainprof itself, to
// every symlink on the way (directories too), which is what run -o and the CSV tables rely on.
#include "safe_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "temp_dir_test.h"

namespace trainprof::launcher {
namespace {

namespace fs = std::filesystem;

struct stat Mode(mode_t mode, uid_t uid) {
  struct stat st {};
  st.st_mode = mode;
  st.st_uid = uid;
  return st;
}

TEST(SymlinkRule, IsTheKernelsProtectedSymlinksRule) {
  const uid_t me = 1000, other = 2000, dir_owner = 3000;
  struct stat tmp = Mode(S_IFDIR | 01777, dir_owner);
  EXPECT_FALSE(SymlinkMayBeFollowed(tmp, Mode(S_IFLNK | 0777, other), me));
  EXPECT_TRUE(SymlinkMayBeFollowed(tmp, Mode(S_IFLNK | 0777, me), me));
  EXPECT_TRUE(SymlinkMayBeFollowed(tmp, Mode(S_IFLNK | 0777, dir_owner), me));
  EXPECT_FALSE(SymlinkMayBeFollowed(tmp, Mode(S_IFLNK | 0777, other), 0));  // root too
  EXPECT_TRUE(SymlinkMayBeFollowed(Mode(S_IFDIR | 0777, dir_owner), Mode(S_IFLNK | 0777, other), me));
  EXPECT_TRUE(SymlinkMayBeFollowed(Mode(S_IFDIR | 01775, dir_owner), Mode(S_IFLNK | 0777, other), me));
  EXPECT_FALSE(SymlinkMayBeFollowed(Mode(S_IFDIR | 01773, dir_owner), Mode(S_IFLNK | 0777, other), me));
}

// OpenOutputDirectory walks with trainprof/path_walk.h: links as path lookup follows them (".."
// after a link is its target's parent), missing directories made.
class ResolveTest : public test::TempDirTest {
 protected:
  ResolveTest() : TempDirTest("trainprof-safe-path") {}
  std::string Resolve(const std::string& p) {
    std::string error;
    auto r = OpenOutputDirectory(p, true, 0700, &error);
    EXPECT_TRUE(r.has_value()) << p << ": " << error;
    return r.value_or("");
  }
};

TEST_F(ResolveTest, FollowsLinksLikePathLookup) {
  fs::create_directories(Path("real/sub"));
  fs::create_symlink("real", Path("rel"));
  fs::create_symlink(Path("real/sub"), Path("abs"));
  EXPECT_EQ(Resolve(Path("rel/sub/x")), Path("real/sub/x"));
  EXPECT_EQ(Resolve(Path("abs/../y")), Path("real/y"));  // ".." after a link: its target's parent
  EXPECT_EQ(Resolve(Path("missing/a/../b")), Path("missing/b"));
  EXPECT_TRUE(fs::is_directory(Path("missing/a")));
  EXPECT_EQ(Resolve(Path("./real//sub/")), Path("real/sub"));
  EXPECT_EQ(Resolve("/"), "/");
  std::string cwd = fs::current_path().string();
  fs::current_path(dir_);
  EXPECT_EQ(Resolve("rel/z"), Path("real/z"));
  fs::current_path(cwd);
}

TEST_F(ResolveTest, RefusesAnotherUsersLinkAnywhereOnTheWay) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to plant a link owned by another user";
  fs::create_directories(Path("victim/data"));
  ASSERT_EQ(mkdir(Path("tmp").c_str(), 01777), 0);
  ASSERT_EQ(chmod(Path("tmp").c_str(), 01777), 0);
  fs::create_symlink(Path("victim"), Path("tmp/run"));
  ASSERT_EQ(lchown(Path("tmp/run").c_str(), 65534, 65534), 0);
  std::string error;
  EXPECT_FALSE(OpenOutputDirectory(Path("tmp/run"), false, 0700, &error));
  EXPECT_FALSE(OpenOutputDirectory(Path("tmp/run/data/new"), true, 0700, &error));
  EXPECT_NE(error.find("uid 65534"), std::string::npos) << error;
  // Reached through one of our own links: still refused.
  fs::create_symlink(Path("tmp"), Path("mine"));
  EXPECT_FALSE(OpenOutputDirectory(Path("mine/run/data"), false, 0700, &error));
  EXPECT_FALSE(fs::exists(Path("victim/data/new")));
  // Our own link there is fine.
  ASSERT_EQ(lchown(Path("tmp/run").c_str(), geteuid(), getegid()), 0);
  EXPECT_EQ(Resolve(Path("mine/run/data")), Path("victim/data"));
}

TEST_F(ResolveTest, NewDirectoriesGetExactlyTheModeAndExistingOnesKeepTheirs) {
  mode_t old_umask = umask(022);
  std::string error;
  EXPECT_EQ(OpenOutputDirectory(Path("p/q"), true, 0700, &error), Path("p/q")) << error;
  struct stat st;
  ASSERT_EQ(stat(Path("p/q").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(stat(Path("p").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_TRUE(OpenOutputDirectory(Path("g"), true, 0775, &error)) << error;  // more than the umask allows
  ASSERT_EQ(stat(Path("g").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0775u);
  ASSERT_EQ(chmod(Path("p/q").c_str(), 0755), 0);
  EXPECT_TRUE(OpenOutputDirectory(Path("p/q"), true, 0700, &error)) << error;
  ASSERT_EQ(stat(Path("p/q").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  umask(old_umask);
}

TEST_F(ResolveTest, AFileInTheWayOrAMissingDirectoryWithoutCreateIsAnError) {
  std::ofstream(Path("file")) << "x";
  std::string error;
  EXPECT_FALSE(OpenOutputDirectory(Path("file"), true, 0700, &error));
  EXPECT_EQ(error, "Not a directory");
  EXPECT_FALSE(OpenOutputDirectory(Path("file/sub"), true, 0700, &error));
  EXPECT_EQ(error, "Not a directory");
  EXPECT_FALSE(OpenOutputDirectory(Path("none"), false, 0700, &error));
  EXPECT_EQ(error, "No such file or directory");
  EXPECT_FALSE(fs::exists(Path("none")));
}

}  // namespace
}  // namespace trainprof::launcher
