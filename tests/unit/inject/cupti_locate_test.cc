// Finding and loading libcupti, and the CUPTI versions accepted.
#include "cupti/cupti_locate.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cupti/cupti_api.h"
#include "temp_dir_test.h"

namespace trainprof::inject::cupti {
namespace {

std::vector<std::string> Candidates(const LocateInputs& in) {
  static char out[kMaxCandidates][kPathMax];
  int n = CuptiCandidates(in, out, kMaxCandidates);
  return std::vector<std::string>(out, out + n);
}

TEST(CuptiLocate, BesideThePyTorchWheelRuntimeThenToolkitsThenTheLoader) {
  LocateInputs in;
  in.cudart = "/venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12";
  in.cuda_home = "/opt/cuda-12.4/";
  EXPECT_EQ(Candidates(in), (std::vector<std::string>{
                                "/venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/",
                                "/venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/../../cuda_cupti/lib/",
                                "/venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/../extras/CUPTI/lib64/",
                                "/opt/cuda-12.4/lib64/",
                                "/opt/cuda-12.4/lib/",
                                "/opt/cuda-12.4/extras/CUPTI/lib64/",
                                "/usr/local/cuda/lib64/",
                                "/usr/local/cuda/lib/",
                                "/usr/local/cuda/extras/CUPTI/lib64/",
                                "libcupti.so.12",
                                "libcupti.so",
                            }));
}

TEST(CuptiLocate, StaticRuntimeAndNoCudaHome) {
  LocateInputs in;  // nvcc links the runtime statically by default: no libcudart.so is loaded
  EXPECT_EQ(Candidates(in), (std::vector<std::string>{"/usr/local/cuda/lib64/", "/usr/local/cuda/lib/",
                                                      "/usr/local/cuda/extras/CUPTI/lib64/", "libcupti.so"}));
}

TEST(CuptiLocate, OverrideIsTheOnlyChoiceButALoadedCuptiComesFirst) {
  LocateInputs in;
  in.cudart = "/usr/local/cuda/lib64/libcudart.so.13";
  in.override_path = "/opt/my/libcupti.so.13";
  in.cuda_home = "/opt/cuda";
  EXPECT_EQ(Candidates(in), (std::vector<std::string>{"/opt/my/libcupti.so.13"}));
  in.loaded_cupti = "/venv/nvidia/cuda_cupti/lib/libcupti.so.12";
  EXPECT_EQ(Candidates(in),
            (std::vector<std::string>{"/venv/nvidia/cuda_cupti/lib/libcupti.so.12", "/opt/my/libcupti.so.13"}));
}

TEST(CuptiLocate, PathsTooLongAreLeftOut) {
  std::string home(kPathMax, 'x');
  LocateInputs in;
  in.cuda_home = home.c_str();
  auto c = Candidates(in);
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c[0], "/usr/local/cuda/lib64/");
}

TEST(CuptiLocate, SonameMajor) {
  EXPECT_EQ(SonameMajor("/x/libcudart.so.12"), 12);
  EXPECT_EQ(SonameMajor("/x/libcudart.so.13.0.96"), 13);
  EXPECT_EQ(SonameMajor("/x/libcudart.so"), 0);
  EXPECT_EQ(SonameMajor(nullptr), 0);
}

TEST(CuptiLocate, VersionsAccepted) {
  EXPECT_FALSE(CuptiVersionSupported(0));
  EXPECT_FALSE(CuptiVersionSupported(17));      // CUDA 11.7
  EXPECT_TRUE(CuptiVersionSupported(18));       // CUDA 11.8
  EXPECT_TRUE(CuptiVersionSupported(24));       // CUDA 12.6
  EXPECT_TRUE(CuptiVersionSupported(28));       // CUDA 12.9 update 1
  EXPECT_TRUE(CuptiVersionSupported(130000));   // CUDA 13.0
  EXPECT_TRUE(CuptiVersionSupported(CUPTI_API_VERSION));
  EXPECT_TRUE(CuptiVersionSupported(139999));
  EXPECT_FALSE(CuptiVersionSupported(140000));  // a major version newer than these headers
}

class OpenCuptiTest : public trainprof::test::TempDirTest {
 protected:
  OpenCuptiTest() : TempDirTest("trainprof-cupti") {}
  char loaded_[kPathMax] = {};
  char why_[kPathMax + 512] = {};
};

TEST_F(OpenCuptiTest, MissingOverrideSaysSo) {
  std::string path = dir_ + "/libcupti.so.13";
  EXPECT_EQ(OpenCupti(path.c_str(), nullptr, loaded_, why_, sizeof(why_)), nullptr);
  EXPECT_EQ(std::string(why_), "TRAINPROF_CUPTI_PATH=" + path + ": no such file");
  EXPECT_EQ(OpenCupti(dir_.c_str(), nullptr, loaded_, why_, sizeof(why_)), nullptr);
  EXPECT_EQ(std::string(why_), "TRAINPROF_CUPTI_PATH=" + dir_ + ": no libcupti.so* in that folder");
}

TEST_F(OpenCuptiTest, AFileThatIsNotALibraryGivesTheLoadersReason) {
  std::string path = dir_ + "/libcupti.so.13";
  std::ofstream(path) << "not an ELF file";
  EXPECT_EQ(OpenCupti(dir_.c_str(), nullptr, loaded_, why_, sizeof(why_)), nullptr);
  std::string why = why_;
  EXPECT_EQ(why.rfind("TRAINPROF_CUPTI_PATH=" + path + ": ", 0), 0u) << why;
  EXPECT_NE(why.find("libcupti.so.13"), std::string::npos) << why;
}

TEST_F(OpenCuptiTest, TheToolkitsLibcuptiLoadsAndResolves) {
  const char* home = getenv("TRAINPROF_TEST_CUDA_HOME");
  std::string cuda = home != nullptr ? home : "/usr/local/cuda";
  std::string lib;
  for (const char* sub : {"/lib64/libcupti.so", "/lib/libcupti.so", "/extras/CUPTI/lib64/libcupti.so"}) {
    if (access((cuda + sub).c_str(), R_OK) == 0) lib = cuda + sub;
  }
  if (lib.empty()) GTEST_SKIP() << "no libcupti under " << cuda;
  // The folder form finds it too.
  std::string folder = lib.substr(0, lib.rfind('/'));
  void* h = OpenCupti(folder.c_str(), nullptr, loaded_, why_, sizeof(why_));
  ASSERT_NE(h, nullptr) << why_;
  EXPECT_EQ(std::string(loaded_).rfind(folder + "/libcupti.so", 0), 0u) << loaded_;
  CuptiApi api;
  const char* missing = nullptr;
  ASSERT_TRUE(ResolveCuptiApi(h, &api, &missing)) << missing;
  uint32_t version = 0;
  ASSERT_EQ(api.GetVersion(&version), CUPTI_SUCCESS);
  EXPECT_TRUE(CuptiVersionSupported(version)) << version;
  EXPECT_STREQ(ResultName(api, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
               "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
}

TEST(CuptiApi, ALibraryWithoutCuptiNamesTheFirstMissingFunction) {
  void* self = dlopen(nullptr, RTLD_NOW);
  CuptiApi api;
  const char* missing = nullptr;
  EXPECT_FALSE(ResolveCuptiApi(self, &api, &missing));
  EXPECT_STREQ(missing, "cuptiGetVersion");
  EXPECT_STREQ(ResultName(api, CUPTI_ERROR_UNKNOWN), "(unknown CUPTI result)");
}

}  // namespace
}  // namespace trainprof::inject::cupti
