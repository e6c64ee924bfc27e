#include "python_options.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace trainprof::inject {
namespace {

// argv as /proc/self/cmdline holds it: each word ended by NUL.
std::string Cmdline(std::initializer_list<const char*> argv) {
  std::string s;
  for (const char* a : argv) {
    s += a;
    s += '\0';
  }
  return s;
}

std::string Blockers(const std::string& cmdline) {
  char out[kPythonShimBlockersCap];
  size_t n = PythonShimBlockers(cmdline.data(), cmdline.size(), out, sizeof(out));
  EXPECT_EQ(n, std::string(out).size());
  return std::string(out, n);
}

TEST(PythonShimBlockers, NoneInAPlainRun) {
  EXPECT_EQ(Blockers(Cmdline({"python3", "train.py", "--lr", "3e-4"})), "");
  EXPECT_EQ(Blockers(Cmdline({"python3"})), "");
  EXPECT_EQ(Blockers(""), "");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-u", "-s", "-B", "-O", "train.py"})), "");  // -s keeps sitecustomize
}

TEST(PythonShimBlockers, SingleOptions) {
  EXPECT_EQ(Blockers(Cmdline({"python3", "-E", "train.py"})), "-E");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-I", "train.py"})), "-I");
  EXPECT_EQ(Blockers(Cmdline({"/usr/bin/python3.11", "-S", "train.py"})), "-S");
}

TEST(PythonShimBlockers, ClusteredOptionsEachOnceInOrder) {
  EXPECT_EQ(Blockers(Cmdline({"python3", "-IE", "train.py"})), "-I -E");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-bE", "-u", "train.py"})), "-E");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-S", "-E", "-I", "-E", "-SS", "t.py"})), "-S -E -I");
}

TEST(PythonShimBlockers, OptionArgumentsAreNotOptions) {
  // -X and -W take an argument: attached, or the next word.
  EXPECT_EQ(Blockers(Cmdline({"python3", "-X", "-E", "train.py"})), "");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-XE", "train.py"})), "");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-W", "ignore", "-E", "train.py"})), "-E");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-Wignore", "-I", "train.py"})), "-I");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-X", "importtime", "-X", "dev", "-I", "t.py"})), "-I");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-EX", "dev", "-S", "t.py"})), "-E -S");
  EXPECT_EQ(Blockers(Cmdline({"python3", "--check-hash-based-pycs", "-E", "t.py"})), "");
  EXPECT_EQ(Blockers(Cmdline({"python3", "--check-hash-based-pycs", "never", "-E", "t.py"})), "-E");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-X"})), "");  // missing argument: no crash
}

TEST(PythonShimBlockers, OptionsEndAtTheProgram) {
  // The script's own arguments, -c's command and -m's module (and what follows) are the program's.
  EXPECT_EQ(Blockers(Cmdline({"python3", "train.py", "-I"})), "");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-c", "-I", "-E"})), "");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-cE"})), "");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-Ec", "print(1)"})), "-E");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-I", "-m", "torch.distributed.run", "-E", "t.py"})), "-I");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-mS"})), "");
  EXPECT_EQ(Blockers(Cmdline({"python3", "--", "-E"})), "");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-", "-E"})), "");
  EXPECT_EQ(Blockers(Cmdline({"python3", "-u", "--version", "-E"})), "-E");  // long options go on
}

TEST(PythonShimBlockers, LastNulMayBeMissingAndSmallBuffersAreRefused) {
  const std::string cut("python3\0-I", 10);
  EXPECT_EQ(Blockers(cut), "-I");
  char small[4];
  EXPECT_EQ(PythonShimBlockers(cut.data(), cut.size(), small, sizeof(small)), 0u);
}

TEST(LooksLikePythonExecutable, ByBaseName) {
  EXPECT_TRUE(LooksLikePythonExecutable("/usr/bin/python3.11"));
  EXPECT_TRUE(LooksLikePythonExecutable("/root/.pyenv/versions/3.11.7/bin/python3.11"));
  EXPECT_TRUE(LooksLikePythonExecutable("python3"));
  EXPECT_FALSE(LooksLikePythonExecutable("/usr/bin/bash"));
  EXPECT_FALSE(LooksLikePythonExecutable("/opt/python3/bin/trainer"));
  EXPECT_FALSE(LooksLikePythonExecutable(nullptr));
}

}  // namespace
}  // namespace trainprof::inject
