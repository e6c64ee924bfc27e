// TRAINPROF_BACKTRACE as the library reads it, and the header's kStacks metadata
// (inject/stacks/backtrace_settings.h); the build id of an object from its notes (build_id.h).
#include "stacks/backtrace_settings.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstring>
#include <string>
#include <vector>

#include "stacks/build_id.h"

namespace trainprof::inject {
namespace {

std::string Meta(const char* env) {
  BacktraceSettings s;
  EXPECT_TRUE(ParseBacktraceSettings(env, &s)) << (env ? env : "(unset)");
  char buf[128];
  uint32_t n = FormatStacksMetadata(s, buf, sizeof(buf));
  return std::string(buf, n);
}

TEST(BacktraceSettings, DefaultIsCudaAtOneMicrosecond) {
  BacktraceSettings s;
  ASSERT_TRUE(ParseBacktraceSettings(nullptr, &s));
  EXPECT_TRUE(s.cuda);
  EXPECT_EQ(s.cuda_threshold_ns, 1000u);
  EXPECT_FALSE(s.nvtx);
  EXPECT_EQ(Meta(nullptr), "backtrace=cuda:1000");
}

TEST(BacktraceSettings, ListsAsTheLauncherWritesThem) {
  EXPECT_EQ(Meta("none"), "backtrace=none");
  EXPECT_EQ(Meta("nvtx"), "backtrace=nvtx");
  EXPECT_EQ(Meta("cuda:250000,nvtx"), "backtrace=cuda:250000,nvtx");
  EXPECT_EQ(Meta("cuda:0"), "backtrace=cuda:0");
  BacktraceSettings s;
  ASSERT_TRUE(ParseBacktraceSettings("nvtx", &s));
  EXPECT_FALSE(s.cuda);  // a list replaces the default
  EXPECT_TRUE(s.nvtx);
  ASSERT_TRUE(ParseBacktraceSettings("none", &s));
  EXPECT_FALSE(s.any());
}

TEST(BacktraceSettings, BadTextGivesTheDefault) {
  for (const char* bad : {"", "cuda:", "cuda:12x", "nvtx,", "stack", "none,nvtx", "cuda:99999999999999999"}) {
    BacktraceSettings s;
    s.nvtx = true;
    EXPECT_FALSE(ParseBacktraceSettings(bad, &s)) << bad;
    EXPECT_TRUE(s.cuda) << bad;
    EXPECT_FALSE(s.nvtx) << bad;
    EXPECT_EQ(s.cuda_threshold_ns, kDefaultCudaBacktraceNs) << bad;
  }
}

// An ELF note: header, name padded to 4, descriptor padded to 4.
void AddNote(std::vector<unsigned char>* out, uint32_t type, const char* name, const std::vector<unsigned char>& desc) {
  ElfW(Nhdr) h{};
  h.n_namesz = static_cast<uint32_t>(strlen(name) + 1);
  h.n_descsz = static_cast<uint32_t>(desc.size());
  h.n_type = type;
  const auto* p = reinterpret_cast<const unsigned char*>(&h);
  out->insert(out->end(), p, p + sizeof(h));
  out->insert(out->end(), name, name + h.n_namesz);
  while (out->size() % 4) out->push_back(0);
  out->insert(out->end(), desc.begin(), desc.end());
  while (out->size() % 4) out->push_back(0);
}

TEST(BuildIdHex, FindsTheGnuNoteAmongOthers) {
  std::vector<unsigned char> notes;
  AddNote(&notes, NT_GNU_ABI_TAG, "GNU", {0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0});
  AddNote(&notes, NT_GNU_BUILD_ID, "XYZ", {0xff, 0xff});  // another vendor's note of that type
  AddNote(&notes, NT_GNU_BUILD_ID, "GNU", {0xde, 0xad, 0xbe, 0xef, 0x01});
  char hex[64];
  EXPECT_EQ(BuildIdHex(notes.data(), notes.size(), hex, sizeof(hex)), 10u);
  EXPECT_STREQ(hex, "deadbeef01");
  EXPECT_EQ(BuildIdHex(notes.data(), notes.size(), hex, 10), 0u);  // no room for the NUL
  EXPECT_EQ(BuildIdHex(notes.data(), notes.size() - 4, hex, sizeof(hex)), 0u);  // cut short
}

TEST(BuildIdHex, NoneWithoutTheNote) {
  std::vector<unsigned char> notes;
  AddNote(&notes, NT_GNU_ABI_TAG, "GNU", {0, 0, 0, 0});
  char hex[64];
  EXPECT_EQ(BuildIdHex(notes.data(), notes.size(), hex, sizeof(hex)), 0u);
  EXPECT_EQ(BuildIdHex(notes.data(), 3, hex, sizeof(hex)), 0u);
}

// This test binary's own build id, from its PT_NOTE segments (the linker writes one by default).
int OwnBuildId(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::string*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_NOTE) continue;
    char hex[129];
    size_t n = BuildIdHex(reinterpret_cast<const unsigned char*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
                          info->dlpi_phdr[i].p_memsz, hex, sizeof(hex));
    if (n > 0) *out = std::string(hex, n);
  }
  return 1;  // the executable comes first
}

TEST(BuildIdHex, ReadsTheRunningExecutable) {
  std::string id;
  dl_iterate_phdr(OwnBuildId, &id);
  EXPECT_EQ(id.size(), 40u) << id;  // SHA-1, GNU ld's and lld's default
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
}

}  // namespace
}  // namespace trainprof::inject
