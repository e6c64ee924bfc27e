#include "elf_library.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace trainprof::launcher {
namespace {

// This build's class, byte order and machine: what the loader of the programs it runs accepts.
constexpr unsigned char kClass = __ELF_NATIVE_CLASS == 64 ? ELFCLASS64 : ELFCLASS32;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char kData = ELFDATA2LSB;
#else
constexpr unsigned char kData = ELFDATA2MSB;
#endif
#if defined(__x86_64__)
constexpr uint16_t kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr uint16_t kMachine = EM_PPC64;
#elif defined(__riscv)
constexpr uint16_t kMachine = EM_RISCV;
#else
#error "trainprof: add this architecture's e_machine"
#endif

// A machine's name for the message (the common ones; others by number only).
const char* MachineName(uint16_t m) {
  switch (m) {
    case EM_386: return "x86 (32-bit)";
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM (32-bit)";
    case EM_PPC64: return "POWER (64-bit)";
    case EM_RISCV: return "RISC-V";
    case EM_S390: return "s390";
    default: return "another architecture";
  }
}

// Reads exactly `n` bytes at `off`; false if the file ends first or the read fails.
bool ReadAt(int fd, void* out, size_t n, off_t off) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = pread(fd, static_cast<char*>(out) + done, n - done, off + static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

// Whether the dynamic section of the ELF at fd says DF_1_PIE (a PIE executable: glibc refuses to
// load one as a library). Malformed program headers: false (the loader says the rest).
bool IsPie(int fd, const ElfW(Ehdr)& eh) {
  if (eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum == 0 || eh.e_phnum > 4096) return false;
  std::vector<ElfW(Phdr)> ph(eh.e_phnum);
  if (!ReadAt(fd, ph.data(), ph.size() * sizeof(ElfW(Phdr)), static_cast<off_t>(eh.e_phoff))) return false;
  for (const ElfW(Phdr)& p : ph) {
    if (p.p_type != PT_DYNAMIC || p.p_filesz > (1u << 20)) continue;
    std::vector<ElfW(Dyn)> dyn(p.p_filesz / sizeof(ElfW(Dyn)));
    if (!ReadAt(fd, dyn.data(), dyn.size() * sizeof(ElfW(Dyn)), static_cast<off_t>(p.p_offset))) return false;
    for (const ElfW(Dyn)& d : dyn) {
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_PIE) != 0) return true;
    }
  }
  return false;
}

}  // namespace

std::string SharedLibraryProblem(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return std::string("cannot be read (") + strerror(errno) + ")";
  struct Close {
    int fd;
    ~Close() { close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0) return std::string("cannot be read (") + strerror(errno) + ")";
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  unsigned char ident[EI_NIDENT] = {};
  ssize_t n;
  do {
    n = pread(fd, ident, sizeof ident, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return std::string("cannot be read (") + strerror(errno) + ")";
  if (n < SELFMAG || std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    std::string start;
    for (ssize_t i = 0; i < n && i < 8; ++i) start += ident[i] >= 0x20 && ident[i] < 0x7f ? static_cast<char>(ident[i]) : '.';
    return n == 0 ? "is not an ELF file (it is empty)" : "is not an ELF file (it starts with '" + start + "')";
  }
  const int bits = __ELF_NATIVE_CLASS;
  if (ident[EI_CLASS] != kClass) {
    return std::string("is a ") + (ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : ident[EI_CLASS] == ELFCLASS64 ? "64-bit" : "malformed") +
           " ELF file; this trainprof needs a " + std::to_string(bits) + "-bit shared library";
  }
  if (ident[EI_DATA] != kData) return "is an ELF file of the other byte order than this machine's";
  ElfW(Ehdr) eh;
  if (!ReadAt(fd, &eh, sizeof eh, 0)) return "is cut short: its ELF header is incomplete";
  if (eh.e_machine != kMachine) {
    return std::string("is built for ") + MachineName(eh.e_machine) + " (e_machine " + std::to_string(eh.e_machine) +
           "), not for " + MachineName(kMachine) + ", which this trainprof runs on";
  }
  if (eh.e_type == ET_EXEC) return "is an executable (ELF type ET_EXEC), not a shared library";
  if (eh.e_type != ET_DYN) return "is not a shared library (ELF type " + std::to_string(eh.e_type) + ", not ET_DYN)";
  if (IsPie(fd, eh)) return "is a position-independent executable, not a shared library";
  return "";
}

}  // namespace trainprof::launcher
