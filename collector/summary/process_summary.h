// One process's summary: everything the report takes from that process, in a form the report
// merges with the other processes' (docs/summary-format.md). `trainprof report` summarises each
// process of the trace and builds its tables from the summaries; a summary file holds one
// (summary_codec.h), so that summarising can run where the traces are and the report merges.
//
//   Trace ─► SummarizeProcess (per process, summarize.h) ─► ProcessSummary ─► the report's merge
//                                                            ⇅ EncodeSummary / DecodeSummary (CBOR)
//
// What a summary holds so far (docs/summary-format.md lists its sections): the Processes row's own
// fields, the process's losses, its NVTX, CUDA (per name), host-op, function, call-site and
// operator-phase statistics, the facts and phases of the bottleneck analyses, its device uses,
// its GPU ops' idle gaps by kind and launches, and what its CUDA records give over its steps
// (collectives, GPU idle, overlap), and its place in the run (its parent, its shared instants for
// the hosts' clocks). A summary file (summary_file.h) holds the summaries of one trace file's
// processes with its status: the report's merge needs nothing else. Names are StringIds into the
// pool the summary was made with; the codec writes them as strings and interns them into the
// reader's pool.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collector/analysis/capture_note.h"
#include "collector/analysis/host_clocks.h"
#include "collector/analysis/operator_phases.h"
#include "collector/analysis/process_facts.h"
#include "collector/analysis/steps_gpu.h"
#include "collector/model/cuda_digest.h"
#include "collector/model/losses.h"
#include "collector/model/nvtx_summary.h"
#include "collector/stats/gpu_tracing.h"
#include "collector/stats/callsites.h"
#include "collector/stats/functions.h"
#include "collector/stats/gpu_devices.h"
#include "collector/stats/gpu_idle_kinds.h"
#include "collector/stats/host_ops.h"
#include "collector/stats/kernel_launches.h"

namespace trainprof::collector {

/// NVTX used wrongly by the program: MISUSE records by kind, and names the file never defines.
struct NvtxMisuse {
  uint64_t null_names = 0;      ///< NULL message or attributes (MisuseKind::kNullName)
  uint64_t names_cut = 0;       ///< names longer than kMaxStringBytes, cut (kNameTruncated)
  uint64_t bad_attributes = 0;  ///< bad event attributes or registered string handle (kBadAttributes)
  uint64_t other = 0;           ///< MISUSE records of a kind this trainprof does not know
  /// nvtxDomainCreate past format::kMaxDomainIds domains (kTooManyDomains): those domains' ranges
  /// share one domain, "trainprof: NVTX domains over the limit".
  uint64_t domains_over_limit = 0;
  uint64_t undefined_names = 0;   ///< name ids no STRING record defines (TraceImage::undefined_names)
  uint64_t undefined_domains = 0; ///< domain ids no DOMAIN record defines
  uint64_t total() const {
    return null_names + names_cut + bad_attributes + other + domains_over_limit + undefined_names + undefined_domains;
  }
  NvtxMisuse& operator+=(const NvtxMisuse& o);
  bool operator==(const NvtxMisuse&) const = default;
};

struct ThreadRow {
  uint32_t tid = 0;
  std::string name;
  uint64_t events = 0;
  bool operator==(const ThreadRow&) const = default;
};

/// The Processes table's fields of one process that depend on it alone (its place in the tree
/// and its offset from the run's start are the merge's: report/process_rows.h).
struct ProcessInfo {
  int32_t pid = 0;
  int32_t ppid = 0;
  std::string host;
  std::optional<int64_t> rank, local_rank, world_size;
  std::string role;
  std::string command;  ///< argv joined with spaces, shell-quoted where needed
  std::string executable;
  std::vector<std::string> files;
  /// "yes"; "no": no trace file, known from its parent's fork and wait records (Process::Recorded);
  /// "until_exec": recorded until it exec'd a program that left no trace (static, setuid).
  std::string recorded = "yes";
  /// With recorded "until_exec": the path the last exec ran (its EXEC record), "" if unknown.
  std::string unrecorded_exec;
  uint64_t start_realtime_ns = 0;
  uint64_t start_ns = 0;
  /// false: a child not recorded known from its parent's wait alone (vfork, clone):
  /// the start fields are its reaping, wall_ns unknown (Process::start_known).
  bool start_known = true;
  uint64_t end_ns = 0;
  uint64_t wall_ns = 0;
  bool capture_limited = false;  ///< recorded only in capture ranges / a --delay/--duration window
  std::string python_shim_off;   ///< options that kept the Python shim out ("-I", ...; "" = none)
  std::string exit_kind;   ///< "exit", "signal", "exec", "returned", "unknown"
  std::optional<int64_t> exit_code;
  std::string exit_text;   ///< "exit 0", "signal 9 (SIGKILL)", ...
  std::string exit_source; ///< "header", "process_end", "parent_wait", "" (unknown)
  bool kineto = false;     ///< read from a torch.profiler (Kineto) trace, which records no exit
  uint64_t events = 0;
  uint64_t unbalanced = 0;
  uint64_t dropped = 0;
  bool damaged = false;  ///< a file of the process has errors (what could be read is used): text only
  bool truncated = false;
  NvtxMisuse nvtx_misuse;
  std::vector<ThreadRow> threads;
  GpuTracing gpu;   ///< GPU tracing state and what was lost (gpu_tracing.h)
};

/// One loss of the process (model/losses.def, a per-process entry): `n` of `kind`, and the text
/// for the warning's {detail}. `warn` false: counted without a line of its own (LossLog::Count).
struct LossNote {
  Loss kind{};
  uint64_t n = 0;
  std::string detail;
  bool warn = true;
  bool operator==(const LossNote&) const = default;
};

/// Its GPU ops (kernels, memcpys, memsets): their idle gaps by kind per stream and their launch
/// calls per name (HTA's idle time breakdown and kernel launch statistics: stats/gpu_idle_kinds.h,
/// stats/kernel_launches.h). Made from its CUDA records (summary/gpu_ops.h).
struct GpuOpsSummary {
  std::vector<StreamIdleKinds> idle_kinds;  ///< per (device, stream) with GPU ops, by device then stream
  UnlaunchedOps unlaunched;                 ///< its ops whose launching call is not in the trace
  std::vector<LaunchSamples> launches;      ///< per name: kernels by recorded name, then memory operations
};

/// Who a process is, as the merge links the process tree across summaries: its host, the boot and
/// pid namespace its pid is numbered in, its pid and start (CLOCK_MONOTONIC ns). A process not
/// recorded that a parent forked: the fork's time (read/process_tree.h).
struct ProcessKey {
  std::string host;
  std::string boot_id;  ///< "" where the file does not say (older files, Kineto traces)
  uint64_t pid_namespace = 0;
  int32_t pid = 0;
  uint64_t start_ns = 0;
  auto operator<=>(const ProcessKey&) const = default;
};

/// A process's place in the run, what the merge needs of it beside its statistics: its parent, its
/// clock and its files' runs (summarize.h SummarizeProcess).
struct ProcessPlace {
  ProcessKey key;
  /// Its parent in the process tree that was summarised with it (nullopt: a root there; the merge
  /// looks for the parent, ProcessInfo::ppid, among the other summaries).
  std::optional<ProcessKey> parent;
  /// Its wall-clock start as its files give it (ProcessInfo::start_realtime_ns is the one aligned
  /// on the reference host's clock at the merge, analysis/host_clocks.h), 0: unknown.
  uint64_t file_start_realtime_ns = 0;
  /// What the hosts' clocks are estimated from: its shared instants (ranked processes only).
  std::vector<SharedInstant> instants;
  /// The run id of each of its files (ProcessInfo::files; "" where the file has none): a directory
  /// with the files of several `trainprof run`s is said.
  std::vector<std::string> run_ids;
  /// What its role follows from besides the tree (read/process_tree.h RoleOf): its recorded role
  /// ("" none), its rank variable's strength, forked and not exec'd. The merge names the role again
  /// once the tree is linked.
  std::string recorded_role;
  int rank_strength = 0;
  bool forked_child = false;
  bool operator==(const ProcessPlace&) const = default;
};

struct ProcessSummary {
  ProcessInfo info;
  ProcessPlace place;
  /// The time the process recorded for (ns; capture_note.h RecordedTime): its NVTX tables'
  /// denominator.
  uint64_t recorded_ns = 0;
  std::vector<LossNote> losses;  ///< in the order found; LossLog orders the lines
  /// Recording limited to capture ranges or a window: the note the report's warnings give it.
  std::optional<CaptureSummary> capture;
  NvtxSummary nvtx;  ///< its ranges (durations as mergeable DurationSummary) and marks
  /// Its CUDA calls and GPU records summed per name, one digest per image in image order
  /// (model/cuda_digest.h): the CUDA API, kernel and memory tables, the GPU tracing counters, the
  /// kernel-launch table's names.
  std::vector<CudaDigest> cuda;
  /// Its operators and Python functions of imported torch.profiler traces, key_averages()'s
  /// totals per name (stats/host_ops.h).
  HostOpTotals host_ops;
  /// Its CPU samples counted per function, in all and per phase (stats/functions.h), symbolized.
  FunctionCounts functions;
  /// Its stacked ranges, marks and CUDA calls per (kind, name, call site) (stats/callsites.h).
  std::vector<CallSiteGroup> callsites;
  /// What the symbolizer could not do for its stacks (a file missing or rebuilt): the report's
  /// warnings, each file's once over all processes.
  std::vector<Symbolizer::Problem> symbol_problems;
  /// Its `--trace=torch-ops` operators per (phase, name) (analysis/operator_phases.h).
  std::vector<OperatorPhaseStat> operator_phases;
  /// What the bottleneck analyses read of it besides CUDA records (analysis/process_facts.h): its
  /// facts (children: the merge's) and training phases (a few ranges per step).
  ProcessFacts facts;
  ProcessPhases phases;
  /// Its use of each device it has GPU records on, by device id (stats/gpu_devices.h): its device
  /// rows, and its share of the merged rows.
  std::vector<DeviceUse> devices;
  GpuOpsSummary gpu_ops;
  /// What its CUDA records give over its own steps (analysis/steps_gpu.h): its NCCL kernels and GPU
  /// idle over its steps in the statistics, its temporal breakdown and kernel categories.
  StepsGpu steps_gpu;
};

}  // namespace trainprof::collector
