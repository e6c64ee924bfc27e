// A GoogleTest fixture with a new empty directory per test, shared by the launcher's and the
// injection library's unit tests.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <utility>

namespace trainprof::test {

/// Each test gets dir_: a new directory under ::testing::TempDir() named `prefix`-XXXXXX, as a
/// canonical path (no symlink in it), removed with everything in it after the test. A subclass
/// that overrides SetUp calls TempDirTest::SetUp first.
class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    std::string t = ::testing::TempDir() + prefix_ + "-XXXXXX";
    ASSERT_NE(mkdtemp(t.data()), nullptr) << t;
    dir_ = std::filesystem::canonical(t).string();
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  /// dir_/name.
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;

 private:
  std::string prefix_;
};

}  // namespace trainprof::test
