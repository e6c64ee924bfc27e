// ResolveWithSymlinkRule: the kernel's fs.protected_symlinks rule applied by trainprof itself, to
// every symlink on the way (directories too), which is what run -o and the CSV tables rely on.
#include "safe_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

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

class ResolveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = ::testing::TempDir() + "trainprof-safe-path-XXXXXX";
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    dir_ = fs::canonical(t).string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string Resolve(const std::string& p) {
    std::string error;
    auto r = ResolveWithSymlinkRule(p, &error);
    EXPECT_TRUE(r.has_value()) << p << ": " << error;
    return r.value_or("");
  }
  std::string dir_;
};

TEST_F(ResolveTest, FollowsLinksLikePathLookup) {
  fs::create_directories(Path("real/sub"));
  fs::create_symlink("real", Path("rel"));
  fs::create_symlink(Path("real/sub"), Path("abs"));
  EXPECT_EQ(Resolve(Path("rel/sub/x")), Path("real/sub/x"));
  EXPECT_EQ(Resolve(Path("abs/../y")), Path("real/y"));  // ".." after a link: its target's parent
  EXPECT_EQ(Resolve(Path("missing/a/../b")), Path("missing/b"));
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
  EXPECT_FALSE(ResolveWithSymlinkRule(Path("tmp/run"), &error));
  EXPECT_FALSE(ResolveWithSymlinkRule(Path("tmp/run/data/pid-1.trace"), &error));
  EXPECT_NE(error.find("uid 65534"), std::string::npos) << error;
  // Reached through one of our own links: still refused.
  fs::create_symlink(Path("tmp"), Path("mine"));
  EXPECT_FALSE(ResolveWithSymlinkRule(Path("mine/run/data"), &error));
  // Our own link there is fine.
  ASSERT_EQ(lchown(Path("tmp/run").c_str(), geteuid(), getegid()), 0);
  EXPECT_EQ(Resolve(Path("mine/run/data")), Path("victim/data"));
}

}  // namespace
}  // namespace trainprof::launcher
