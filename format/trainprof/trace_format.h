// trainprof trace format, version 3: the one contract between the writer (inject/) and
// the reader (collector/). Documented for people in docs/trace-format.md; change both together.
//
// A trace file holds one process image, named pid-<PID>.trace, or pid-<PID>.<N>.trace with the
// first free N when that name is taken: by an earlier image of the same process (exec), or by
// another process with the same pid (pid reuse, another pid namespace). The name only keeps files
// apart; the header's identity (pid_namespace, start_ticks, boot_id, image_index) says which
// process an image belongs to. All integers are little-endian.
//
//   offset 0                     kHeaderRegionSize               + k * chunk_size
//   ┌──────────────────────────────┬───────────────────────┬───────────────────────┬──
//   │ FileHeader | metadata TLVs   │ chunk 0 (one thread)  │ chunk 1 (any thread)  │ ...
//   └──────────────────────────────┴───────────────────────┴───────────────────────┴──
//
// Each chunk belongs to one thread (single writer) and starts with a ChunkHeader; records follow
// back to back. The writer appends a record, then publishes it with one release store of
// ChunkHeader::committed, so a reader (or a crash) sees only whole records. A thread whose chunk
// is full claims the next free chunk slot; its chunks are ordered by ChunkHeader::thread_seq.
//
// Records: one tag byte, then fields as unsigned LEB128 varints ("v"), signed ones zigzag-encoded
// ("z"), in the order the schema lists them (records.def). Timed records carry "dt": time since the previous
// timed record of the same chunk (the first one: since ChunkHeader::base_ns), on the file's
// recording clock: CLOCK_MONOTONIC nanoseconds, or with kFlagTscClock TSC ticks, which the reader
// converts to CLOCK_MONOTONIC ns through the calibration pairs (FileHeader::start_tsc with
// start_monotonic_ns, ChunkHeader::sync_*, ChunkHeader::last_*). See FileHeader for the
// CLOCK_REALTIME pair.
//
// GPU activity records (CUPTI) are not in the dt chain: CUPTI hands them over in buffers, later
// and not in time order. They carry their own start and end ("zs", "ze"): zigzag nanoseconds
// relative to ChunkHeader::base_ns of the chunk they are in (kFlagTscClock: to ChunkHeader::sync_ns;
// GPU times are always CLOCK_MONOTONIC ns), written exactly as CUPTI reported them (a zero or reversed timestamp stays visible to the reader, which counts and skips it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace trainprof::format {

inline constexpr char kFileMagic[8] = {'T', 'R', 'P', 'R', 'O', 'F', '\r', '\n'};
/// 2: CUDA records (tags 48..63); 3: stacks and samples (64..71); 4: the TSC recording clock
/// (kFlagTscClock, FileHeader::tsc_khz and start_tsc, ChunkHeader::sync_* and last_*), so that a
/// reader from before it refuses a file whose times are ticks rather than reading them as ns.
/// 5: SAMPLE_THREAD_LOST and SAMPLE_PAUSED (68, 69), what `--sample` could not sample: the
/// version of every file of a process that samples, so that a reader from before it refuses such
/// a file rather than skip chunks at the unknown tags. A writer on CLOCK_MONOTONIC that does not
/// sample still writes kMonotonicFileVersion (its files read everywhere), one on the TSC clock
/// that does not sample kTscFileVersion.
inline constexpr uint32_t kFormatVersion = 5;
/// The version of a file on the TSC clock from a process that does not sample.
inline constexpr uint32_t kTscFileVersion = 4;
/// The version of a file timed by CLOCK_MONOTONIC (no TSC fields used): what every reader of
/// version 3 reads.
inline constexpr uint32_t kMonotonicFileVersion = 3;
/// Oldest format version the reader accepts (the reader owns compatibility).
inline constexpr uint32_t kMinReadableVersion = 1;  // v1 files have no CUDA records
inline constexpr uint32_t kHeaderRegionSize = 16 * 1024;  // bytes; page aligned
inline constexpr uint32_t kDefaultChunkSize = 64 * 1024;  // bytes; page aligned
inline constexpr uint32_t kChunkMagic = 0x4B435054;       // "TPCK"
/// Longest string the writer stores (bytes); longer names are cut and counted as misuse.
inline constexpr uint32_t kMaxStringBytes = 4096;

/// How a process image ended, FileHeader::end_kind and PROCESS_END / CHILD_EXIT records.
enum class EndKind : uint32_t {
  kNone = 0,        ///< no end recorded: killed, crashed, or still running
  kExit = 1,        ///< exit()/_exit() with end_code as status (status & 0377, as waitpid() reports
                     ///< it; older writers stored the argument of exit(): readers mask it)
  kSignal = 2,      ///< killed by signal end_code (seen by the launcher or a parent's waitpid)
  kExec = 3,        ///< replaced itself with execve(); the next image has the same pid
  kReturned = 4,    ///< library destructor ran (main returned) but the exit status was not seen
};

/// Bits of FileHeader::flags.
enum HeaderFlags : uint32_t {
  kFlagForkedChild = 1u << 0,    ///< opened in a fork()ed child (no exec): e.g. a DataLoader worker
  kFlagFollowChildren = 1u << 1, ///< descendants were profiled too
  kFlagRecordingFailed = 1u << 2,///< recording stopped early (no space, I/O error); see dropped
  /// Set in the first trace file of the run's root process (pid-<TRAINPROF_ROOT_PID>.trace) by
  /// the first process of the run that tells the user recording failed: the others stay quiet,
  /// so a run says it once however many processes hit the full disk at the same time.
  kFlagRunFailureSaid = 1u << 3,
  /// Timed records (dt, ChunkHeader::base_ns) are TSC ticks, not CLOCK_MONOTONIC ns (version 3 on):
  /// the reader converts them by piecewise-linear interpolation between the calibration pairs.
  kFlagTscClock = 1u << 4,
};

/// Fixed part of the file header, at offset 0. Fields after `end_kind` are written while the
/// process runs (through the writer's mapping) and by the launcher after the process ended.
struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_region_size;  ///< bytes before chunk 0
  uint32_t chunk_size;          ///< bytes per chunk slot
  uint32_t flags;               ///< HeaderFlags
  int32_t pid;
  int32_t ppid;
  uint64_t start_realtime_ns;   ///< CLOCK_REALTIME at start, read together with the next field
  uint64_t start_monotonic_ns;  ///< CLOCK_MONOTONIC at start
  uint32_t metadata_offset;     ///< offset of the metadata TLVs (inside the header region)
  uint32_t metadata_size;       ///< bytes of metadata TLVs
  uint32_t image_index;         ///< 0 for a pid's first image, N for its N-th exec'd image
  /// kFlagTscClock: the TSC rate the writer measured at start, kHz (about 2e-4 exact); the
  /// reader's slope when the file has a single calibration pair. 0 otherwise (zero in files of earlier writers).
  uint32_t tsc_khz;
  // --- updated while running ---
  std::atomic<uint32_t> end_kind;  ///< EndKind
  std::atomic<int32_t> end_code;   ///< exit status or signal number
  std::atomic<uint64_t> end_monotonic_ns;
  std::atomic<uint64_t> records_dropped;  ///< records not written (recording failed or off)
  std::atomic<uint32_t> chunks_claimed;   ///< chunk slots handed out so far
  /// Call stacks not taken because the thread had too little stack left (under the library's
  /// budget: docs/cli.md, "Stack space"): the event or sample was recorded without its stack
  /// (0 in files of older writers, where it was reserved).
  std::atomic<uint32_t> stacks_skipped;
  // --- identity (all zero in files of older writers: unknown; such images are merged by
  // (host, pid) and image_index alone). Two images are one process iff host, boot_id,
  // pid_namespace, pid and start_ticks are equal and the earlier one ended in exec.
  uint64_t pid_namespace;  ///< inode of /proc/self/ns/pid (0 = unknown); pid and ppid are in it
  uint64_t start_ticks;    ///< process start, clock ticks since boot (/proc/self/stat field 22;
                           ///< unchanged by exec; 0 = unknown)
  uint8_t boot_id[16];     ///< /proc/sys/kernel/random/boot_id as 16 bytes (all zero = unknown)
  uint8_t run_id[16];      ///< the `trainprof run` that wrote the file (TRAINPROF_RUN_ID, 32 hex
                           ///< digits; all zero = not started by trainprof run, or unknown)
  /// CPU samples (`--sample`) not written because the thread was inside a record, a library lock
  /// or a stack capture when its timer's signal came (0 in files of older writers).
  std::atomic<uint64_t> samples_dropped;
  /// kFlagTscClock: the TSC read together with start_monotonic_ns (the first calibration pair).
  /// 0 otherwise (zero in files of earlier writers).
  uint64_t start_tsc;
};
static_assert(sizeof(FileHeader) == 160, "FileHeader layout is part of the format");
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free);
inline constexpr size_t kEndKindOffset = offsetof(FileHeader, end_kind);
static_assert(offsetof(FileHeader, pid_namespace) == 96 && offsetof(FileHeader, run_id) == 128,
              "identity fields live where v2's reserved[0..5] were");

/// Bit of a kFork record's child pid field: the child is in another pid namespace than the parent
/// (the parent had called unshare(CLONE_NEWPID) or setns); the low 32 bits are its pid as the
/// parent sees it, which is not the pid the child's own header records.
inline constexpr uint64_t kForkOtherNamespace = 1ull << 32;

/// Metadata TLV keys: u16 key, u32 length, bytes. A zero key ends the list.
enum class MetaKey : uint16_t {
  kEnd = 0,
  kHost = 1,           ///< gethostname()
  kCommandLine = 2,    ///< argv joined by NUL bytes (/proc/self/cmdline)
  kExecutable = 3,     ///< readlink(/proc/self/exe)
  kWorkingDir = 4,
  kEnv = 5,            ///< "NAME=value" of a rank variable (RANK, LOCAL_RANK, WORLD_SIZE, ...)
  kVersion = 6,        ///< trainprof version that wrote the file
  /// Capture settings (present only when recording was limited): "key=value" entries separated by
  /// NUL bytes: range=cudaProfilerApi|nvtx:NAME (absent: no capture range), range_end=stop|
  /// stop-shutdown|repeat, window_start_ns=N and window_end_ns=N (CLOCK_MONOTONIC; absent:
  /// unbounded). Unknown keys are skipped.
  kCapture = 7,
  /// The CPython options that kept trainprof's Python shim from loading ("-I", "-E", "-S", or
  /// several, space-separated, e.g. "-E -S"): present only in a CPython interpreter started with
  /// them while the Python source was traced. -E and -I ignore PYTHONPATH, -S skips `site`, which
  /// imports the shim (sitecustomize), so the process records no Python phases.
  kPythonShimOff = 8,
  /// Stack and sampling settings (present only when some are on): "key=value" entries separated
  /// by NUL bytes: backtrace=LIST (comma-separated: cuda:THRESHOLD_NS, nvtx), sample_hz=N,
  /// sample_signal=N (the real-time signal the sampler uses). Unknown keys are skipped.
  kStacks = 9,
};

/// Header of every chunk, at the chunk's first byte.
struct ChunkHeader {
  uint32_t magic;         ///< kChunkMagic once the chunk is owned
  uint32_t tid;           ///< OS thread id (gettid) of the single writer
  uint32_t thread_index;  ///< process-local thread number, 0 = first thread seen
  uint32_t thread_seq;    ///< 0, 1, 2... over the chunks of this thread
  uint64_t base_ns;       ///< base of the first record's dt, on the recording clock (ns or ticks)
  std::atomic<uint32_t> committed;  ///< bytes of whole records after this header
  uint32_t reserved0;
  // --- kFlagTscClock only (zero otherwise, and in files of earlier writers): calibration pairs,
  // each a TSC value and CLOCK_MONOTONIC ns read together (zero ticks: no pair).
  uint64_t sync_ticks;    ///< the TSC when the chunk was claimed
  uint64_t sync_ns;       ///< CLOCK_MONOTONIC then; also the base of GPU activity's zs, ze
  /// A later pair, written by the owning thread when the process ends: last_ns first, then
  /// last_ticks (a reader that finds the ticks finds their ns).
  std::atomic<uint64_t> last_ticks;
  std::atomic<uint64_t> last_ns;
};
static_assert(sizeof(ChunkHeader) == 64, "ChunkHeader is one cache line");

/// Record tags, one per record kind of the schema (records.def: fields, classes, meanings;
/// records.h: the structs, encoders and decoders made from it).
enum class RecordTag : uint8_t {
  kInvalid = 0,
#define TRAINPROF_FIELD(name, enc, doc)
#define TRAINPROF_RECORD(Type, tag, name, cls, since, doc, fields) k##Type = tag,
#include "trainprof/records.def"
#undef TRAINPROF_RECORD
#undef TRAINPROF_FIELD
};

/// Which CUDA API a call belongs to (kCudaApiEnter).
enum class CudaApi : uint32_t { kRuntime = 1, kDriver = 2 };

/// Copy direction, numbered as CUPTI's CUpti_ActivityMemcpyKind (cupti_activity.h).
enum class MemcpyKind : uint32_t {
  kUnknown = 0, kHtoD = 1, kDtoH = 2, kHtoA = 3, kAtoH = 4, kAtoA = 5, kAtoD = 6, kDtoA = 7,
  kDtoD = 8, kHtoH = 9, kPtoP = 10,
};

/// Memory a copy reads or writes, numbered as CUPTI's CUpti_ActivityMemoryKind.
enum class MemoryKind : uint32_t {
  kUnknown = 0, kPageable = 1, kPinned = 2, kDevice = 3, kArray = 4, kManaged = 5,
  kDeviceStatic = 6, kManagedStatic = 7,
};

/// Synchronisation, numbered as CUPTI's CUpti_ActivitySynchronizationType.
enum class SyncType : uint32_t {
  kUnknown = 0, kEventSynchronize = 1, kStreamWaitEvent = 2, kStreamSynchronize = 3,
  kContextSynchronize = 4,
};

/// How a kernel was launched (kGpuKernel).
enum class KernelLaunch : uint32_t { kRegular = 0, kCooperative = 1, kCooperativeMultiDevice = 2, kGraph = 3 };

/// State of GPU tracing in a process (kGpuStatus).
enum class GpuState : uint32_t {
  kOn = 1,           ///< CUPTI subscribed, activity enabled
  kUnavailable = 2,  ///< CUPTI could not be used (message says why); everything else records
  kFlushed = 3,      ///< buffers flushed at the end of the process
};

/// Why recording was switched on or off (kCapture).
enum class CaptureReason : uint32_t {
  kStart = 0,            ///< recording state when the process's first thread started (with a
                         ///< capture range: off; with only --delay/--duration: by the window)
  kCudaProfilerApi = 1,  ///< cudaProfilerStart / cudaProfilerStop
  kNvtxRange = 2,        ///< the NVTX range named by --capture-range=nvtx:NAME began / ended
  kDelay = 3,            ///< --delay elapsed
  kDuration = 4,         ///< --duration elapsed
};

/// NVTX misuse counted by the writer (the reader derives unbalanced ranges by itself).
enum class MisuseKind : uint32_t {
  kNullName = 1,       ///< NULL message / attributes
  kNameTruncated = 2,  ///< name longer than kMaxStringBytes
  kBadAttributes = 3,  ///< unknown message type or attribute version
  kTooManyDomains = 4, ///< nvtxDomainCreate past kMaxDomainIds domains (detail: the name's string
                       ///< id); that domain's events are recorded in domain kMaxDomainIds
};

/// NVTX domain ids the writer hands out: 1 .. kMaxDomainIds - 1, each with its own name and
/// nesting; creating more is counted as kTooManyDomains misuse.
inline constexpr uint32_t kMaxDomainIds = 4096;

// ----- varints ---------------------------------------------------------------------------------

/// Writes `v` as unsigned LEB128 at `p`; returns the byte after it. At most 10 bytes.
inline uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

inline uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

/// Reads an unsigned LEB128 from [*p, end). Returns false (and leaves *p) if it runs past end or
/// is longer than 10 bytes.
inline bool GetVarint(const uint8_t** p, const uint8_t* end, uint64_t* out) {
  const uint8_t* q = *p;
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (q >= end) return false;
    uint8_t b = *q++;
    if (shift == 63 && b > 1) return false;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *p = q;
      *out = v;
      return true;
    }
  }
  return false;
}

/// GetVarint for a reader that has at least kVarintReadAhead (10) readable bytes at *p: no
/// bounds check per byte. The same result as GetVarint for the same bytes (false, *p left, for a
/// varint longer than 10 bytes or a 10th byte above 1). 1 byte: one branch; 2 to 8 bytes: one
/// 8-byte load, the first byte without a continuation bit found by counting trailing zeros, and
/// the 7-bit groups packed together by three mask-and-shift steps (no loop, no branch on the
/// length); 9 and 10 bytes: byte by byte. Little-endian hosts only (the reader asserts it).
inline constexpr uint32_t kVarintReadAhead = 10;
[[gnu::always_inline]] inline bool GetVarintFast(const uint8_t** p, uint64_t* out) {
  const uint8_t* q = *p;
  if (q[0] < 0x80) {
    *out = q[0];
    *p = q + 1;
    return true;
  }
  uint64_t w;
  std::memcpy(&w, q, sizeof w);
  const uint64_t stops = ~w & 0x8080808080808080ull;  // bit 7 of each byte that ends the varint
  if (stops != 0) {
    const int last_bit = __builtin_ctzll(stops);                 // 8 * (length - 1) + 7
    uint64_t x = w & (stops ^ (stops - 1)) & 0x7f7f7f7f7f7f7f7full;  // the varint's bytes, 7 bits each
    x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);  // 14 bits per 16
    x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);  // 28 bits per 32
    x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);  // 56 bits
    *out = x;
    *p = q + (last_bit >> 3) + 1;
    return true;
  }
  uint64_t v = w & 0x7f7f7f7f7f7f7f7full;
  v = (v & 0x007f007f007f007full) | ((v & 0x7f007f007f007f00ull) >> 1);
  v = (v & 0x00003fff00003fffull) | ((v & 0x3fff00003fff0000ull) >> 2);
  v = (v & 0x000000000fffffffull) | ((v & 0x0fffffff00000000ull) >> 4);
  const uint8_t b8 = q[8];
  v |= static_cast<uint64_t>(b8 & 0x7f) << 56;
  if (b8 < 0x80) {
    *out = v;
    *p = q + 9;
    return true;
  }
  const uint8_t b9 = q[9];
  if (b9 > 1) return false;
  *out = v | static_cast<uint64_t>(b9) << 63;
  *p = q + 10;
  return true;
}

}  // namespace trainprof::format
