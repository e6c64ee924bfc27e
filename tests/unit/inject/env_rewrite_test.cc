#include "env_rewrite.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "config.h"

namespace trainprof::inject {
namespace {

// Runs RewriteEnv on a vector of strings and returns the result as strings.
std::vector<std::string> Rewrite(std::vector<std::string> env, const Config& cfg, bool follow) {
  std::vector<char*> in;
  for (auto& e : env) in.push_back(e.data());
  in.push_back(nullptr);
  std::vector<char*> out(RewrittenEnvCapacity(in.data()));
  std::string scratch(RewriteScratchBytes(in.data(), cfg), '\0');
  char** result = RewriteEnv(in.data(), cfg, follow, out.data(), scratch.data());
  std::vector<std::string> r;
  for (char** p = result; *p != nullptr; ++p) r.emplace_back(*p);
  return r;
}

Config TestConfig() {
  Config c;
  c.lib_path = "/opt/tp/libtrainprof_inject.so";
  c.python_dir = "/opt/tp/python";
  c.output_dir = "/tmp/out";
  c.saved[0] = "TRAINPROF_OUTPUT_DIR=/tmp/out";
  c.saved[1] = "TRAINPROF_FOLLOW_CHILDREN=1";
  c.saved[4] = "TRAINPROF_LIB=/opt/tp/libtrainprof_inject.so";
  c.saved[6] = "NVTX_INJECTION64_PATH=/opt/tp/libtrainprof_inject.so";
  return c;
}

TEST(EnvRewrite, WithoutFollowStripsOurVariablesAndKeepsTheRest) {
  auto r = Rewrite({"HOME=/root", "LD_PRELOAD=/opt/tp/libtrainprof_inject.so:/usr/lib/libjemalloc.so",
                    "TRAINPROF_OUTPUT_DIR=/tmp/out", "NVTX_INJECTION64_PATH=/opt/tp/libtrainprof_inject.so",
                    "PYTHONPATH=/opt/tp/python:/src", "PATH=/bin"},
                   TestConfig(), false);
  EXPECT_EQ(r, (std::vector<std::string>{"HOME=/root", "LD_PRELOAD=/usr/lib/libjemalloc.so", "PYTHONPATH=/src",
                                         "PATH=/bin"}));
}

TEST(EnvRewrite, WithoutFollowDropsAPreloadThatHeldOnlyUs) {
  auto r = Rewrite({"LD_PRELOAD=/opt/tp/libtrainprof_inject.so", "A=1"}, TestConfig(), false);
  EXPECT_EQ(r, (std::vector<std::string>{"A=1"}));
}

TEST(EnvRewrite, FollowKeepsEverythingThatIsAlreadyThere) {
  std::vector<std::string> env = {"LD_PRELOAD=/opt/tp/libtrainprof_inject.so", "TRAINPROF_OUTPUT_DIR=/tmp/out",
                                  "TRAINPROF_FOLLOW_CHILDREN=1", "TRAINPROF_LIB=/opt/tp/libtrainprof_inject.so",
                                  "NVTX_INJECTION64_PATH=/opt/tp/libtrainprof_inject.so",
                                  "PYTHONPATH=/opt/tp/python", "X=y"};
  EXPECT_EQ(Rewrite(env, TestConfig(), true), env);
}

TEST(EnvRewrite, FollowRestoresVariablesAScrubbingLauncherRemoved) {
  auto r = Rewrite({"LD_PRELOAD=/usr/lib/libjemalloc.so", "X=y"}, TestConfig(), true);
  EXPECT_EQ(r, (std::vector<std::string>{"LD_PRELOAD=/opt/tp/libtrainprof_inject.so:/usr/lib/libjemalloc.so", "X=y",
                                         "TRAINPROF_OUTPUT_DIR=/tmp/out", "TRAINPROF_FOLLOW_CHILDREN=1",
                                         "TRAINPROF_LIB=/opt/tp/libtrainprof_inject.so",
                                         "NVTX_INJECTION64_PATH=/opt/tp/libtrainprof_inject.so",
                                         "PYTHONPATH=/opt/tp/python"}));
}

TEST(EnvRewrite, FollowWithAnEmptyEnvironmentAddsEverything) {
  Config cfg = TestConfig();
  std::vector<char*> out(RewrittenEnvCapacity(nullptr));
  std::string scratch(RewriteScratchBytes(nullptr, cfg), '\0');
  char** r = RewriteEnv(nullptr, cfg, true, out.data(), scratch.data());
  std::vector<std::string> got;
  for (char** p = r; *p != nullptr; ++p) got.emplace_back(*p);
  EXPECT_EQ(got.size(), 6u);
  EXPECT_EQ(got[4], "LD_PRELOAD=/opt/tp/libtrainprof_inject.so");
  EXPECT_EQ(got[5], "PYTHONPATH=/opt/tp/python");
}

TEST(EnvRewrite, WithoutFollowEmptyEnvironmentStaysEmpty) {
  Config cfg = TestConfig();
  std::vector<char*> out(RewrittenEnvCapacity(nullptr));
  std::string scratch(RewriteScratchBytes(nullptr, cfg), '\0');
  EXPECT_EQ(RewriteEnv(nullptr, cfg, false, out.data(), scratch.data())[0], nullptr);
}

TEST(EnvRewrite, QuietFlagsReachExecdChildrenSoFailuresAreSaidOnce) {
  Config cfg = TestConfig();
  cfg.quiet = true;
  cfg.cuda_quiet = true;
  auto r = Rewrite({"X=y"}, cfg, true);
  EXPECT_NE(std::find(r.begin(), r.end(), "TRAINPROF_QUIET=1"), r.end());
  EXPECT_NE(std::find(r.begin(), r.end(), "TRAINPROF_CUDA_QUIET=1"), r.end());
  // Only the one that was said.
  cfg.quiet = false;
  r = Rewrite({"X=y"}, cfg, true);
  EXPECT_EQ(std::find(r.begin(), r.end(), "TRAINPROF_QUIET=1"), r.end());
  EXPECT_NE(std::find(r.begin(), r.end(), "TRAINPROF_CUDA_QUIET=1"), r.end());
  // Already there: not repeated. Without --follow-children: stripped like our other variables.
  r = Rewrite({"TRAINPROF_CUDA_QUIET=1"}, cfg, true);
  EXPECT_EQ(std::count(r.begin(), r.end(), "TRAINPROF_CUDA_QUIET=1"), 1);
  r = Rewrite({"TRAINPROF_CUDA_QUIET=1", "CUDA_INJECTION64_PATH=/opt/tp/libtrainprof_inject.so", "X=y"}, cfg, false);
  EXPECT_EQ(r, (std::vector<std::string>{"X=y"}));
}

TEST(EnvRewrite, SimilarNamesAreNotOurs) {
  auto r = Rewrite({"TRAINPROF_OUTPUT_DIRX=1", "LD_PRELOAD_X=1", "LD_PRELOAD=/opt/tp/libtrainprof_inject.so.bak"},
                   TestConfig(), false);
  EXPECT_EQ(r, (std::vector<std::string>{"TRAINPROF_OUTPUT_DIRX=1", "LD_PRELOAD_X=1",
                                         "LD_PRELOAD=/opt/tp/libtrainprof_inject.so.bak"}));
}

}  // namespace

// A large environment gets its rewrite from EnvMemory (not the stack); when that has no memory,
// the program's own call is made with its environment unchanged and the refusal is reported.
int g_maps = 0, g_unmaps = 0;
size_t g_mapped = 0;
void* FailingMap(size_t) {
  ++g_maps;
  return nullptr;
}
std::vector<char> g_heap;
void* CountingMap(size_t bytes) {
  ++g_maps;
  g_mapped = bytes;
  g_heap.assign(bytes, '\0');
  return g_heap.data();
}
void CountingUnmap(void*, size_t bytes) {
  ++g_unmaps;
  EXPECT_EQ(bytes, g_mapped);
}

struct BigEnv {
  std::vector<std::string> strings;
  std::vector<char*> ptrs;
  explicit BigEnv(size_t n) {
    for (size_t i = 0; i < n; ++i) strings.push_back("TP_BIG_" + std::to_string(i) + "=x");
    strings.push_back("LD_PRELOAD=/usr/lib/libjemalloc.so");
    for (auto& s : strings) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
  }
};

TEST(EnvRewrite, SmallEnvironmentsUseTheStackLargeOnesMappedMemory) {
  const EnvMemory saved = g_env_memory;
  g_env_memory = {CountingMap, CountingUnmap};
  Config cfg = TestConfig();
  g_maps = g_unmaps = 0;
  BigEnv small(10);
  bool refused = true;
  size_t n = 0;
  int rc = WithRewrittenEnv(small.ptrs.data(), cfg, true, false, &refused, [&](char* const* env) {
    for (; env[n] != nullptr; ++n) {}
    return 7;
  });
  EXPECT_EQ(rc, 7);
  EXPECT_FALSE(refused);
  EXPECT_EQ(g_maps, 0);
  EXPECT_EQ(n, 11u + 5u);  // ours put back: output dir, follow flag, lib, NVTX injection path, PYTHONPATH

  BigEnv big(60000);
  ASSERT_GT(RewriteBytes(big.ptrs.data(), cfg), kEnvStackBytes);
  std::string preload;
  rc = WithRewrittenEnv(big.ptrs.data(), cfg, true, false, &refused, [&](char* const* env) {
    n = 0;
    for (; env[n] != nullptr; ++n) {
      if (strncmp(env[n], "LD_PRELOAD=", 11) == 0) preload = env[n];
    }
    errno = ENOENT;
    return -1;
  });
  EXPECT_EQ(rc, -1);
  EXPECT_EQ(errno, ENOENT);  // the call's errno survives the unmap
  EXPECT_FALSE(refused);
  EXPECT_EQ(g_maps, 1);
  EXPECT_EQ(g_unmaps, 1);
  EXPECT_EQ(n, 60001u + 5u);
  EXPECT_EQ(preload, "LD_PRELOAD=/opt/tp/libtrainprof_inject.so:/usr/lib/libjemalloc.so");
  g_env_memory = saved;
}

TEST(EnvRewrite, WithoutMemoryTheCallIsMadeWithTheEnvironmentUnchanged) {
  const EnvMemory saved = g_env_memory;
  g_env_memory = {FailingMap, CountingUnmap};
  g_maps = g_unmaps = 0;
  Config cfg = TestConfig();
  BigEnv big(60000);
  bool refused = false;
  char* const* got = nullptr;
  int calls = 0;
  int rc = WithRewrittenEnv(big.ptrs.data(), cfg, true, false, &refused, [&](char* const* env) {
    got = env;
    ++calls;
    return 0;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(refused);
  EXPECT_EQ(got, big.ptrs.data());  // the program's own array, as given
  EXPECT_EQ(g_maps, 1);
  EXPECT_EQ(g_unmaps, 0);
  g_env_memory = saved;
}


// In a vfork child the region is the vforking thread's, kept (a successful exec cannot unmap
// it) and reused by its next vfork child; grown when too small; other threads get their own.
TEST(EnvRewrite, VforkChildrenOfAThreadReuseOneRegion) {
  const EnvMemory saved = g_env_memory;
  g_env_memory = {[](size_t n) -> void* { ++g_maps; return mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); },
                  [](void* p, size_t n) { ++g_unmaps; munmap(p, n); }};
  g_maps = g_unmaps = 0;
  Config cfg = TestConfig();
  BigEnv big(60000);
  bool refused = true;
  const void* first = nullptr;
  for (int i = 0; i < 3; ++i) {
    int rc = WithRewrittenEnv(big.ptrs.data(), cfg, true, true, &refused, [&](char* const* env) {
      if (i == 0) first = env;
      EXPECT_EQ(env, first);
      return 0;
    });
    EXPECT_EQ(rc, 0);
    EXPECT_FALSE(refused);
  }
  EXPECT_EQ(g_maps, 1);
  EXPECT_EQ(g_unmaps, 0);
  BigEnv bigger(120000);
  const void* grown = nullptr;
  WithRewrittenEnv(bigger.ptrs.data(), cfg, true, true, &refused, [&](char* const* env) {
    grown = env;
    return 0;
  });
  EXPECT_EQ(g_maps, 2);
  EXPECT_EQ(g_unmaps, 1);  // the smaller region, given back
  const void* other = nullptr;
  std::thread([&] {
    WithRewrittenEnv(big.ptrs.data(), cfg, true, true, &refused, [&](char* const* env) {
      other = env;
      return 0;
    });
  }).join();
  EXPECT_NE(other, grown);  // (the first region was given back: its address may be reused)
  EXPECT_EQ(g_maps, 3);
  g_env_memory = saved;
}

}  // namespace trainprof::inject
