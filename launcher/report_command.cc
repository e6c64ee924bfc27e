#include "report_command.h"

#include <malloc.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <stdexcept>
#include <thread>

#include "collector/analysis/host_clocks.h"
#include "collector/read/process_tree.h"
#include "collector/base/output_sink.h"
#include "collector/export/selection.h"
#include "collector/render/render.h"
#include "collector/report/report.h"
#include "collector/read/rank_filter.h"
#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
#include "input_files.h"
#include "output_file.h"
#include "progress_bar.h"
#include "trace_inputs.h"
#include "trainprof/path_walk.h"

namespace trainprof::launcher {
namespace {

namespace fs = std::filesystem;
using collector::Report;

constexpr int kOk = 0;
constexpr int kOutputError = 1;
constexpr int kInputError = 2;

// Writes to a new temporary beside the file and renames it into place, so a half-written report
// never looks complete (and an existing one stays intact when writing fails); devices and FIFOs
// are written in place, symlinks through when the symlink rule allows (output_file.h).
// `write` streams the content into the sink it is given (the report is never whole in memory).
// A file that is one of the inputs is refused before anything is written (input_files.h).
int WriteFileAtomically(const std::string& path, const InputFiles& inputs,
                        const std::function<void(collector::OutputSink*)>& write) {
  std::string error;
  std::unique_ptr<OutputFile> file = OutputFile::Open(path, &error);
  if (file != nullptr) {
    if (std::string refused = inputs.Check(*file, "-o " + path); !refused.empty()) {
      Error(refused);
      return kInputError;  // the temporary is removed with `file`
    }
  }
  std::unique_ptr<collector::OutputSink> sink;
  if (file != nullptr) sink = collector::OpenOutputFd(file->ReleaseFd(), /*gzip=*/false, &error);
  if (sink == nullptr) {
    Error("cannot write " + path + ": " + error);
    return kOutputError;
  }
  write(sink.get());
  error = sink->Close();
  if (error.empty()) file->Commit(&error);
  if (!error.empty()) {
    Error("cannot write " + path + ": " + error);  // the temporary is removed with `file`
    return kOutputError;
  }
  return kOk;
}

// stdout may be a full disk (>/dev/full), a closed descriptor or a file system that fails: a
// report that was not written must say so, not exit 1 silently.
bool WriteStdout(const std::function<void(collector::OutputSink*)>& write) {
  std::string error;
  std::unique_ptr<collector::OutputSink> sink = collector::OpenOutput("", /*gzip=*/false, &error);
  if (sink != nullptr) {
    write(sink.get());
    error = sink->Close();
  }
  if (!error.empty()) Error("cannot write the report to stdout: " + error);
  return error.empty();
}

// Whether -o names a prefix of the CSV tables' file names (PREFIX<table>.csv): its last component
// ends in '-', '_' or '.' ("out/run1-"). Anything else is a directory: existing, named with a
// trailing '/', or a plain name ("results"), which is made.
bool IsCsvPrefix(const std::string& output) {
  const char end = output.empty() ? '/' : output.back();
  return end == '-' || end == '_' || end == '.';
}

// Whether -o names a single CSV file ("results.csv"), which the tables, one file each, cannot be.
bool NamesOneCsvFile(const std::string& output) {
  return output.size() > 4 && output.compare(output.size() - 4, 4, ".csv") == 0 && !StreamPathFd(output);
}

// CSV: a directory gets DIR/<table>.csv, a prefix PREFIX<table>.csv (IsCsvPrefix). Without -o the
// tables follow each other on stdout, each after a "# <table>.csv" line.
int WriteCsv(const Report& report, const std::string& output, const InputFiles& inputs) {
  // All tables in one stream, each after a "# <table>.csv" line.
  auto all = [&](collector::OutputSink* sink) {
    bool first = true;
    collector::RenderCsv(report, [&](const std::string& name) {
      sink->Write((first ? "# " : "\r\n# ") + name + "\r\n");
      first = false;
      return sink;
    });
  };
  if (output.empty() || output == "-") return WriteStdout(all) ? kOk : kOutputError;
  // /dev/stdout, /dev/fd/N...: that stream, as stdout would get them. A device or FIFO (/dev/null,
  // a pipe) the same, in place; never files named after it.
  struct stat st {};
  if (StreamPathFd(output) || (stat(output.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))) {
    return WriteFileAtomically(output, inputs, all);
  }
  std::error_code ec;
  bool is_dir = output.back() == '/' || fs::is_directory(output, ec) || !IsCsvPrefix(output);
  fs::path dir = is_dir ? fs::path(output) : fs::path(output).parent_path();
  if (!dir.empty()) {
    // Made component by component, not through another user's symlink in a sticky
    // world-writable directory (path_walk.h); new directories 0777 & ~umask.
    mode_t mask = umask(0);
    umask(mask);
    int dir_fd = -1;
    char why[1024];
    int e = pathwalk::WalkPath(dir.c_str(), pathwalk::Want::kDirectory, true, 0777 & ~mask, &dir_fd, nullptr, why,
                               sizeof(why));
    if (e != 0) {
      Error("cannot write the CSV tables to " + output + ": " + (why[0] != '\0' ? std::string(why) : strerror(e)));
      return kOutputError;
    }
    close(dir_fd);
  }
  // Every table's file is checked and staged before any is written, and all are renamed into
  // place at the end: a refused name leaves no partial set behind. Each table is streamed into its
  // file: its rows go out as they are made.
  std::vector<std::string> names;
  collector::RenderCsv(report, [&](const std::string& name) -> collector::OutputSink* {
    names.push_back(name);
    return nullptr;  // names only
  });
  std::vector<std::string> written;
  std::vector<std::unique_ptr<OutputFile>> files;
  for (const std::string& table : names) {
    std::string path = is_dir ? (fs::path(output) / table).string() : output + table;
    std::string why;
    files.push_back(OutputFile::Open(path, &why));
    if (!files.back()) {
      Error("cannot write " + path + ": " + why + "; no CSV table was written");
      return kOutputError;
    }
    if (std::string refused = inputs.Check(*files.back(), "the CSV table " + path); !refused.empty()) {
      Error(refused + " (no CSV table was written)");
      return kInputError;
    }
    written.push_back(path);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    std::string why;
    std::unique_ptr<collector::OutputSink> sink = collector::OpenOutputFd(files[i]->ReleaseFd(), false, &why);
    if (sink != nullptr) {
      collector::RenderCsv(report, [&](const std::string& name) -> collector::OutputSink* {
        return name == names[i] ? sink.get() : nullptr;
      });
      why = sink->Close();
    }
    if (!why.empty()) {
      Error("cannot write " + written[i] + ": " + why + "; no CSV table was written");
      return kOutputError;
    }
  }
  for (size_t i = 0; i < names.size(); ++i) {
    std::string why;
    if (!files[i]->Commit(&why)) {
      Error("cannot write " + written[i] + ": " + why + (i == 0 ? "; no CSV table was written" : ""));
      return kOutputError;
    }
  }
  // -o names a directory or a prefix (not a file): say where the tables went.
  if (!written.empty()) {
    std::cerr << "trainprof: " << written.size() << " CSV tables written: " << written.front()
              << (written.size() > 1 ? " ... " + written.back() : "") << "\n";
  }
  return kOk;
}


}  // namespace

void AddReportOptions(CLI::App* sub, ReportArgs* args) {
  AddTracePathsArgument(sub, &args->paths);
  sub->add_option("--format", args->format, "Output format: text (aligned tables), json, csv (one file per table)")
      ->check(CLI::IsMember({"text", "json", "csv"}))
      ->capture_default_str();
  sub->add_option("-o,--output", args->output,
                  "Write to this file instead of stdout (- is stdout); with --format csv a directory or a file name prefix "
                  "(e.g. out/report- gives out/report-nvtx_ranges.csv)")
      ->check([](const std::string& v) { return v.empty() ? std::string("an empty path") : std::string(); })
      ->type_name("PATH");
  sub->add_flag("--by-process", args->by_process, "Also print each process's tables (NVTX ranges, CUDA API, GPU kernels, memory operations)");
  sub->add_flag("--by-callsite", args->by_callsite,
                "Also print the call sites of the ranges and CUDA calls that have stacks (trainprof run --backtrace): "
                "per name and call site (the first user frame), calls and total time");
  sub->add_flag("--by-phase", args->by_phase,
                "Also print the function table of the CPU samples (trainprof run --sample) per training phase "
                "the samples fell in (forward, backward, data_wait, optimizer, a DataLoader worker's getitem, ...)");
  sub->add_flag("--by-rank", args->by_rank,
                "Print every rank's rows in the Processes, Bottleneck, Ranks and GPU devices tables (default: above 16 "
                "ranks, the lowest rank, the straggler and the outlier ranks, with the spread across ranks)");
  sub->add_option("--rank", args->ranks,
                  "Only the processes of these ranks (and their DataLoader workers), as if the other files were not "
                  "given; repeatable, or a comma list")
      ->check(IdListCheck(0))
      ->type_name("RANK[,RANK...]");
  sub->add_option("--top", args->top, "Rows per statistics table, the largest first: total time, self time for operators (0 = all)")
      ->type_name("N")
      ->check(CLI::Validator(  // size_t would take "-1" as 2^64-1
          [](std::string& v) -> std::string {
            bool digits = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
            return digits ? "" : "must be 0 (all rows) or a number of rows, not '" + v + "'";
          },
          ""))
      ->capture_default_str();
  sub->add_flag("--no-group-names", args->no_group_names,
                "Show every NVTX range name on its own row (default: names that differ only in embedded numbers, "
                "e.g. \"step 17\", grouped as \"step <N>\")");
  sub->add_flag("--strict", args->strict, "Exit with status 2 if any trace file is damaged or truncated");
  sub->add_flag("--full-names", args->full_names,
                "Show GPU kernel names demangled in full (default: shortened, template arguments and parameters "
                "elided)");
  sub->footer(
      "Exit status: 0 report written (damaged files are warnings on stderr); 1 output not written;\n"
      "2 no trace found, a PATH unreadable, no usable trace, --strict with a damaged file, or an output\n"
      "that is one of the trace files read.\n"
      "Reference: docs/report.md; JSON schema: docs/report-schema.md.");
}

namespace {

// With CUDA windows, each window's records (megabytes) are allocated, decoded and freed in
// turn. glibc gives such blocks back to the kernel (its mmap threshold, which
// grows only up to 32 MiB, and the heap trim past twice that) and takes the pages back with a
// fault each: 545k page faults, 1.3 s of system time for 10M CUDA records. A fixed threshold of
// 32 MiB and up to 64 MiB of freed heap kept cut that to 93k and 0.46 s (5.4 -> 4.7 s wall, peak
// RSS unchanged; docs/performance.md, "One pass, bounded samples"). mallopt(3), glibc only.
void KeepFreedMemoryForWindows(const collector::Trace& trace) {
#if defined(__GLIBC__)
  if (!collector::ReadsCudaWindows(trace)) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#else
  (void)trace;
#endif
}

}  // namespace

namespace {

// Children shown "(not recorded)" whose own trace file lies beside their parent's but was not
// given (`trainprof report DIR/pid-1.trace` of a run with DataLoader workers): one warning naming
// them (the first 3), since the report cannot tell that from a child that left no trace. "" if none.
std::string ChildrenNotGiven(const Report& report, const std::vector<std::string>& given) {
  namespace fs = std::filesystem;
  auto is_given = [&](const fs::path& p) {
    std::error_code ec;
    return std::any_of(given.begin(), given.end(), [&](const std::string& g) { return fs::equivalent(p, g, ec); });
  };
  std::vector<fs::path> found;
  for (const collector::ProcessRow& p : report.processes) {
    if (p.recorded != "no" || p.parent < 0 || static_cast<size_t>(p.parent) >= report.processes.size()) continue;
    const collector::ProcessRow& parent = report.processes[static_cast<size_t>(p.parent)];
    if (parent.files.empty()) continue;
    const fs::path candidate = fs::path(parent.files.front()).parent_path() / ("pid-" + std::to_string(p.pid) + ".trace");
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && !is_given(candidate)) found.push_back(candidate);
  }
  if (found.empty()) return "";
  std::string files;
  for (size_t i = 0; i < found.size() && i < 3; ++i) files += (i == 0 ? "" : ", ") + found[i].string();
  if (found.size() > 3) files += ", +" + std::to_string(found.size() - 3) + " more";
  return std::to_string(found.size()) + (found.size() == 1 ? " process" : " processes") +
         " shown as (not recorded) left trace files that were not given (" + files +
         "): give their directory (trainprof report " + found.front().parent_path().string() + ") to report them";
}

}  // namespace

int RunReport(const ReportArgs& args) {
  // Under a file size limit (ulimit -f, a batch system's cap) a write past it raises SIGXFSZ,
  // which would kill trainprof and leave a temporary file behind. Ignored, the write fails with
  // EFBIG and is reported like any other write error. (Runs after COMMAND was started, so no
  // process of the run inherits the SIG_IGN.)
  signal(SIGXFSZ, SIG_IGN);
  if (args.format != "text" && args.format != "json" && args.format != "csv") {
    Error("report: unknown --format '" + args.format + "' (text, json or csv)");
    return kInputError;
  }
  if (args.paths.empty()) {
    Error("report: no PATH given (trace files or a directory of them)");
    return kInputError;
  }
  if (args.format == "csv" && NamesOneCsvFile(args.output)) {
    Error("report: -o " + args.output + ": --format csv writes one file per table; give a directory (" +
          args.output.substr(0, args.output.size() - 4) + "/) or a file name prefix (" +
          args.output.substr(0, args.output.size() - 4) + "-)");
    return kInputError;
  }
  std::optional<collector::TraceFileList> list = FindTraceFilesOrSay(args.paths);
  if (!list) return kInputError;
  // An output that is one of the inputs: refused now, before the reading (and again when opened).
  const InputFiles inputs(list->files);
  const bool to_stdout = args.output.empty() || args.output == "-";
  if (std::string refused = to_stdout ? inputs.CheckFd(STDOUT_FILENO, "stdout") : inputs.CheckPath(args.output, "-o " + args.output);
      !refused.empty()) {
    Error(refused);
    return kInputError;
  }

  // NVTX statistics are made while reading; only the Python phases' events are kept (the step
  // analysis needs their times), so memory does not grow with the number of NVTX records. A large
  // trace (or TRAINPROF_CUDA_WINDOW_RECORDS) has its CUDA records read again window by window
  // from the files (report.h, CudaWindowRecords).
  // On a terminal, a read that takes more than 2 s (1024 rank files: ~10 s) shows a progress bar,
  // then what it does next.
  // Summary files (`trainprof summarize`) are told from traces by their content, whatever their name.
  std::vector<std::string> trace_paths, summary_paths;
  // A file named *.summary that is none is read as one, and said as such ("not a trainprof summary").
  for (const std::string& f : list->files) {
    (collector::IsSummaryFile(f) || f.ends_with(".summary") ? summary_paths : trace_paths).push_back(f);
  }
  std::atomic<uint64_t> files_done{0};
  ProgressBar bar = ProgressBar::ForStderr(list->files.size(), 2'000'000'000, "reading", "files");
  collector::Trace trace;
  std::vector<collector::SummaryFile> summaries;
  {
    EveryTenthOfASecond ticker([&] { bar.Update(files_done.load(std::memory_order_relaxed)); });
    if (!trace_paths.empty()) trace = collector::LoadTraceForReport(trace_paths, &files_done);
    // Their names go into the trace's pool, which the report's names become.
    for (const std::string& path : summary_paths) {
      summaries.push_back(collector::ReadSummaryFile(path, &trace.strings));
      files_done.fetch_add(1, std::memory_order_relaxed);
    }
  }
  const bool progress_shown = bar.drawn();
  bar.Finish();
  // Ranks on several hosts are put on one clock (host_clocks.h), from every rank, and --rank cuts
  // the processes after that: both in the merge (MergeSummaries).
  KeepFreedMemoryForWindows(trace);
  std::vector<collector::FileStatus> all_files = trace.files;
  for (const collector::SummaryFile& f : summaries) all_files.insert(all_files.end(), f.files.begin(), f.files.end());
  size_t damaged = 0, usable = 0;
  for (const collector::FileStatus& f : all_files) {
    if (f.usable) ++usable;
    if (!f.damaged()) continue;
    ++damaged;
    std::cerr << "trainprof: warning: " << f.path << ": " << collector::DescribeDamage(f) << "\n";
  }
  if (usable == 0) {
    Error(NoReadableTrace(all_files, JoinPaths(args.paths)));
    return kInputError;
  }
  size_t processes = trace.processes.size();
  for (const collector::SummaryFile& f : summaries) processes += f.processes.size();

  collector::ReportOptions options;
  options.by_process = args.by_process;
  options.by_callsite = args.by_callsite;
  options.by_phase = args.by_phase;
  options.by_rank = args.by_rank;
  for (const std::string& v : args.ranks) collector::ParseIdList(v, 0, &options.ranks);
  options.top = args.top;
  options.full_names = args.full_names;
  options.group_names = !args.no_group_names;
  // The analysis (a windowed CUDA pass reads the files again) says so once the report has taken 2 s.
  const std::string doing = "analysing " + std::to_string(processes) + " processes";
  if (progress_shown) bar.Note(doing);
  Report report;
  std::string rank_error;  // a --rank no process has
  {
    // The ticker's thread draws on `bar`: nothing else touches it until the ticker is gone.
    EveryTenthOfASecond ticker([&] { bar.NoteOnceLate(doing); });
    try {
      collector::RunSummaries run = collector::SummarizeForReport(std::move(trace));
      for (size_t i = 0; i < summaries.size(); ++i) collector::AddSummaryFile(&run, std::move(summaries[i]), summary_paths[i]);
      report = collector::MergeSummaries(std::move(run), options);
    } catch (const std::invalid_argument& e) {
      rank_error = e.what();
    }
  }
  bar.Finish();
  if (!rank_error.empty()) {
    Error(rank_error);
    return kInputError;
  }
  report.warnings.insert(report.warnings.begin(), list->warnings.begin(), list->warnings.end());
  if (std::string w = ChildrenNotGiven(report, list->files); !w.empty()) report.warnings.push_back(std::move(w));
  report.stats += list->losses;

  int status = kOk;
  if (args.format == "csv") {
    status = WriteCsv(report, args.output, inputs);
  } else {
    auto render = [&](collector::OutputSink* sink) {
      if (args.format == "json") {
        collector::RenderJson(report, sink);
      } else {
        collector::RenderText(report, sink);
      }
    };
    status = to_stdout ? (WriteStdout(render) ? kOk : kOutputError) : WriteFileAtomically(args.output, inputs, render);
  }
  if (status != kOk) return status;
  if (args.strict && damaged > 0) {
    Error(std::to_string(damaged) + " damaged trace file" + (damaged == 1 ? "" : "s") + " (--strict)");
    return kInputError;
  }
  return kOk;
}

}  // namespace trainprof::launcher
