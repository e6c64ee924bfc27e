#include "trace_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <set>
#include <tuple>

#include "trainprof/trace_format.h"

namespace trainprof::launcher {

namespace {

using format::FileHeader;

// The header is read and patched as bytes at offsetof(...): FileHeader holds atomics, which are
// not meant to be memcpy'd into. The format is little-endian, and so is every host we build for.
static_assert(std::endian::native == std::endian::little, "trace headers are little-endian");

struct HeaderView {
  bool valid = false;
  int32_t pid = 0;
  uint32_t image_index = 0;
  uint64_t end_monotonic_ns = 0;
  uint64_t pid_namespace = 0;
  uint64_t start_ticks = 0;
  std::string run_id;  ///< 32 hex digits, "" if none
};

template <typename T>
T Field(const unsigned char* raw, size_t offset) {
  T v;
  memcpy(&v, raw + offset, sizeof(v));
  return v;
}

HeaderView ReadHeader(int fd) {
  HeaderView h;
  unsigned char raw[sizeof(FileHeader)];
  if (pread(fd, raw, sizeof(raw), 0) != static_cast<ssize_t>(sizeof(raw))) return h;
  if (memcmp(raw, format::kFileMagic, sizeof(format::kFileMagic)) != 0) return h;
  h.valid = true;
  h.pid = Field<int32_t>(raw, offsetof(FileHeader, pid));
  h.image_index = Field<uint32_t>(raw, offsetof(FileHeader, image_index));
  h.end_monotonic_ns = Field<uint64_t>(raw, offsetof(FileHeader, end_monotonic_ns));
  h.pid_namespace = Field<uint64_t>(raw, offsetof(FileHeader, pid_namespace));
  h.start_ticks = Field<uint64_t>(raw, offsetof(FileHeader, start_ticks));
  static const char kHex[] = "0123456789abcdef";
  const unsigned char* id = raw + offsetof(FileHeader, run_id);
  bool any = false;
  for (size_t i = 0; i < sizeof(FileHeader::run_id); ++i) {
    any = any || id[i] != 0;
    h.run_id += kHex[id[i] >> 4];
    h.run_id += kHex[id[i] & 15];
  }
  if (!any) h.run_id.clear();
  return h;
}

uint64_t OwnPidNamespace() {
  struct stat st;
  return stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Calls fn(name) for each "*.trace" entry of dir that is not a directory.
template <typename Fn>
void ForEachTraceFile(const std::string& dir, Fn fn) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    std::string_view name = e->d_name;
    if (!EndsWith(name, ".trace") || e->d_type == DT_DIR) continue;
    fn(std::string(name));
  }
  closedir(d);
}

}  // namespace

const char* FileKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

int OpenRegularFile(const std::string& path, int flags, mode_t* kind) {
  *kind = 0;
  // lstat first: a FIFO or device is never opened (opening one may block, or act on a device);
  // the flags and fstat cover one swapped in after the lstat.
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return -1;
  if (!S_ISREG(st.st_mode)) {
    *kind = st.st_mode;
    errno = EINVAL;
    return -1;
  }
  int fd = open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *kind = st.st_mode;
    close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

TraceDirSummary SummarizeTraceDir(const std::string& dir, const std::string& run_id) {
  TraceDirSummary s;
  std::set<std::tuple<uint64_t, int32_t, uint64_t>> processes;  // (pid namespace, pid, start)
  ForEachTraceFile(dir, [&](const std::string& name) {
    std::string path = dir + "/" + name;
    mode_t kind;
    int fd = OpenRegularFile(path, O_RDONLY, &kind);  // a planted symlink is not ours
    if (fd < 0) {
      // A FIFO, socket or device at a trace name (planted, or made by the command): skipped.
      if (kind != 0 && !S_ISLNK(kind)) s.skipped.push_back(path + ": " + FileKind(kind) + ", not a trace file: skipped");
      return;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      HeaderView h = ReadHeader(fd);
      if (!run_id.empty() && (!h.valid || h.run_id != run_id)) {
        ++s.other_files;
      } else {
        ++s.files;
        // Space on disk: chunks of exited threads have their unused tails punched out.
        uint64_t on_disk = static_cast<uint64_t>(st.st_blocks) * 512;
        s.bytes += std::min(on_disk, static_cast<uint64_t>(st.st_size));
        if (h.valid && h.pid > 0) processes.insert({h.pid_namespace, h.pid, h.start_ticks});
      }
    }
    close(fd);
  });
  s.processes = processes.size();
  return s;
}

bool RecordRootEnd(const std::string& dir, pid_t pid, int wait_status, uint64_t reaped_ns, std::string* error,
                   const std::string& run_id) {
  const uint64_t own_ns = run_id.empty() ? 0 : OwnPidNamespace();
  auto ours = [&](const HeaderView& h) {
    return h.valid && h.pid == pid && (run_id.empty() || h.run_id == run_id) &&
           (own_ns == 0 || h.pid_namespace == 0 || h.pid_namespace == own_ns);
  };
  std::string prefix = "pid-" + std::to_string(pid);
  std::string best;
  uint32_t best_image = 0;
  ForEachTraceFile(dir, [&](const std::string& name) {
    if (name.compare(0, prefix.size(), prefix) != 0) return;  // the header decides below
    mode_t kind;
    int fd = OpenRegularFile(dir + "/" + name, O_RDONLY, &kind);
    if (fd < 0) return;
    HeaderView h = ReadHeader(fd);
    close(fd);
    if (!ours(h)) return;  // e.g. pid-1234.trace when looking for pid 123
    if (best.empty() || h.image_index > best_image) {
      best = name;
      best_image = h.image_index;
    }
  });
  if (best.empty()) return false;

  std::string path = dir + "/" + best;
  mode_t kind;
  int fd = OpenRegularFile(path, O_RDWR, &kind);
  if (fd < 0) {
    *error = path + ": " + strerror(errno);
    return false;
  }
  HeaderView h = ReadHeader(fd);  // again, on the descriptor we write through
  bool ok = ours(h);
  if (ok) {
    uint32_t kind;
    int32_t code;
    if (WIFSIGNALED(wait_status)) {
      kind = static_cast<uint32_t>(format::EndKind::kSignal);
      code = WTERMSIG(wait_status);
    } else {
      kind = static_cast<uint32_t>(format::EndKind::kExit);
      code = WEXITSTATUS(wait_status);
    }
    unsigned char end[8];
    static_assert(offsetof(FileHeader, end_code) == format::kEndKindOffset + 4);
    memcpy(end, &kind, 4);
    memcpy(end + 4, &code, 4);
    ok = pwrite(fd, end, sizeof(end), format::kEndKindOffset) == static_cast<ssize_t>(sizeof(end));
    if (ok && h.end_monotonic_ns == 0) {
      ok = pwrite(fd, &reaped_ns, sizeof(reaped_ns), offsetof(FileHeader, end_monotonic_ns)) ==
           static_cast<ssize_t>(sizeof(reaped_ns));
    }
    if (!ok) *error = path + ": cannot record the end status: " + strerror(errno);
  }
  close(fd);
  return ok;
}

std::string TracePathProblem(const std::string& dir) {
  // The longest name the library makes: pid-<10 digits>.<3 digits>.trace.
  constexpr size_t kLongestName = sizeof("/pid-4294967295.999.trace") - 1;
  if (dir.size() + kLongestName < PATH_MAX) return "";
  return "output directory " + dir.substr(0, 40) + "... (" + std::to_string(dir.size()) +
         " bytes) is too long for trace files: its pid-<PID>.trace paths would pass PATH_MAX (" +
         std::to_string(PATH_MAX) + " bytes)";
}

std::string NoRoomForTraces(const std::string& dir) {
  rlimit lim;
  if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < format::kHeaderRegionSize) {
    return "the file size limit (ulimit -f, RLIMIT_FSIZE) is " + FormatBytes(lim.rlim_cur) + ", under the " +
           FormatBytes(format::kHeaderRegionSize) + " a trace file needs";
  }
  struct statvfs vfs;
  if (statvfs(dir.c_str(), &vfs) == 0 && vfs.f_blocks > 0) {
    uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    uint64_t reserve = std::min<uint64_t>(static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize / 20, 1ull << 30);
    if (free_bytes < reserve + format::kHeaderRegionSize) {
      return "its file system is full (" + FormatBytes(free_bytes) + " free; trainprof stops writing traces below " +
             FormatBytes(reserve) + " free, so the program keeps room)";
    }
  }
  return "";
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes < 1000) return std::to_string(bytes) + " B";
  const char* units[] = {"kB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 999.95 && u < 3) {
    v /= 1000.0;
    ++u;
  }
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
  return buf;
}

std::string ShellQuote(std::string_view s) {
  bool plain = !s.empty();
  for (char c : s) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                std::string_view("/._-+:,@%=").find(c) != std::string_view::npos;
    plain = plain && safe;
  }
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string SummaryLine(const std::string& dir, const TraceDirSummary& s, bool next) {
  return std::to_string(s.files) + (s.files == 1 ? " trace file, " : " trace files, ") +
         std::to_string(s.processes) + (s.processes == 1 ? " process, " : " processes, ") +
         FormatBytes(s.bytes) + " in " + dir +
         (s.other_files == 0 ? ""
                             : " (which also holds " + std::to_string(s.other_files) +
                                   (s.other_files == 1 ? " trace file of another run)" : " trace files of other runs)")) +
         (next ? " \u2014 next: trainprof report " + ShellQuote(dir) : "");
}

}  // namespace trainprof::launcher
