#include "collector/base/source_path.h"

#include <gtest/gtest.h>

namespace trainprof::collector {
namespace {

TEST(SourcePath, PackagesKeepTheirPathInsideSitePackages) {
  EXPECT_EQ(ShortSourcePath("/work/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py"),
            "torch/nn/modules/module.py");
  EXPECT_EQ(ShortSourcePath("/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py"),
            "torch/utils/data/dataloader.py");
  // A venv inside a site-packages tree: the innermost one.
  EXPECT_EQ(ShortSourcePath("/a/site-packages/x/site-packages/pkg/__init__.py"), "pkg/__init__.py");
}

TEST(SourcePath, TheStandardLibraryFromItsLibDir) {
  EXPECT_EQ(ShortSourcePath("/usr/lib/python3.11/multiprocessing/process.py"), "multiprocessing/process.py");
  EXPECT_EQ(ShortSourcePath("/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py"), "threading.py");
  // Not a version after "python": the basename.
  EXPECT_EQ(ShortSourcePath("/opt/lib/pythonic/tool.py"), "tool.py");
}

TEST(SourcePath, OtherFilesByBasename) {
  EXPECT_EQ(ShortSourcePath("/home/me/project/train.py"), "train.py");
  EXPECT_EQ(ShortSourcePath("train.py"), "train.py");
  EXPECT_EQ(ShortSourcePath("<frozen runpy>"), "<frozen runpy>");
  EXPECT_EQ(ShortSourcePath("/src/trainprof/tests/programs/callsites.cc"), "callsites.cc");
  EXPECT_EQ(ShortSourcePath("/usr/lib/python3.11/site-packages/"), "");  // nothing after: the (empty) basename
}

TEST(SourcePath, LocationAddsTheLine) {
  EXPECT_EQ(SourceLocation("/x/site-packages/torch/_tensor.py", true, 42), "torch/_tensor.py:42");
  EXPECT_EQ(SourceLocation("/home/me/train.py", false, 0), "train.py");
}

}  // namespace
}  // namespace trainprof::collector
