// The decoded trace: what the reader produces and every analysis consumes.
//
//   FileStatus     one per trace file: size, what could be read, damage found
//   TraceImage     one per usable file = one process image (a pid between two execs)
//     ├─ threads          ThreadInfo per writer thread
//     ├─ nvtx_summary     NVTX ranges matched and summarised while reading (nvtx_summary.h)
//     ├─ nvtx             NvtxEvent, 32 bytes each, per thread in record order: all of them, or
//     │                   only the Python phases' (ReadOptions::keep; what `report` keeps)
//     ├─ process_events   fork / exec / exit / child exit / NVTX misuse (few)
//     ├─ stacks           call stacks, loaded modules, per-(range, stack) sums, samples (stacks.h)
//     └─ cuda             CUDA API calls, GPU kernels/copies/memsets, devices, GPU status (cuda_model.h)
//   Process        images of one process merged (same host, boot, pid namespace, pid and start
//                  time; chained by exec), with tree links and derived identity
//   Trace          all of the above plus the StringPool the ids point into
//
// Events are plain structs in per-image vectors (no per-event heap nodes). `trainprof report` keeps
// NVTX statistics, not NVTX events (beyond the phases its step analysis needs), so its memory does
// not grow with the number of NVTX records. Each event family has its own vectors in TraceImage and its own
// statistics module (nvtx_stats; cuda_api_stats, gpu_kernel_stats, gpu_memory_stats, gpu_devices).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collector/model/cuda_digest.h"
#include "collector/model/cuda_model.h"
#include "collector/model/host_clock.h"
#include "collector/model/losses.h"
#include "collector/model/nvtx_summary.h"
#include "collector/model/stacks.h"
#include "collector/base/string_pool.h"
#include "trainprof/trace_format.h"

namespace trainprof::collector {

struct CudaChunkIndex;  // read/cuda_chunk_index.h

using format::EndKind;

/// Where an image came from: a trainprof trace file, or a torch.profiler (Kineto) JSON trace
/// imported by the reader (collector/read/kineto_reader.h; mapping in docs/kineto.md).
enum class ImageSource : uint8_t { kTrainprof, kKineto };

/// What was read from one file and what was wrong with it.
struct FileStatus {
  std::string path;
  std::optional<int32_t> pid;  ///< once the header got that far
  uint64_t bytes = 0;          ///< file size
  uint64_t bytes_read = 0;     ///< bytes decoded as valid (== bytes for an intact file)
  bool truncated = false;      ///< the file ends before what its header or chunks announce
  bool usable = false;         ///< the header was valid: the file is one process image
  ImageSource format = ImageSource::kTrainprof;  ///< what the content says the file is (JSON `files[].format`)
  std::vector<std::string> errors;
  /// The problems found, by kind (the file entries of model/losses.def: header_errors,
  /// chunk_errors, ...), all of them: `errors` lists at most kMaxErrorsPerFile.
  LossCounts losses;

  bool damaged() const { return !errors.empty(); }
};

enum class NvtxKind : uint8_t { kPush, kPop, kMark, kStart, kEnd };

/// One NVTX record. Push/Mark/Start use name, domain, category; Start/End use range_id;
/// Pop uses domain.
struct NvtxEvent {
  uint64_t time_ns = 0;   ///< CLOCK_MONOTONIC
  uint64_t range_id = 0;  ///< kStart / kEnd
  StringId name = 0;      ///< range or mark name (0 = none)
  StringId domain = 0;    ///< the domain's name (0 = the default domain)
  uint32_t category = 0;
  uint32_t thread : 24;   ///< index into TraceImage::threads
  uint32_t kind_ : 8;

  NvtxEvent() : thread(0), kind_(0) {}
  NvtxKind kind() const { return static_cast<NvtxKind>(kind_); }
};
static_assert(sizeof(NvtxEvent) == 32, "keep NVTX events compact: traces hold millions");

inline constexpr uint32_t kMaxThreadsPerImage = 1u << 24;  // NvtxEvent::thread width

enum class ProcessEventKind : uint8_t { kProcessEnd, kFork, kExec, kChildExit, kMisuse };

struct ProcessEvent {
  uint64_t time_ns = 0;
  ProcessEventKind kind = ProcessEventKind::kProcessEnd;
  uint32_t thread = 0;
  uint32_t what = 0;  ///< kProcessEnd/kChildExit: EndKind; kMisuse: MisuseKind
  int64_t code = 0;   ///< exit status or signal number
  uint64_t value = 0; ///< kFork/kChildExit: the child pid; kMisuse: detail
  StringId text = 0;  ///< kExec: the path
};

/// Capture settings of the run, from the header (MetaKey::kCapture): recording was limited to
/// capture ranges and/or a --delay/--duration window. `present` false: everything was recorded.
struct CaptureConfig {
  bool present = false;
  std::string range;      ///< "cudaProfilerApi", "nvtx:NAME", or "" (none: only the window)
  std::string range_end;  ///< "stop", "stop-shutdown", "repeat"
  uint64_t window_start_ns = 0;  ///< CLOCK_MONOTONIC; 0: from the start
  uint64_t window_end_ns = 0;    ///< 0: to the end
};

struct ThreadInfo {
  uint32_t tid = 0;           ///< OS thread id
  uint32_t writer_index = 0;  ///< ChunkHeader::thread_index
  StringId name = 0;          ///< from kThreadName (0 = unnamed)
  uint64_t events = 0;        ///< records decoded from this thread's chunks
  uint32_t chunks = 0;
};

/// A host-side span torch.profiler records that is not an NVTX range: an operator (`cpu_op`,
/// e.g. "aten::addmm") or a Python function (`python_function`, "train.py(42): step"). From
/// imported Kineto traces; the operator and function tables (self and total time, calls, as
/// torch.profiler's `key_averages()`) are made from these. Nesting is by time on one thread.
enum class HostOpKind : uint8_t { kOperator, kPythonFunction };
struct HostOp {
  uint64_t begin_ns = 0;  ///< on the image's time axis (CLOCK_MONOTONIC for trainprof traces)
  uint64_t end_ns = 0;
  StringId name = 0;
  uint32_t thread = 0;    ///< index into TraceImage::threads
  HostOpKind kind = HostOpKind::kOperator;
};

/// One trace file's process image, decoded.
inline constexpr size_t kNoFile = SIZE_MAX;  ///< TraceImage::file of a process not recorded

struct TraceImage {
  size_t file = 0;  ///< index into Trace::files (kNoFile: made up for a process not recorded)
  ImageSource source = ImageSource::kTrainprof;
  // FileHeader
  uint32_t version = 0;
  uint32_t flags = 0;  ///< format::HeaderFlags
  int32_t pid = 0;
  int32_t ppid = 0;
  uint32_t image_index = 0;
  uint64_t start_realtime_ns = 0;  ///< 0: unknown (a damaged header; the reader said so)
  uint64_t start_ns = 0;           ///< from the records where the header's is damaged
  uint64_t header_start_ns = 0;    ///< start_monotonic_ns as the header gives it (the file's identity)
  EndKind end_kind = EndKind::kNone;
  int32_t end_code = 0;
  uint64_t end_ns = 0;  ///< 0 = not set
  uint64_t records_dropped = 0;
  uint64_t samples_dropped = 0;  ///< CPU samples the sampler could not write (header; 0 before format 3)
  uint32_t chunks_claimed = 0;
  uint32_t stacks_skipped = 0;  ///< stacks not taken for want of thread stack (header; 0 in older files)
  // Identity (FileHeader; 0 / "" = unknown: a file of an older trainprof)
  uint64_t pid_namespace = 0;  ///< inode of the pid namespace pid and ppid are numbered in
  uint64_t start_ticks = 0;    ///< process start, clock ticks since boot (same for every image)
  std::string boot_id;         ///< 32 hex digits
  std::string run_id;          ///< 32 hex digits: the `trainprof run` that wrote the file
  // Metadata
  std::string host;
  std::vector<std::string> argv;
  std::string executable;
  std::string working_dir;
  std::string writer_version;
  std::vector<std::pair<std::string, std::string>> env;  ///< rank variables, in file order
  CaptureConfig capture;
  std::string python_shim_off;  ///< MetaKey::kPythonShimOff: "-I", "-E -S", ... ("" = none)
  /// MetaKey::kStacks' python_unsupported: the CPython whose frames the sampler could not read
  /// ("CPython 3.14 free-threaded", ...; "" = none, or no --sample)
  std::string python_unsupported;
  // Records
  StringId role = 0;  ///< kRole (0 = none)
  std::vector<ThreadInfo> threads;
  NvtxSummary nvtx_summary;  ///< every NVTX range and mark of the image, matched (ids: the pool's)
  std::vector<NvtxEvent> nvtx;  ///< the events ReadOptions::keep asked for
  /// `nvtx` holds every NVTX event of the image (KeepNvtx::kAll, or a Kineto file): false when
  /// only the phases' were kept; export then reads the file's events again as it writes them
  /// (read/nvtx_stream.h).
  bool nvtx_complete = false;
  uint64_t nvtx_events = 0;  ///< NVTX events decoded (pushes, pops, marks, starts, ends), kept or not
  /// The file's string and domain refs to pool ids, as Finish resolved them (index: ref): how a
  /// second read of the file (read/nvtx_stream.h) names its events. Empty for a Kineto image.
  std::vector<StringId> string_of_ref, domain_of_ref;
  std::vector<ProcessEvent> process_events;
  CudaData cuda;                ///< tags 48..59 (format version 2)
  /// `cuda`'s calls and GPU records summed per name as the reader decoded them (cuda_digest.h;
  /// ReadOptions::cuda_digest), or DigestOf(cuda) for a Kineto image: what the per-name CUDA
  /// tables read, whatever `cuda` kept.
  CudaDigest cuda_digest;
  /// The ends of the valid NCCL kernels (base/kernel_names.h IsNcclKernel) the reader decoded,
  /// CLOCK_MONOTONIC ns, whatever `cuda` kept, the first kMaxNcclEndsPerName of each name: the
  /// instants that ranks on several hosts share (analysis/host_clocks.h). Empty for a Kineto image
  /// (its kernels are all in `cuda`).
  std::vector<KernelEnd> nccl_kernel_ends;
  /// Where the reader can decode `cuda`'s records of one time window again (ReadOptions::
  /// cuda_index; read/cuda_chunk_index.h); null when not asked for, or none could be made.
  std::shared_ptr<const CudaChunkIndex> cuda_index;
  std::vector<HostOp> host_ops; ///< operators and Python functions (Kineto imports; any order)
  ImageStacks stacks;           ///< tags 64..67 (format version 3): stacks, modules, samples (stacks.h)
  uint64_t records = 0;         ///< all records decoded
  uint64_t first_record_ns = 0; ///< time of the earliest timed record (valid if has_timed_records)
  uint64_t last_record_ns = 0;
  bool has_timed_records = false;
  bool truncated = false;
  /// Distinct string ids used as names (of ranges, marks, threads, domains, ...) that no kString
  /// record defines, and domain ids that no kDomain record defines, in a file without any other
  /// problem: the program's doing (e.g. a bogus registered string handle), so counted here as NVTX
  /// misuse, not as damage. In a damaged file they are one of its errors instead (the definition
  /// may be what was lost).
  uint64_t undefined_names = 0;
  uint64_t undefined_domains = 0;

  /// Value of a rank variable, if the file recorded it.
  const std::string* Env(std::string_view name) const {
    for (const auto& [k, v] : env)
      if (k == name) return &v;
    return nullptr;
  }
};

/// How a process ended and where we learned it.
struct ExitInfo {
  enum class Source { kNone, kHeader, kProcessEnd, kParentWait };
  EndKind kind = EndKind::kNone;
  int64_t code = 0;
  Source source = Source::kNone;
};

/// The images of one process (same host and pid, one run of exec'd images) with derived identity.
struct Process {
  std::string host;
  int32_t pid = 0;
  int32_t ppid = 0;
  /// Every image of this process left a trace file. kNotRecorded: none did — the process is known
  /// only from its parent's fork and child-exit records (setuid, setgid or file capabilities: the
  /// loader drops LD_PRELOAD; statically linked; its exec failed before the library loaded, or it
  /// cleared LD_PRELOAD or its environment); its one image is made up of those (no file:
  /// TraceImage::file is kNoFile); started by vfork or clone, from the child-exit alone
  /// (start_known false). kExecNotRecorded: it recorded until an exec, and the
  /// exec'd image left no trace (a static or setuid program).
  enum class Recorded { kYes, kNotRecorded, kExecNotRecorded };
  Recorded recorded = Recorded::kYes;
  std::vector<TraceImage> images;  ///< by image_index; never empty
  // Tree (indices into Trace::processes).
  int parent = -1;
  std::vector<int> children;  ///< by start time
  int depth = 0;
  // Derived.
  std::optional<int64_t> rank, local_rank, world_size;
  /// How strongly its variable names its rank (2: RANK, OMPI_COMM_WORLD_RANK, PMI_RANK; 1:
  /// SLURM_PROCID, which srun gives a launcher too; 0: none): a launcher's children have stronger
  /// ones (process_tree.h RoleOf).
  int rank_strength = 0;
  std::string role;
  /// CLOCK_REALTIME at start_ns: the first image's, or, with Trace::host_clocks, on the reference
  /// host's clock (AlignHostClocks); 0: unknown.
  uint64_t start_realtime_ns = 0;
  uint64_t start_ns = 0;
  /// false: a child not recorded that its parent started by vfork or clone (no FORK record)
  /// and reaped: start_ns (and start_realtime_ns) are the reaping, the latest it can have started,
  /// and wall_ns is unknown (0).
  bool start_known = true;
  uint64_t end_ns = 0;
  /// End from the header, a kProcessEnd record or the parent's kChildExit record (the time it was
  /// reaped), not the last record.
  bool end_known = false;
  uint64_t wall_ns = 0;
  ExitInfo exit;
  uint64_t records = 0;
  uint64_t dropped = 0;
  bool truncated = false;

  const TraceImage& first() const { return images.front(); }
  const TraceImage& last() const { return images.back(); }
};

/// Everything read for one report.
struct Trace {
  StringPool strings;
  /// Record starts per CUDA window of the report (report.h, CudaWindowRecords), as the files were
  /// read for it (LoadTraceForReport); 0: one window over the records kept.
  size_t cuda_window_records = 0;
  std::vector<FileStatus> files;
  std::vector<Process> processes;  ///< tree order: each parent before its children
  /// Children known from fork records only, left out past kMaxNotRecorded (process_tree.h).
  size_t not_recorded_omitted = 0;
  /// The hosts' wall clocks against clock_reference's, by host name, when ranks ran on two or more
  /// hosts and AlignHostClocks (analysis/host_clocks.h) put them on one clock; empty otherwise.
  std::vector<HostClock> host_clocks;
  std::string clock_reference;  ///< the host of the lowest rank ("" without host_clocks)
};

}  // namespace trainprof::collector
