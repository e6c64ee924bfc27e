// SharedLibraryProblem (launcher/elf_library.h): what TRAINPROF_INJECT_LIB, or the library found
// next to trainprof, must be for the loader to preload it, and the words for each way it is not.
#include "elf_library.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "temp_dir_test.h"

namespace trainprof::launcher {
namespace {

class SharedLibraryProblemTest : public test::TempDirTest {
 protected:
  SharedLibraryProblemTest() : TempDirTest("trainprof-elf-test") {}
  // The stand-in library's bytes (a real shared object of this build), changed by `edit`.
  template <typename Edit>
  std::string Variant(const std::string& name, Edit edit) {
    std::ifstream in(TRAINPROF_FAKE_INJECT, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    edit(&bytes);
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  template <typename T>
  static void Put(std::vector<char>* bytes, size_t offset, T value) {
    std::memcpy(bytes->data() + offset, &value, sizeof value);
  }
};

TEST_F(SharedLibraryProblemTest, ASharedLibraryOfThisMachineIsFine) {
  EXPECT_EQ(SharedLibraryProblem(TRAINPROF_FAKE_INJECT), "");
}

TEST_F(SharedLibraryProblemTest, EachWayOfNotBeingOneIsNamed) {
  EXPECT_EQ(SharedLibraryProblem("/etc/passwd"), "is not an ELF file (it starts with 'root:x:0')");
  EXPECT_EQ(SharedLibraryProblem(dir_), "is a directory");
  EXPECT_EQ(SharedLibraryProblem(dir_ + "/missing.so"), "cannot be read (No such file or directory)");
  EXPECT_EQ(SharedLibraryProblem("/dev/null"), "is not a regular file");
  const std::string elf32 = Variant("elf32.so", [](std::vector<char>* b) { (*b)[EI_CLASS] = ELFCLASS32; });
  EXPECT_EQ(SharedLibraryProblem(elf32), "is a 32-bit ELF file; this trainprof needs a 64-bit shared library");
#if defined(__x86_64__)
  constexpr uint16_t kOther = EM_AARCH64;
  const std::string want = "is built for AArch64 (e_machine 183), not for x86-64, which this trainprof runs on";
#else
  constexpr uint16_t kOther = EM_X86_64;
  const std::string want = "is built for x86-64 (e_machine 62), not for ";
#endif
  const std::string other = Variant("other.so", [](std::vector<char>* b) { Put(b, offsetof(ElfW(Ehdr), e_machine), kOther); });
  EXPECT_EQ(SharedLibraryProblem(other).rfind(want, 0), 0u) << SharedLibraryProblem(other);
  const std::string exec = Variant("exec.so", [](std::vector<char>* b) {
    Put<uint16_t>(b, offsetof(ElfW(Ehdr), e_type), ET_EXEC);
  });
  EXPECT_EQ(SharedLibraryProblem(exec), "is an executable (ELF type ET_EXEC), not a shared library");
  const std::string cut = Variant("cut.so", [](std::vector<char>* b) { b->resize(30); });
  EXPECT_EQ(SharedLibraryProblem(cut), "is cut short: its ELF header is incomplete");
  // A position-independent executable is ET_DYN too: DF_1_PIE in its dynamic section tells it.
  EXPECT_EQ(SharedLibraryProblem("/bin/sh"), "is a position-independent executable, not a shared library");
}

}  // namespace
}  // namespace trainprof::launcher
