#include "trace_file.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "capture_logic.h"
#include "clock.h"
#include "trace_clock.h"
#include "config.h"
#include "fd_floor.h"
#include "process_identity.h"
#include "python_options.h"
#include "stacks/sample_settings.h"
#include "stacks/sampler.h"
#include "stacks/stacks.h"
#include "trainprof/path_walk.h"

#ifndef TRAINPROF_VERSION_STRING
#define TRAINPROF_VERSION_STRING "0.0.0"
#endif

namespace trainprof::inject {
namespace {

using format::FileHeader;
using format::MetaKey;

// The file grows by its own size (at least one chunk, at most kMaxGrowBytes): small processes
// such as idle DataLoader workers keep small files, busy ones extend rarely.
constexpr uint64_t kMaxGrowBytes = 8u << 20;
const char* kRankVars[] = {"RANK",        "LOCAL_RANK",          "WORLD_SIZE",
                           "LOCAL_WORLD_SIZE", "GROUP_RANK",     "OMPI_COMM_WORLD_RANK",
                           "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK",
                           "SLURM_PROCID", "SLURM_LOCALID",      "SLURM_NTASKS"};

// Appends one metadata TLV; returns false when the header region is full.
bool PutMeta(uint8_t* region, uint32_t cap, uint32_t* off, MetaKey key, const void* data, uint32_t len) {
  if (*off + 6 + len + 2 > cap) return false;
  uint16_t k = static_cast<uint16_t>(key);
  memcpy(region + *off, &k, 2);
  memcpy(region + *off + 2, &len, 4);
  memcpy(region + *off + 6, data, len);
  *off += 6 + len;
  return true;
}

// If `name` in the directory `dir_fd` is an earlier image of this process (same pid, namespace,
// start time and boot, and it ended in exec): the image index that follows it; else 0.
uint32_t NextImageAfter(int dir_fd, const char* name, int pid, const ProcessIdentity& self) {
  int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return 0;
  unsigned char raw[sizeof(FileHeader)];
  ssize_t n = pread(fd, raw, sizeof(raw), 0);
  close(fd);
  if (n != static_cast<ssize_t>(sizeof(raw)) || memcmp(raw, format::kFileMagic, sizeof(format::kFileMagic)) != 0) return 0;
  auto field = [&](size_t off, void* out, size_t len) { memcpy(out, raw + off, len); };
  int32_t other_pid = 0;
  uint64_t ns = 0, ticks = 0;
  uint32_t end_kind = 0, index = 0;
  uint8_t boot[16];
  field(offsetof(FileHeader, pid), &other_pid, 4);
  field(offsetof(FileHeader, pid_namespace), &ns, 8);
  field(offsetof(FileHeader, start_ticks), &ticks, 8);
  field(offsetof(FileHeader, boot_id), boot, 16);
  field(offsetof(FileHeader, end_kind), &end_kind, 4);
  field(offsetof(FileHeader, image_index), &index, 4);
  if (other_pid != pid || ns != self.pid_namespace || ticks != self.start_ticks ||
      memcmp(boot, self.boot_id, 16) != 0 || end_kind != static_cast<uint32_t>(format::EndKind::kExec)) {
    return 0;
  }
  return index + 1;
}

// The CPython options ("-I", "-E -S") that keep the Python shim out of this interpreter, into out
// (kPythonShimBlockersCap bytes); 0 when the shim is off anyway (--trace=-python), when this is no
// CPython interpreter (named python*, exporting Py_BytesMain or Py_Main) or when none was given.
size_t PythonShimOff(const Config& cfg, const char* exe, const char* cmdline, size_t cmdline_len, char* out) {
  if (!cfg.trace_python || cfg.python_dir == nullptr || !LooksLikePythonExecutable(exe)) return 0;
  if (dlsym(RTLD_DEFAULT, "Py_BytesMain") == nullptr && dlsym(RTLD_DEFAULT, "Py_Main") == nullptr) return 0;
  return PythonShimBlockers(cmdline, cmdline_len, out, kPythonShimBlockersCap);
}

}  // namespace

TraceFile* TraceFile::Open(const Config& cfg, uint32_t flags, char* err, size_t err_size) {
  auto fail = [&](const char* what, int e) -> TraceFile* {
    snprintf(err, err_size, "%s: %s", what, strerror(e));
    return nullptr;
  };
  const mode_t file_mode = 0666 & ~cfg.umask;
  // Walked component by component under the symlink rule, missing directories made with exactly
  // 0777 & ~umask (path_walk.h); the files are created relative to the directory reached, so a
  // link planted at its name since the launcher checked it is not written through.
  int dir_fd = -1;
  char why[512];
  if (int e = pathwalk::WalkPath(cfg.output_dir, pathwalk::Want::kDirectory, true, 0777 & ~cfg.umask, &dir_fd,
                                 nullptr, why, sizeof(why));
      e != 0) {
    if (why[0] != '\0') {
      snprintf(err, err_size, "cannot create the output directory %s: %s", cfg.output_dir, why);
      return nullptr;
    }
    return fail("cannot create the output directory", e);
  }

  const int pid = getpid();
  const ProcessIdentity self = ReadProcessIdentity();
  static char path[4096];  // static as buf below: off a small forking thread's stack
  int fd = -1;
  // The first free name; the names taken belong to earlier images of this process (exec) or to
  // other processes with this pid (reused, or in another pid namespace): never overwritten.
  // Our image index is one past the last earlier image of this very process (same identity,
  // ended in exec); without an identity (no /proc), the name's number, as before.
  uint32_t name_index = 0;
  uint32_t image = 0;
  for (; name_index < 1000; ++name_index) {
    int len = name_index == 0 ? snprintf(path, sizeof(path), "%s/pid-%d.trace", cfg.output_dir, pid)
                              : snprintf(path, sizeof(path), "%s/pid-%d.%u.trace", cfg.output_dir, pid, name_index);
    if (len < 0 || static_cast<size_t>(len) >= sizeof(path)) {
      snprintf(err, err_size, "the trace file path %s/pid-%d.trace is too long (over %zu bytes, PATH_MAX)",
               cfg.output_dir, pid, sizeof(path) - 1);
      return nullptr;
    }
    fd = openat(dir_fd, strrchr(path, '/') + 1, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file_mode);
    if (fd >= 0 || errno != EEXIST) break;
    if (self.start_ticks == 0 || self.pid_namespace == 0) {
      image = name_index + 1;
    } else if (uint32_t next = NextImageAfter(dir_fd, strrchr(path, '/') + 1, pid, self); next > image) {
      image = next;
    }
  }
  close(dir_fd);
  if (fd < 0) return fail(path, errno);
  // Exactly 0666 & ~TRAINPROF_UMASK: the program's own umask is not ours to use (or to change: it
  // is process-wide, and other threads may be creating files).
  fchmod(fd, file_mode);

  // Its own pages, not the allocator's: a fork child opens its trace from the fork's atfork
  // handler, and fork() may be called from a signal handler (async-signal-safe: no malloc).
  void* tf_pages = mmap(nullptr, sizeof(TraceFile), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  auto* tf = tf_pages == MAP_FAILED ? nullptr : new (tf_pages) TraceFile();
  auto discard = [&]() {
    tf->~TraceFile();
    munmap(tf_pages, sizeof(TraceFile));
  };
  if (tf == nullptr) {
    close(fd);
    return fail("out of memory", ENOMEM);
  }
  fd = MoveAboveFloor(fd);
  tf->fd_ = fd;
  struct stat st;
  if (fstat(fd, &st) == 0) {
    tf->dev_ = st.st_dev;
    tf->ino_ = st.st_ino;
  }
  memcpy(tf->path_, path, sizeof(path));
  if (!tf->GrowLocked(format::kHeaderRegionSize)) {
    int e = errno;
    close(fd);
    unlink(path);
    discard();
    return fail("cannot allocate the trace file", e);
  }
  void* m = mmap(nullptr, format::kHeaderRegionSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    int e = errno;
    close(fd);
    discard();
    return fail("cannot map the trace file", e);
  }
  auto* region = static_cast<uint8_t*>(m);
  auto* h = new (m) FileHeader();
  // A sampling process may write SAMPLE_THREAD_LOST and SAMPLE_PAUSED (version 5).
  h->version = SampleHz() > 0        ? format::kFormatVersion
               : g_trace_clock_tsc ? format::kTscFileVersion
                                   : format::kMonotonicFileVersion;
  h->header_region_size = format::kHeaderRegionSize;
  h->chunk_size = tf->chunk_size_;
  h->flags = flags | (g_trace_clock_tsc ? format::kFlagTscClock : 0u);
  h->pid = pid;
  h->ppid = getppid();
  h->start_realtime_ns = RealtimeNs();
  if (g_trace_clock_tsc) {
    const ClockPair start = TakeClockPair();
    h->start_monotonic_ns = start.ns;
    h->start_tsc = start.ticks;
    h->tsc_khz = TscKhz();
  } else {
    h->start_monotonic_ns = NowNs();
  }
  h->image_index = image;
  h->pid_namespace = self.pid_namespace;
  h->start_ticks = self.start_ticks;
  memcpy(h->boot_id, self.boot_id, sizeof(h->boot_id));
  ParseRunId(cfg.run_id, h->run_id);

  // Metadata TLVs after the fixed header.
  uint32_t off = sizeof(FileHeader);
  const uint32_t cap = format::kHeaderRegionSize;
  h->metadata_offset = off;
  // Static like cmdline below (one Open at a time per process): off the caller's stack, which may
  // be a small thread's that forked (the child opens its trace on it).
  static char buf[8192];
  if (gethostname(buf, sizeof(buf)) == 0) {
    buf[sizeof(buf) - 1] = '\0';
    PutMeta(region, cap, &off, MetaKey::kHost, buf, static_cast<uint32_t>(strlen(buf)));
  }
  PutMeta(region, cap, &off, MetaKey::kVersion, TRAINPROF_VERSION_STRING,
          static_cast<uint32_t>(strlen(TRAINPROF_VERSION_STRING)));
  static char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  exe[n > 0 ? n : 0] = '\0';
  if (n > 0) PutMeta(region, cap, &off, MetaKey::kExecutable, exe, static_cast<uint32_t>(n));
  if (getcwd(buf, sizeof(buf)) != nullptr) {
    PutMeta(region, cap, &off, MetaKey::kWorkingDir, buf, static_cast<uint32_t>(strlen(buf)));
  }
  for (const char* var : kRankVars) {
    const char* v = getenv(var);
    if (v == nullptr) continue;
    int len = snprintf(buf, sizeof(buf), "%s=%s", var, v);
    if (len > 0 && static_cast<size_t>(len) < sizeof(buf)) {
      PutMeta(region, cap, &off, MetaKey::kEnv, buf, static_cast<uint32_t>(len));
    }
  }
  const CaptureSettings capture = ParseCaptureSettings(cfg.capture_range, cfg.capture_range_end,
                                                       cfg.capture_window_start_ns, cfg.capture_window_end_ns);
  if (capture.configured()) {
    uint32_t len = FormatCaptureMetadata(capture, buf, sizeof(buf));
    if (len > 0) PutMeta(region, cap, &off, MetaKey::kCapture, buf, len);
  }
  // StartStacks and PrepareSampling ran before Open.
  if (const BacktraceSettings& bt = Backtraces(); bt.any() || SampleHz() > 0) {
    uint32_t len = FormatStacksMetadata(bt, buf, sizeof(buf));
    if (len > 0 && SampleHz() > 0) {
      buf[len] = '\0';
      uint32_t more = FormatSampleMetadata(SampleHz(), SampleSignalNumber(), buf + len + 1, sizeof(buf) - len - 1);
      if (more > 0) len += 1 + more;
    }
    if (len > 0) PutMeta(region, cap, &off, MetaKey::kStacks, buf, len);
  }
  static char cmdline[format::kHeaderRegionSize];
  size_t cl = ReadSmallFile("/proc/self/cmdline", cmdline, sizeof(cmdline));
  static char shim_off[kPythonShimBlockersCap];
  if (size_t len = PythonShimOff(cfg, exe, cmdline, cl, shim_off); len > 0) {
    PutMeta(region, cap, &off, MetaKey::kPythonShimOff, shim_off, static_cast<uint32_t>(len));
  }
  // Command line last: it is the one that may not fit; cut it to the room left (~15 KiB).
  while (cl > 0 && cmdline[cl - 1] == '\0') --cl;
  if (cl > cap - off - 8) cl = cap - off - 8;
  PutMeta(region, cap, &off, MetaKey::kCommandLine, cmdline, static_cast<uint32_t>(cl));
  h->metadata_size = off - h->metadata_offset;
  // The magic goes last: a reader never sees a half-written header as valid.
  std::atomic_thread_fence(std::memory_order_release);
  memcpy(h->magic, format::kFileMagic, sizeof(h->magic));
  tf->header_ = h;
  return tf;
}

bool TraceFile::FirstInRunToReportFailure(const Config& cfg) {
  if (cfg.output_dir == nullptr || cfg.root_pid <= 0) return true;
  char path[4096];
  if (snprintf(path, sizeof(path), "%s/pid-%d.trace", cfg.output_dir, cfg.root_pid) >= static_cast<int>(sizeof(path))) {
    return true;
  }
  // O_NONBLOCK: a FIFO or device planted at the name must not block the program here.
  int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return true;
  struct stat st;
  // Only a file that already holds a whole header region: mapping it allocates nothing, so this
  // works on a full disk too, and never extends a file (a store beyond its end would be a SIGBUS).
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < static_cast<off_t>(format::kHeaderRegionSize)) {
    close(fd);
    return true;
  }
  void* m = mmap(nullptr, sizeof(FileHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return true;
  auto* h = static_cast<FileHeader*>(m);
  bool first = true;
  // The root's file of this run: an earlier run's file of the same name is not (run id).
  uint8_t run[16];
  const bool have_run = ParseRunId(cfg.run_id, run);
  if (memcmp(h->magic, format::kFileMagic, sizeof(h->magic)) == 0 && h->pid == cfg.root_pid &&
      (!have_run || memcmp(h->run_id, run, sizeof(run)) == 0)) {
    uint32_t old = __atomic_fetch_or(&h->flags, format::kFlagRunFailureSaid, __ATOMIC_ACQ_REL);
    first = (old & format::kFlagRunFailureSaid) == 0;
  }
  munmap(m, sizeof(FileHeader));
  return first;
}

// Is fd_ still our file? A program may close every fd above 2 and open its own files: the number
// then names someone else's file, which we must never write. Reopen ours by path, or give up.
bool TraceFile::CheckFdLocked() {
  struct stat st;
  if (fstat(fd_, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) return true;
  int fd = open(path_, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);  // a FIFO swapped in: no wait
  if (fd < 0) return false;
  if (fstat(fd, &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) {
    close(fd);
    errno = ESTALE;
    return false;
  }
  fd_ = MoveAboveFloor(fd);  // the old number is the program's now: not ours to close
  return true;
}

bool TraceFile::GrowLocked(uint64_t min_size) {
  if (file_size_ >= min_size) return true;
  if (file_size_ != 0 && !CheckFdLocked()) return false;
  uint64_t step = file_size_ < chunk_size_ ? chunk_size_ : (file_size_ > kMaxGrowBytes ? kMaxGrowBytes : file_size_);
  uint64_t want = min_size > file_size_ + step ? min_size : file_size_ + step;
  if (file_size_ == 0) want = min_size;  // the header region alone
  // Stay under RLIMIT_FSIZE: going past it would raise SIGXFSZ in the program.
  rlimit lim;
  if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    if (min_size > lim.rlim_cur) {
      errno = EFBIG;
      return false;
    }
    if (want > lim.rlim_cur) want = lim.rlim_cur;
  }
  // Leave room on the file system: a runaway trace must not fill the disk the training run (and
  // everyone else) writes to. Stop below min(1 GiB, 5% of the file system) free.
  struct statvfs vfs;
  if (fstatvfs(fd_, &vfs) == 0 && vfs.f_blocks > 0) {
    uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    uint64_t reserve = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize / 20;
    if (reserve > (1ull << 30)) reserve = 1ull << 30;
    if (free_bytes < reserve + (want - file_size_)) {
      if (free_bytes < reserve + (min_size - file_size_)) {
        errno = ENOSPC;
        return false;
      }
      want = min_size;
    }
  }
  int e = posix_fallocate(fd_, static_cast<off_t>(file_size_), static_cast<off_t>(want - file_size_));
  if (e != 0 && want > min_size) {
    e = posix_fallocate(fd_, static_cast<off_t>(file_size_), static_cast<off_t>(min_size - file_size_));
    want = min_size;
  }
  if (e != 0) {
    errno = e;
    return false;
  }
  file_size_ = want;
  return true;
}

format::ChunkHeader* TraceFile::ClaimChunk(uint32_t tid, uint32_t thread_index, uint32_t seq,
                                           uint64_t base_ns, uint64_t* offset_out) {
  pthread_mutex_lock(&mu_);
  uint64_t offset = static_cast<uint64_t>(format::kHeaderRegionSize) +
                    static_cast<uint64_t>(next_slot_) * chunk_size_;
  if (!CheckFdLocked() || !GrowLocked(offset + chunk_size_)) {
    pthread_mutex_unlock(&mu_);
    return nullptr;
  }
  void* m = mmap(nullptr, chunk_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(offset));
  if (m == MAP_FAILED) {
    pthread_mutex_unlock(&mu_);
    return nullptr;
  }
  ++next_slot_;
  header_->chunks_claimed.store(next_slot_, std::memory_order_relaxed);
  pthread_mutex_unlock(&mu_);
  *offset_out = offset;
  auto* c = new (m) format::ChunkHeader();
  c->tid = tid;
  c->thread_index = thread_index;
  c->thread_seq = seq;
  c->base_ns = base_ns;
  if (g_trace_clock_tsc) {
    const ClockPair sync = TakeClockPair();
    c->sync_ticks = sync.ticks;
    c->sync_ns = sync.ns;
  }
  c->committed.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  c->magic = format::kChunkMagic;
  return c;
}

void TraceFile::ReleaseChunk(format::ChunkHeader* chunk) {
  if (chunk != nullptr) munmap(chunk, chunk_size_);
}

void TraceFile::ReleaseChunkOfExitedThread(format::ChunkHeader* chunk, uint64_t offset) {
  if (chunk == nullptr) return;
  const uint64_t page = 4096;
  uint64_t used = sizeof(format::ChunkHeader) + chunk->committed.load(std::memory_order_acquire);
  uint64_t keep = (used + page - 1) / page * page;
  munmap(chunk, chunk_size_);
  if (keep >= chunk_size_) return;
  pthread_mutex_lock(&mu_);
  if (CheckFdLocked()) {
    // Best effort: file systems without hole punching keep the zeros.
    fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset + keep),
              static_cast<off_t>(chunk_size_ - keep));
  }
  pthread_mutex_unlock(&mu_);
}

void TraceFile::SetEnd(format::EndKind kind, int32_t code, uint64_t now_ns, bool overwrite) {
  uint32_t none = static_cast<uint32_t>(format::EndKind::kNone);
  if (overwrite) {
    header_->end_code.store(code, std::memory_order_relaxed);
    header_->end_monotonic_ns.store(now_ns, std::memory_order_relaxed);
    header_->end_kind.store(static_cast<uint32_t>(kind), std::memory_order_release);
    return;
  }
  if (header_->end_kind.load(std::memory_order_relaxed) != none) return;
  header_->end_code.store(code, std::memory_order_relaxed);
  header_->end_monotonic_ns.store(now_ns, std::memory_order_relaxed);
  header_->end_kind.compare_exchange_strong(none, static_cast<uint32_t>(kind), std::memory_order_release);
}

}  // namespace trainprof::inject
