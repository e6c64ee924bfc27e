#include "inject_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "temp_dir_test.h"

namespace trainprof::launcher {
namespace {

unsigned Trace(const std::string& list) {
  std::string error;
  auto mask = ParseTraceList(list, &error);
  EXPECT_TRUE(mask.has_value()) << list << ": " << error;
  return mask.value_or(0);
}

std::string TraceError(const std::string& list) {
  std::string error;
  EXPECT_FALSE(ParseTraceList(list, &error).has_value()) << list;
  return error;
}

TEST(TraceList, DefaultIsAll) {
  EXPECT_EQ(Trace(""), kTraceAll);
  EXPECT_EQ(Trace(" "), kTraceAll);
  EXPECT_EQ(Trace("cuda,nvtx,python"), kTraceAll);
}

TEST(TraceList, NamesSelectOnlyThose) {
  EXPECT_EQ(Trace("nvtx"), kTraceNvtx);
  EXPECT_EQ(Trace("python,cuda"), kTraceCuda | kTracePython);
  EXPECT_EQ(Trace(" cuda , nvtx ,"), kTraceCuda | kTraceNvtx);
  EXPECT_EQ(Trace("nvtx,nvtx"), kTraceNvtx);
}

TEST(TraceList, LeadingRemovalStartsFromAll) {
  EXPECT_EQ(Trace("-python"), kTraceCuda | kTraceNvtx);
  EXPECT_EQ(Trace("-python,-cuda"), kTraceNvtx);
  EXPECT_EQ(Trace("-python,python"), kTraceAll);
  EXPECT_EQ(Trace("cuda,nvtx,-nvtx"), kTraceCuda);
}

TEST(TraceList, TorchOpsIsOptIn) {
  EXPECT_EQ(kTraceAll & kTraceTorchOps, 0u);
  EXPECT_EQ(Trace("torch-ops"), kTraceAll | kTraceTorchOps);  // only opt-in sources: added to the defaults
  EXPECT_EQ(Trace("torch-ops,-cuda"), kTraceNvtx | kTracePython | kTraceTorchOps);
  EXPECT_EQ(Trace("-cuda,torch-ops"), kTraceNvtx | kTracePython | kTraceTorchOps);
  EXPECT_EQ(Trace("nvtx,python,torch-ops"), kTraceNvtx | kTracePython | kTraceTorchOps);
  EXPECT_EQ(Trace("torch-ops,-torch-ops"), kTraceAll);
  EXPECT_EQ(TraceListString(kTraceAll | kTraceTorchOps), "cuda,nvtx,python,torch-ops");
}

TEST(TraceList, TorchOpsSetsTheIttCollector) {
  InjectConfig c;
  c.files.library = "/opt/tp/libtrainprof_inject.so";
  c.output_dir = "/tmp/out";
  c.trace = kTraceAll | kTraceTorchOps;
  auto env = BuildChildEnvironment({"INTEL_LIBITTNOTIFY64=/opt/tp/libtrainprof_inject.so"}, c);
  EXPECT_EQ(GetEnv(env, "INTEL_LIBITTNOTIFY64"), c.files.library);
  EXPECT_EQ(GetEnv(env, "TRAINPROF_TRACE"), "cuda,nvtx,python,torch-ops");
  c.trace = kTraceAll;  // an enclosing run's collector goes; a user's own (VTune's) stays
  EXPECT_EQ(GetEnv(BuildChildEnvironment({"INTEL_LIBITTNOTIFY64=/opt/tp/libtrainprof_inject.so"}, c),
                   "INTEL_LIBITTNOTIFY64"),
            std::nullopt);
  EXPECT_EQ(GetEnv(BuildChildEnvironment({"INTEL_LIBITTNOTIFY64=/vtune/libittnotify_collector.so"}, c),
                   "INTEL_LIBITTNOTIFY64"),
            "/vtune/libittnotify_collector.so");
}

TEST(TraceList, UnknownNameListsTheValidOnes) {
  std::string e = TraceError("cuda,gpu");
  EXPECT_NE(e.find("'gpu'"), std::string::npos) << e;
  EXPECT_NE(e.find("cuda, nvtx, python, torch-ops"), std::string::npos) << e;
  EXPECT_NE(TraceError("-torch").find("'torch'"), std::string::npos);
  EXPECT_NE(TraceError("CUDA").find("'CUDA'"), std::string::npos);
  EXPECT_FALSE(TraceError("-").empty());
}

TEST(TraceList, NothingLeftIsAnError) {
  EXPECT_NE(TraceError("-cuda,-nvtx,-python").find("no source"), std::string::npos);
  EXPECT_NE(TraceError("cuda,-cuda").find("no source"), std::string::npos);
}

TEST(TraceList, NormalisedStringIsInCanonicalOrder) {
  EXPECT_EQ(TraceListString(kTraceAll), "cuda,nvtx,python");
  EXPECT_EQ(TraceListString(Trace("python,cuda")), "cuda,python");
  EXPECT_EQ(TraceListString(Trace("-python")), "cuda,nvtx");
}

TEST(PrependToList, Basics) {
  EXPECT_EQ(PrependToList("", "/lib.so"), "/lib.so");
  EXPECT_EQ(PrependToList("/a.so:/b.so", "/lib.so"), "/lib.so:/a.so:/b.so");
  EXPECT_EQ(PrependToList("/a.so:/lib.so", "/lib.so"), "/lib.so:/a.so");  // no duplicate
  // An empty PYTHONPATH entry means "the current directory": never introduce or keep one.
  EXPECT_EQ(PrependToList("/a::/b:", "/shim"), "/shim:/a:/b");
  // LD_PRELOAD may separate entries with spaces.
  EXPECT_EQ(PrependToList("/a.so /b.so", "/lib.so", ": \t"), "/lib.so:/a.so:/b.so");
}

TEST(EnvEntries, SetGetUnsetMatchWholeNames) {
  std::vector<std::string> env = {"FOOBAR=1", "FOO=2", "X="};
  EXPECT_EQ(GetEnv(env, "FOO"), "2");
  EXPECT_EQ(GetEnv(env, "X"), "");
  EXPECT_EQ(GetEnv(env, "FO"), std::nullopt);
  SetEnv(&env, "FOO", "3");
  EXPECT_EQ(GetEnv(env, "FOO"), "3");
  EXPECT_EQ(GetEnv(env, "FOOBAR"), "1");
  SetEnv(&env, "NEW", "a=b");
  EXPECT_EQ(GetEnv(env, "NEW"), "a=b");
  UnsetEnv(&env, "FOO");
  EXPECT_EQ(GetEnv(env, "FOO"), std::nullopt);
  EXPECT_EQ(GetEnv(env, "FOOBAR"), "1");
}

InjectConfig Config() {
  InjectConfig c;
  c.files.library = "/opt/tp/lib/trainprof/libtrainprof_inject.so";
  c.files.python_shim = "/opt/tp/share/trainprof/python";
  c.output_dir = "/runs/out";
  return c;
}

TEST(ChildEnvironment, SetsTheContractVariables) {
  std::vector<std::string> env =
      BuildChildEnvironment({"HOME=/root", "PATH=/usr/bin", "CUDA_VISIBLE_DEVICES=0"}, Config());
  const std::string lib = "/opt/tp/lib/trainprof/libtrainprof_inject.so";
  EXPECT_EQ(GetEnv(env, "LD_PRELOAD"), lib);
  EXPECT_EQ(GetEnv(env, "NVTX_INJECTION64_PATH"), lib);
  EXPECT_EQ(GetEnv(env, "TRAINPROF_LIB"), lib);
  EXPECT_EQ(GetEnv(env, "TRAINPROF_OUTPUT_DIR"), "/runs/out");
  EXPECT_EQ(GetEnv(env, "TRAINPROF_FOLLOW_CHILDREN"), "0");
  EXPECT_EQ(GetEnv(env, "TRAINPROF_TRACE"), "cuda,nvtx,python");
  EXPECT_EQ(GetEnv(env, "TRAINPROF_UMASK"), "077");  // trace files 0600 unless --umask says otherwise
  EXPECT_EQ(GetEnv(env, "PYTHONPATH"), "/opt/tp/share/trainprof/python");
  EXPECT_EQ(GetEnv(env, "TRAINPROF_PYTHON_DIR"), "/opt/tp/share/trainprof/python");
  EXPECT_EQ(GetEnv(env, "CUDA_INJECTION64_PATH"), lib);
  // Set by the child after fork, not here.
  EXPECT_EQ(GetEnv(env, "TRAINPROF_ROOT_PID"), std::nullopt);
  // The rest is passed on.
  EXPECT_EQ(GetEnv(env, "HOME"), "/root");
  EXPECT_EQ(GetEnv(env, "CUDA_VISIBLE_DEVICES"), "0");
}

TEST(ChildEnvironment, UmaskIsPassedAsThreeOctalDigits) {
  InjectConfig c = Config();
  c.umask = 027;
  EXPECT_EQ(GetEnv(BuildChildEnvironment({}, c), "TRAINPROF_UMASK"), "027");
  c.umask = 0;
  EXPECT_EQ(GetEnv(BuildChildEnvironment({}, c), "TRAINPROF_UMASK"), "000");
}

TEST(Umask, ParsesOctalUpTo777) {
  std::string error;
  EXPECT_EQ(ParseUmask("077", &error), 077u);
  EXPECT_EQ(ParseUmask("0027", &error), 027u);
  EXPECT_EQ(ParseUmask("22", &error), 022u);
  EXPECT_EQ(ParseUmask("0", &error), 0u);
  EXPECT_EQ(ParseUmask("077", &error), 077u);
  for (const char* bad : {"", "8", "0778", "1000", "07777", "-1", "u=rwx", " 077", "0x1f"}) {
    EXPECT_EQ(ParseUmask(bad, &error), std::nullopt) << bad;
  }
  EXPECT_NE(error.find("octal mask"), std::string::npos) << error;
}

// 777, 200, 100 left a trace directory its owner could not use (d---------: silently unprofiled).
TEST(Umask, RefusesMasksThatTakeTheOwnersBits) {
  std::string error;
  for (const char* bad : {"777", "200", "100", "400", "0700", "177"}) {
    error.clear();
    EXPECT_EQ(ParseUmask(bad, &error), std::nullopt) << bad;
    EXPECT_NE(error.find("takes the owner's own permissions away"), std::string::npos) << error;
  }
  EXPECT_EQ(ParseUmask("0077", &error), 077u);
  EXPECT_EQ(ParseUmask("0", &error), 0u);
}

TEST(ChildEnvironment, PrependsToExistingLists) {
  InjectConfig c = Config();
  c.follow_children = true;
  std::vector<std::string> env =
      BuildChildEnvironment({"LD_PRELOAD=/usr/lib/libjemalloc.so", "PYTHONPATH=/src:/lib"}, c);
  EXPECT_EQ(GetEnv(env, "LD_PRELOAD"), c.files.library + ":/usr/lib/libjemalloc.so");
  EXPECT_EQ(GetEnv(env, "PYTHONPATH"), c.files.python_shim + ":/src:/lib");
  EXPECT_EQ(GetEnv(env, "TRAINPROF_FOLLOW_CHILDREN"), "1");
}

TEST(ChildEnvironment, SanitizerRuntimeGoesFirstInLdPreload) {
  InjectConfig c = Config();
  c.files.sanitizer_runtime = "/usr/lib/x86_64-linux-gnu/libasan.so.8.0.0";
  std::vector<std::string> env = BuildChildEnvironment(
      {"LD_PRELOAD=/usr/lib/libjemalloc.so /usr/lib/x86_64-linux-gnu/libasan.so.8.0.0"}, c);
  EXPECT_EQ(GetEnv(env, "LD_PRELOAD"),
            c.files.sanitizer_runtime + ":" + c.files.library + ":/usr/lib/libjemalloc.so");
  // Only the library is the injection library.
  EXPECT_EQ(GetEnv(env, "NVTX_INJECTION64_PATH"), c.files.library);
  EXPECT_EQ(GetEnv(env, "TRAINPROF_LIB"), c.files.library);
}

TEST(ChildEnvironment, TraceListControlsNvtxAndPython) {
  InjectConfig c = Config();
  c.trace = kTraceCuda;
  std::vector<std::string> env = BuildChildEnvironment(
      {"PYTHONPATH=/src", "NVTX_INJECTION64_PATH=" + c.files.library, "TRAINPROF_PYTHON_DIR=/old"}, c);
  EXPECT_EQ(GetEnv(env, "TRAINPROF_TRACE"), "cuda");
  EXPECT_EQ(GetEnv(env, "NVTX_INJECTION64_PATH"), std::nullopt);  // ours, from an outer run
  EXPECT_EQ(GetEnv(env, "PYTHONPATH"), "/src");
  EXPECT_EQ(GetEnv(env, "TRAINPROF_PYTHON_DIR"), std::nullopt);

  // Someone else's NVTX injection is left alone when we do not trace NVTX.
  env = BuildChildEnvironment({"NVTX_INJECTION64_PATH=/other/tool.so"}, c);
  EXPECT_EQ(GetEnv(env, "NVTX_INJECTION64_PATH"), "/other/tool.so");
}

TEST(ChildEnvironment, TraceListControlsCuda) {
  InjectConfig c = Config();
  c.trace = kTraceNvtx | kTracePython;
  std::vector<std::string> env = BuildChildEnvironment({"CUDA_INJECTION64_PATH=" + c.files.library}, c);
  EXPECT_EQ(GetEnv(env, "CUDA_INJECTION64_PATH"), std::nullopt);  // ours, from an outer run
  EXPECT_EQ(GetEnv(env, "NVTX_INJECTION64_PATH"), c.files.library);

  // Someone else's CUDA injection is left alone when we do not trace CUDA, and replaced when we do.
  env = BuildChildEnvironment({"CUDA_INJECTION64_PATH=/other/tool.so"}, c);
  EXPECT_EQ(GetEnv(env, "CUDA_INJECTION64_PATH"), "/other/tool.so");
  c.trace = kTraceAll;
  env = BuildChildEnvironment({"CUDA_INJECTION64_PATH=/other/tool.so"}, c);
  EXPECT_EQ(GetEnv(env, "CUDA_INJECTION64_PATH"), c.files.library);
}

TEST(ChildEnvironment, NoShimLeavesPythonPathAlone) {
  InjectConfig c = Config();
  c.files.python_shim.clear();
  std::vector<std::string> env = BuildChildEnvironment({"PYTHONPATH=/src"}, c);
  EXPECT_EQ(GetEnv(env, "PYTHONPATH"), "/src");
  env = BuildChildEnvironment({}, c);
  EXPECT_EQ(GetEnv(env, "PYTHONPATH"), std::nullopt);
}

// root_ holds bin/trainprof (exe_, as if installed there) and what a test puts beside it.
class FindInjectFilesTest : public test::TempDirTest {
 protected:
  FindInjectFilesTest() : TempDirTest("trainprof-inject-env-test") {}
  void SetUp() override {
    TempDirTest::SetUp();
    root_ = dir_;
    std::filesystem::create_directories(root_ + "/bin");
    exe_ = root_ + "/bin/trainprof";
  }
  void Touch(const std::string& rel) {
    std::filesystem::create_directories(std::filesystem::path(root_ + "/" + rel).parent_path());
    std::ofstream(root_ + "/" + rel) << "";
  }
  // A shared library at `rel`: a copy of the stand-in library the shell tests use.
  void Library(const std::string& rel) {
    std::filesystem::create_directories(std::filesystem::path(root_ + "/" + rel).parent_path());
    std::filesystem::copy_file(TRAINPROF_FAKE_INJECT, root_ + "/" + rel);
  }
  // With the library and the Python shim directory at these places under root_, FindInjectFiles
  // finds both there.
  void ExpectFoundAt(const std::string& library, const std::string& python_shim) {
    Library(library);
    std::filesystem::create_directories(root_ + "/" + python_shim);
    std::string error;
    auto f = FindInjectFiles(nullptr, exe_, &error);
    ASSERT_TRUE(f.has_value()) << error;
    EXPECT_EQ(f->library, root_ + "/" + library);
    EXPECT_EQ(f->python_shim, root_ + "/" + python_shim);
  }
  std::string root_, exe_;
};

TEST_F(FindInjectFilesTest, BuildTreeLayout) { ExpectFoundAt("inject/libtrainprof_inject.so", "python"); }

TEST_F(FindInjectFilesTest, InstalledLayout) {
  // The folders `cmake --install` uses (GNUInstallDirs), relative to bin/ (a moved prefix works).
  const std::filesystem::path bin = "bin";
  ExpectFoundAt((bin / kInstalledLibraryDir / "libtrainprof_inject.so").lexically_normal(),
                (bin / kInstalledShimDir).lexically_normal());
}

TEST_F(FindInjectFilesTest, InstalledFoldersAreRelativeToTheExecutable) {
  // GNUInstallDirs' relative folders (bin/, lib/ or lib/<multiarch>/, share/) give relative paths:
  // what makes a moved prefix work (tests/e2e/test_install.py moves one).
  for (const char* dir : {kInstalledLibraryDir, kInstalledShimDir}) {
    EXPECT_FALSE(std::filesystem::path(dir).is_absolute()) << dir;
    EXPECT_EQ(std::string(dir).rfind("../", 0), 0u) << dir;
  }
  EXPECT_TRUE(std::string(kInstalledLibraryDir).ends_with("/trainprof")) << kInstalledLibraryDir;
  EXPECT_TRUE(std::string(kInstalledShimDir).ends_with("/trainprof/python")) << kInstalledShimDir;
}

TEST_F(FindInjectFilesTest, OverrideWinsAndMustExist) {
  Library("inject/libtrainprof_inject.so");
  Library("elsewhere/custom.so");
  std::string error;
  auto f = FindInjectFiles((root_ + "/elsewhere/../elsewhere/custom.so").c_str(), exe_, &error);
  ASSERT_TRUE(f.has_value()) << error;
  EXPECT_EQ(f->library, root_ + "/elsewhere/custom.so");
  EXPECT_EQ(f->python_shim, "");
  EXPECT_FALSE(FindInjectFiles((root_ + "/missing.so").c_str(), exe_, &error).has_value());
  EXPECT_NE(error.find("TRAINPROF_INJECT_LIB"), std::string::npos);
}

TEST_F(FindInjectFilesTest, MissingLibraryNamesWhereItLooked) {
  std::string error;
  EXPECT_FALSE(FindInjectFiles(nullptr, exe_, &error).has_value());
  EXPECT_NE(error.find(root_ + "/inject/libtrainprof_inject.so"), std::string::npos) << error;
  const std::filesystem::path installed = std::filesystem::path(root_ + "/bin") / kInstalledLibraryDir;
  EXPECT_NE(error.find((installed / "libtrainprof_inject.so").lexically_normal().string()), std::string::npos)
      << error;
  EXPECT_NE(error.find("TRAINPROF_INJECT_LIB"), std::string::npos) << error;
}

TEST_F(FindInjectFilesTest, PathThatLdPreloadCannotHoldIsRefused) {
  Library("with space/lib.so");
  std::string error;
  EXPECT_FALSE(FindInjectFiles((root_ + "/with space/lib.so").c_str(), exe_, &error).has_value());
  EXPECT_NE(error.find("LD_PRELOAD"), std::string::npos) << error;
}

// TRAINPROF_INJECT_LIB naming something the loader cannot preload: the error names the variable,
// the file and what is wrong with it, before any command runs (the old message came after the run:
// "is the command statically linked, setuid/setgid ...?").
TEST_F(FindInjectFilesTest, AnOverrideThatIsNotASharedLibraryIsNamedWithWhatIsWrong) {
  Library("inject/libtrainprof_inject.so");  // a good one next to trainprof does not hide it
  Touch("empty.so");
  std::filesystem::create_directories(root_ + "/dir.so");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/etc/passwd", "TRAINPROF_INJECT_LIB=/etc/passwd: the file is not an ELF file (it starts with 'root:x:0')"},
      {root_ + "/dir.so", "TRAINPROF_INJECT_LIB=" + root_ + "/dir.so: the file is a directory"},
      {root_ + "/empty.so", "TRAINPROF_INJECT_LIB=" + root_ + "/empty.so: the file is not an ELF file (it is empty)"},
      {root_ + "/missing.so", "TRAINPROF_INJECT_LIB=" + root_ + "/missing.so: the file cannot be read (No such file or directory)"},
      {"/bin/sh", "TRAINPROF_INJECT_LIB=/bin/sh: the file is a position-independent executable, not a shared library"},
  };
  for (const auto& [path, want] : cases) {
    std::string error;
    EXPECT_FALSE(FindInjectFiles(path.c_str(), exe_, &error).has_value()) << path;
    EXPECT_EQ(error.rfind(want, 0), 0u) << error;
  }
}

// The same for the library found next to trainprof: named, with what is wrong.
TEST_F(FindInjectFilesTest, ABrokenLibraryNextToTrainprofIsNamed) {
  Touch("inject/libtrainprof_inject.so");  // empty: an interrupted install
  std::string error;
  EXPECT_FALSE(FindInjectFiles(nullptr, exe_, &error).has_value());
  EXPECT_EQ(error, "the injection library " + root_ + "/inject/libtrainprof_inject.so, found next to trainprof, is not "
                   "an ELF file (it is empty); reinstall or rebuild trainprof, or set TRAINPROF_INJECT_LIB to a good copy");
}

TEST(SelfExecutable, IsThisTestBinary) {
  EXPECT_NE(SelfExecutable().find("trainprof_launcher_tests"), std::string::npos);
}

}  // namespace
}  // namespace trainprof::launcher
