// The report: everything the renderers print, computed once from the processes' summaries.
//
//   Trace ──SummarizeForReport()──► RunSummaries ──MergeSummaries()──► Report ──► RenderText /
//   summary files ──AddSummaryFile()──┘                                  RenderJson / RenderCsv (render.h)
//
// Analyze() is the two steps on a Trace.
//
// The Report holds display-ready values (strings for names, integers in ns and bytes) so the three
// renderers agree by construction. Each analysis (NVTX statistics, CUDA API calls, GPU kernels,
// memory operations, devices, the bottleneck verdict) has its own module and its own rows here.
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collector/analysis/bottleneck.h"
#include "collector/base/table.h"
#include "collector/stats/callsites.h"
#include "collector/stats/cuda_tables.h"
#include "collector/stats/gpu_tracing.h"
#include "collector/stats/kernel_categories.h"
#include "collector/stats/temporal_breakdown.h"
#include "collector/stats/host_ops.h"
#include "collector/model/model.h"
#include "collector/read/trace_set.h"
#include "collector/stats/nvtx_stats.h"
#include "collector/summary/process_summary.h"
#include "collector/summary/summary_file.h"

namespace trainprof::collector {

/// trainprof's version ("0.1.0"), as written into JSON reports.
const char* TrainprofVersion();

/// Trace files of at least this many bytes in all are reported with CUDA windows unless
/// TRAINPROF_CUDA_WINDOW_RECORDS says otherwise: ~3M CUDA records (~22 bytes each in the file),
/// whose records kept whole would take ~180 MiB; windowed, less memory and no more time
/// (docs/performance.md, "Windows by default for large traces").
inline constexpr uint64_t kAutoWindowTraceBytes = uint64_t{64} << 20;
/// Record starts per window then: the fastest and smallest of 100k, 250k and 1M on 1.5M, 10M and
/// 100M CUDA records (docs/performance.md).
inline constexpr size_t kAutoWindowRecords = 100'000;

/// The record starts per CUDA window for a report of `trace_bytes` bytes of trainprof trace files
/// (Kineto files do not count: they are never read in windows): the GPU
/// analyses read the CUDA records in time windows of at most that many record starts each
/// (model/cuda_window.h); 0: one window, every record kept. TRAINPROF_CUDA_WINDOW_RECORDS=N sets
/// it (0: one window; ignored unless a number up to 2^32 - 1); unset, kAutoWindowRecords for
/// kAutoWindowTraceBytes or more, else 0. The report is the same either way: tests cut small
/// windows to check it.
size_t CudaWindowRecords(uint64_t trace_bytes);

/// The trace files read as `trainprof report` reads them (LoadTrace / LoadTraceBytes): NVTX
/// statistics made while reading, only the Python phases' events kept; with CUDA windows
/// (CudaWindowRecords of the files' sizes; Trace::cuda_window_records), the CUDA chunk index
/// noted and only the calls with a stack kept (the windows are read again from the files,
/// read/cuda_chunk_index.h), unless a trainprof file with CUDA records got no index: then read
/// again keeping every record.
/// `files_done` (optional): counts the files decoded, for a progress bar (from 0 again if the
/// files are read a second time).
Trace LoadTraceForReport(const std::vector<std::string>& files, std::atomic<uint64_t>* files_done = nullptr);
Trace LoadTraceBytesForReport(const std::vector<TraceBytes>& files);

/// Whether Analyze reads `trace`'s CUDA records again window by window: it was read for windows
/// (Trace::cuda_window_records), has CUDA records, and every image with them got a chunk index
/// (EveryCudaImageIndexed). Otherwise one window over the records kept.
bool ReadsCudaWindows(const Trace& trace);

struct ReportOptions {
  bool by_process = false;  ///< per-process NVTX tables in text and CSV (JSON always has them)
  size_t top = 0;           ///< rows per statistics table; 0 = all
  bool full_names = false;  ///< kernel names demangled but not shortened (--full-names)
  bool group_names = true;  ///< NVTX names differing only in numbers grouped (name_groups.h; --no-group-names)
  bool by_callsite = false; ///< the call-site table in the text report (--by-callsite; callsite_tables.h)
  bool by_phase = false;    ///< the function table per phase in the text report (--by-phase; function_tables.h)
  bool by_rank = false;     ///< every rank's rows in the text report, however many (--by-rank; rank_tables.h)
  /// --rank: the trace was cut to these ranks' processes before the report (read/rank_filter.h);
  /// the title and JSON `summary.ranks` say so. Empty: every process.
  std::vector<int64_t> ranks;
};

struct RangeRow {
  std::string name;    ///< display name: "name", "domain:name", "<unnamed>", "<pop without push>"
  std::string domain;  ///< "" for the default domain
  std::string style;   ///< "push/pop" or "start/end"
  SampleStats time;  ///< durations (ns): time.count = calls; time.exact false: median estimated
  double percent = 0;
  uint64_t unbalanced = 0;
  uint64_t names = 1;  ///< distinct names in the row; a group ("step <N>") when grouped is true
  bool grouped = false;  ///< name is a pattern of names differing only in numbers (name_groups.h)
};

/// The entries of one range table and the names they use, shared by the tables that show them.
struct RangeTableData {
  std::vector<RangeEntry> entries;
  std::shared_ptr<const StringPool> strings;  ///< set when the report is complete
  std::shared_ptr<const NameGroups> groups;   ///< the report's name groups (null: not grouped)
};

/// An NVTX range table of the report: rows made display-ready (RangeRow) one at a time, on
/// demand, so that a table of a million names costs its summaries and 4 bytes a row, never a
/// million RangeRows at once. Reads like a vector of RangeRow (size, [], range for).
class RangeRows {
 public:
  RangeRows() = default;
  RangeRows(std::shared_ptr<RangeTableData> data, std::vector<uint32_t> order)
      : data_(std::move(data)), order_(std::move(order)) {}

  size_t size() const { return order_.size(); }
  bool empty() const { return order_.empty(); }
  RangeRow operator[](size_t i) const;
  RangeRow front() const { return (*this)[0]; }
  /// Cuts the table to its first n rows; returns how many were cut.
  size_t CutTo(size_t n);
  /// Some row's median is estimated (more than DurationSummary::kExactSamples calls).
  bool any_estimated() const;
  const std::shared_ptr<RangeTableData>& data() const { return data_; }

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = RangeRow;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = RangeRow;
    iterator(const RangeRows* rows, size_t i) : rows_(rows), i_(i) {}
    RangeRow operator*() const { return (*rows_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const iterator& o) const { return i_ == o.i_; }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }

   private:
    const RangeRows* rows_;
    size_t i_;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, order_.size()}; }

 private:
  std::shared_ptr<RangeTableData> data_;
  std::vector<uint32_t> order_;  // indices into data_->entries, display order
};

struct MarkRow {
  std::string name;  ///< display name, as for ranges
  std::string domain;
  uint64_t count = 0;
};

/// A row of the Processes table: the process's own fields (its summary's, summary/process_summary.h),
/// its place in the tree and the run, and its tables.
struct ProcessRow : ProcessInfo {
  int parent = -1;  ///< index into Report::processes
  int depth = 0;
  uint64_t offset_ns = 0;  ///< start relative to the earliest process (realtime clock)
  RangeRows nvtx_ranges;  ///< this process only, sorted, cut to --top
  size_t nvtx_ranges_omitted = 0;
  CudaTables cuda;  ///< this process's CUDA tables, cut to --top; devices per device
  HostOpTables host_ops;  ///< its operator and Python function tables (Kineto imports), cut to --top
};

struct Report {
  std::string trainprof_version;
  uint32_t format_version = 0;
  ReportOptions options;
  std::vector<FileStatus> files;
  std::vector<ProcessRow> processes;  ///< tree order
  RangeRows nvtx_ranges;  ///< all processes, sorted, cut to --top
  size_t nvtx_ranges_omitted = 0;
  /// The one denominator of the merged table's Time (%): the summed wall (recorded) time of the
  /// processes that recorded at least one range, and how many they are (docs/report.md).
  uint64_t nvtx_ranges_wall_ns = 0;
  size_t nvtx_ranges_processes = 0;
  std::vector<MarkRow> nvtx_marks;
  size_t nvtx_marks_omitted = 0;
  bool has_cuda = false;  ///< some process has CUDA records (calls, GPU activity, or a GPU status)
  CudaTables cuda;        ///< over all processes; devices merged per host and device
  /// Operators and Python functions over all processes (Kineto imports; empty: none had any).
  HostOpTables host_ops;
  /// Further tables, each with its declaration (report_tables.h): every renderer shows them
  /// generically (text: a section after the GPU tables; JSON: a member before "bottleneck"; CSV:
  /// a file after gpu_devices.csv). A new table goes here (collector/README.md, "Adding a table").
  std::vector<TableRows> tables;
  /// The call sites of the stacked events (stats/callsites.h), as the "callsites" table shows them
  /// (cut to --top): JSON adds their frames; the Bottleneck names the top one of a stall.
  std::vector<CallSiteRow> callsites;
  /// Per process with GPU activity: HTA's temporal breakdown and kernel categories (docs/analysis.md,
  /// "Temporal breakdown", "Kernel categories"), in process order (report_gpu_overlap.h).
  std::vector<TemporalBreakdownRow> temporal_breakdown;
  std::vector<KernelCategoryRow> kernel_categories;
  Bottleneck bottleneck;              ///< the verdict (bottleneck.h, docs/analysis.md)
  /// The ranks whose own rows the text report shows (rank_tables.h): none = every rank (at most
  /// kRanksInFull ranks, or --by-rank); else the lowest rank, the straggler and the outliers.
  std::optional<std::set<int64_t>> text_ranks;
  /// The hosts whose rows the text report's Hosts table shows (rank_tables.h): none = every host
  /// (at most kHostsInFull, or --by-rank); else the reference, those on their wall clock or
  /// unknown, and the largest offsets and uncertainties.
  std::optional<std::set<std::string>> text_hosts;
  uint64_t ranks = 0;  ///< distinct ranks of the processes
  /// Ranks none of whose processes has a training step, ascending (ChooseTextRanks); the text
  /// lists the first kRanksListedWithoutSteps of them even when it leaves ranks out.
  std::vector<int64_t> ranks_without_steps;
  /// File damage ("FILE: what (read N of M bytes)") and notes: the catalogue's lines (model/losses.def,
  /// report/warnings.h), after the launcher's about the paths given.
  std::vector<std::string> warnings;
  LossCounts stats;                   ///< every loss of the catalogue, summed over the trace (JSON `stats`)
  NvtxMisuse nvtx_misuse;             ///< summed over all processes
  // Summary for the title line.
  size_t usable_files = 0;
  size_t damaged_files = 0;
  size_t hosts = 0;
  uint64_t start_realtime_ns = 0;  ///< earliest process start
  uint64_t span_ns = 0;            ///< earliest start to latest end
};

/// Every process of a run summarised (summary/process_summary.h): what the report merges. Made from
/// traces (SummarizeForReport) and summary files (AddSummaryFile), in any mix.
struct RunSummaries {
  std::shared_ptr<StringPool> names = std::make_shared<StringPool>();  ///< every summary's names
  std::vector<FileStatus> files;  ///< the trace files, as read (in the order given)
  size_t not_recorded_omitted = 0;
  std::vector<ProcessSummary> processes;
  /// Made with a trace, not kept in summary files: each process's steps as split for the GPU sweeps
  /// (RunView::splits; empty: the analysis splits them again, the same), and what the CUDA windows
  /// read again found changed (warnings, last).
  std::vector<StepSplit> splits;
  std::vector<std::string> read_warnings;
  /// Per process: the summary file it was read from, "" for one summarised from a trace here.
  std::vector<std::string> sources;
};

/// The summaries of `trace`'s processes (its NVTX summaries, CUDA digests and names moved out).
/// `all_device_activity`: each process keeps its activity on every device (a summary file, merged
/// with processes not in this trace); else only on the devices it shares with another process of
/// the trace (stats/gpu_devices.h SharedDevices), the span elsewhere. Hosts' clocks need not be
/// aligned (the merge aligns them).
RunSummaries SummarizeForReport(Trace&& trace, bool all_device_activity = false);

/// Adds a summary file's files and processes (its names already interned into run->names); `path`:
/// the summary file's, which the report names where a process is in two inputs.
void AddSummaryFile(RunSummaries* run, SummaryFile file, const std::string& path = "");

/// The report merged from `run`: the processes linked into one tree (by their places' parent
/// keys), the hosts' clocks estimated from their shared instants (analysis/host_clocks.h), then cut
/// to options.ranks (read/rank_filter.h's rule) and every table merged. Throws
/// std::invalid_argument where a rank of options.ranks has no process (MissingRank's message).
Report MergeSummaries(RunSummaries run, const ReportOptions& options);

/// The report of `trace` (SummarizeForReport, then MergeSummaries). The rvalue form moves the NVTX
/// summaries and the names out of the trace (no copy: what `trainprof report` uses); the other
/// copies them.
Report Analyze(const Trace& trace, const ReportOptions& options);
Report Analyze(Trace&& trace, const ReportOptions& options);

}  // namespace trainprof::collector
