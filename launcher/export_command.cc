#include "export_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "collector/analysis/host_clocks.h"
#include "collector/read/process_tree.h"
#include "collector/base/output_sink.h"
#include "collector/export/export_chrome.h"
#include "collector/export/export_folded.h"
#include "collector/export/export_kineto.h"
#include "collector/export/selection.h"
#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
#include "collector/summary/summary_file.h"
#include "export_steps.h"
#include "input_files.h"
#include "output_file.h"
#include "progress_bar.h"
#include "trace_inputs.h"

namespace trainprof::launcher {
namespace {

constexpr int kOk = 0;
constexpr int kOutputError = 1;
constexpr int kInputError = 2;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The collector's progress, drawn by the launcher's bar.
class BarProgress : public collector::ExportProgress {
 public:
  explicit BarProgress(ProgressBar* bar) : bar_(bar) {}
  void Update(uint64_t written) override { bar_->Update(written); }

 private:
  ProgressBar* bar_;
};

// Writes one output: a staged file (or stdout), `write` streaming into its sink. Returns the exit
// status, having said what failed. A file that is one of the inputs is refused before anything is
// written (input_files.h).
template <typename WriteFn>
int WriteOutput(const std::string& output, const InputFiles& inputs, bool gzip, WriteFn write) {
  const bool to_stdout = output == "-";
  // Written to a new temporary beside the file and renamed, so a failed export never looks
  // complete; devices and FIFOs in place, symlinks through when the rule allows (output_file.h).
  std::string error;
  std::unique_ptr<OutputFile> file;
  std::unique_ptr<collector::OutputSink> sink;
  if (to_stdout) {
    sink = collector::OpenOutput(output, gzip, &error);
  } else if ((file = OutputFile::Open(output, &error))) {
    if (std::string refused = inputs.Check(*file, "-o " + output); !refused.empty()) {
      Error(refused);
      return kInputError;  // the temporary is removed with `file`
    }
    sink = collector::OpenOutputFd(file->ReleaseFd(), gzip, &error);
  }
  if (!sink) {
    Error("cannot write " + output + ": " + error);
    return kOutputError;
  }
  write(sink.get());
  error = sink->Close();
  if (error.empty() && file != nullptr) file->Commit(&error);
  if (!error.empty()) {
    Error("cannot write " + (to_stdout ? std::string("to stdout") : output) + ": " + error);
    return kOutputError;  // the temporary is removed with `file`
  }
  return kOk;
}

// mkdir -p of `dir` (as tensorboard_trace_handler's os.makedirs(exist_ok=True)); "" or the error.
std::string MakeDirectories(const std::string& dir) {
  std::string path;
  size_t pos = 0;
  while (pos <= dir.size()) {
    const size_t slash = dir.find('/', pos);
    path = dir.substr(0, slash == std::string::npos ? dir.size() : slash);
    pos = slash == std::string::npos ? dir.size() + 1 : slash + 1;
    if (path.empty()) continue;
    if (mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) return path + ": " + std::strerror(errno);
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return dir + ": not a directory (--format kineto writes one file per rank into -o DIR)";
  return "";
}

}  // namespace

void AddExportOptions(CLI::App* sub, ExportArgs* args) {
  AddTracePathsArgument(sub, &args->paths);
  sub->add_option("--format", args->format,
                  "chrome: Chrome Trace Event JSON, opened by ui.perfetto.dev and chrome://tracing; kineto: "
                  "torch.profiler (Kineto) JSON traces, one per rank, for Holistic Trace Analysis and TensorBoard; "
                  "folded: the CPU samples of trainprof run --sample, or the call-site stacks of --backtrace, as "
                  "folded stacks (frame;frame;leaf COUNT) for FlameGraph and speedscope")
      ->check(CLI::IsMember({"chrome", "kineto", "folded"}))
      ->capture_default_str();
  sub->add_option("--weight", args->weight,
                  "folded: the count of each stack: calls (ranges, marks and CUDA calls taken there), or time "
                  "(their total duration in ns)")
      ->check(CLI::IsMember({"calls", "time"}))
      ->capture_default_str();
  sub->add_option("--from", args->from,
                  "folded: the stacks of the CPU samples (trainprof run --sample; COUNT = samples), of the call sites "
                  "(ranges, marks and CUDA calls with stacks), or auto: the samples when the selected processes have "
                  "any, else the call sites")
      ->check(CLI::IsMember({"auto", "samples", "callsites"}))
      ->capture_default_str();
  sub->add_option("-o,--output", args->output,
                  "chrome: output file (default trace.json, or trace.json.gz with --gzip); - for stdout; a name "
                  "ending in .gz is gzip-compressed. kineto: the directory for the per-rank files (required)")
      ->check([](const std::string& v) { return v.empty() ? std::string("an empty path") : std::string(); })
      ->type_name("FILE|DIR");
  sub->add_flag("--gzip", args->gzip, "Compress the output with gzip");
  sub->add_option("--window", args->window,
                  "Only the events that overlap a time window: START:END in seconds from the run's start "
                  "(\"2:5.5\", \"10:\"), or nvtx:NAME#N, the N-th NVTX range named NAME (from 1)")
      ->check([](const std::string& v) {
        collector::WindowSpec w;
        return collector::ParseWindow(v, &w);
      })
      ->type_name("START:END|nvtx:NAME#N");
  sub->add_option("--pid", args->pids, "Only these processes (repeatable, or a comma list)")
      ->check(IdListCheck(1))
      ->type_name("PID[,PID...]");
  sub->add_option("--rank", args->ranks, "Only the processes of these ranks (repeatable, or a comma list)")
      ->check(IdListCheck(0))
      ->type_name("RANK[,RANK...]");
  sub->footer("Exit status: 0 written (damaged files are warnings on stderr); 1 output not written;\n"
              "2 no trace found, a PATH unreadable, no usable trace, a selection that matches nothing, or an\n"
              "output that is one of the trace files read.\n"
              "Reference: docs/cli.md.");
}

int RunExport(const ExportArgs& args) {
  const bool kineto = args.format == "kineto";
  if (kineto && args.output.empty()) {
    Error("--format kineto needs -o DIR: the directory the per-rank trace files go into");
    return kInputError;
  }
  if (kineto && args.output == "-") {
    Error("--format kineto writes one file per rank into a directory: -o - (stdout) is not possible");
    return kInputError;
  }
  collector::SelectionSpec spec;
  if (!args.window.empty()) collector::ParseWindow(args.window, &spec.window);  // checked by CLI11
  for (const std::string& v : args.pids) collector::ParseIdList(v, 1, &spec.pids);
  for (const std::string& v : args.ranks) collector::ParseIdList(v, 0, &spec.ranks);

  std::optional<collector::TraceFileList> list = FindTraceFilesOrSay(args.paths);
  if (!list) return kInputError;
  // A summary file (`trainprof summarize`) holds statistics, not the events a timeline needs.
  std::erase_if(list->files, [](const std::string& f) {
    if (!collector::IsSummaryFile(f)) return false;
    std::cerr << "trainprof: warning: " << f << ": a summary file (trainprof summarize) has no events to export: skipped "
              << "(export reads the trace files; trainprof report takes summaries)\n";
    return true;
  });
  if (list->files.empty()) {
    Error("no trace files to export in " + JoinPaths(args.paths) + " (summary files hold no events)");
    return kInputError;
  }
  // An output that is one of the inputs: refused now, before the reading (and again when opened;
  // the Kineto files once their names are known, before the first is written).
  const InputFiles inputs(list->files);
  const std::string output = !args.output.empty() ? args.output
                             : args.format == "folded" ? "-"
                             : args.gzip ? "trace.json.gz" : "trace.json";
  if (std::string refused = output == "-" ? inputs.CheckFd(STDOUT_FILENO, "stdout")
                            : kineto      ? ""
                                          : inputs.CheckPath(output, "-o " + output);
      !refused.empty()) {
    Error(refused);
    return kInputError;
  }
  // Folded stacks need only the summed (name, stack) uses of ranges and marks, the CPU samples and
  // the CUDA calls that have a stack: no other NVTX event or CUDA record is kept for them.
  // Chrome and Kineto read each file's NVTX events again as they write them (read/nvtx_stream.h):
  // none is held (only the phases', for the Kineto export's steps).
  // No format uses the per-name CUDA digest (the report's tables).
  collector::ReadOptions read{.keep = collector::KeepNvtx::kStreamed, .cuda_digest = false};
  if (args.format == "folded") {
    read = {.keep = collector::KeepNvtx::kPhases, .keep_cuda = collector::KeepCuda::kStackedCalls, .cuda_digest = false};
  }
  collector::Trace trace = collector::LoadTrace(list->files, read);
  collector::AlignHostClocks(&trace);  // ranks on several hosts: one clock (host_clocks.h)
  collector::OrderByAlignedStarts(&trace);
  size_t usable = 0;
  for (const collector::FileStatus& f : trace.files) {
    if (f.usable) ++usable;
    if (f.damaged()) std::cerr << "trainprof: warning: " << f.path << ": " << collector::DescribeDamage(f) << "\n";
  }
  if (usable == 0) {
    Error(NoReadableTrace(trace.files, JoinPaths(args.paths)));
    return kInputError;
  }
  const collector::TimeAxis axis = collector::MakeTimeAxis(trace);
  std::string error;
  std::optional<collector::Selection> sel = collector::ResolveSelection(trace, axis, spec, &error);
  if (!sel) {
    Error(error);
    return kInputError;
  }
  ProgressBar bar = ProgressBar::ForStderr(collector::ExportEventCount(trace, *sel));
  BarProgress progress(&bar);

  if (args.format == "folded") {
    if (!args.window.empty()) {
      Error("--format folded sums every stack over the whole run: --window is not possible with it");
      return kInputError;
    }
    const collector::FoldedSource source = args.from == "samples"     ? collector::FoldedSource::kSamples
                                           : args.from == "callsites" ? collector::FoldedSource::kCallSites
                                                                      : collector::FoldedSource::kAuto;
    const bool samples = source == collector::FoldedSource::kSamples ||
                         (source == collector::FoldedSource::kAuto && collector::HasSamples(trace, *sel));
    if (samples && args.weight == "time") {
      Error("--weight time: CPU samples have no duration (each line counts samples); use --from callsites for "
            "the call sites' time");
      return kInputError;
    }
    collector::FoldedStats stats;
    const int status = WriteOutput(output, inputs, args.gzip || EndsWith(output, ".gz"), [&](collector::OutputSink* sink) {
      stats = collector::ExportFolded(trace, *sel,
                                      args.weight == "time" ? collector::FoldedWeight::kTime : collector::FoldedWeight::kCalls,
                                      sink, source);
    });
    bar.Finish();
    if (status != kOk) return status;
    if (stats.lines == 0) {
      std::cerr << (stats.samples ? "trainprof: note: no CPU samples in the trace (record them with trainprof run --sample=HZ)\n"
                    : source == collector::FoldedSource::kAuto
                        ? "trainprof: note: no CPU samples and no stacks in the trace (record them with trainprof run "
                          "--sample=HZ, or --backtrace=cuda or nvtx)\n"
                        : "trainprof: note: no stacks in the trace (record them with trainprof run --backtrace=cuda or nvtx)\n");
    } else if (output != "-") {
      std::cerr << "trainprof: " << stats.lines << " stacks of " << stats.events << (stats.samples ? " samples" : " events")
                << " written to " << output
                << " (open it in speedscope.app, or flamegraph.pl " << output << ")\n";
    }
    return kOk;
  }
  if (!kineto) {
    collector::ChromeExportStats stats;
    const int status = WriteOutput(output, inputs, args.gzip || EndsWith(output, ".gz"), [&](collector::OutputSink* sink) {
      stats = collector::ExportChrome(trace, sink, *sel, &progress);
    });
    bar.Finish();
    for (const std::string& problem : stats.problems) std::cerr << "trainprof: warning: " << problem << "\n";
    if (status != kOk) return status;
    if (output != "-") {
      std::cerr << "trainprof: " << stats.events << " events from " << usable << " trace file"
                << (usable == 1 ? "" : "s") << " written to " << output << " (open it in ui.perfetto.dev)\n";
    }
    return kOk;
  }

  if (std::string e = MakeDirectories(args.output); !e.empty()) {
    Error("cannot write " + e);
    return kOutputError;
  }
  const collector::KinetoPlan plan = collector::PlanKinetoFiles(trace, *sel, args.gzip);
  for (size_t i : plan.left_out) {
    const collector::Process& p = trace.processes[i];
    std::cerr << "trainprof: note: pid " << p.pid << " (" << (p.first().argv.empty() ? p.first().executable : p.first().argv[0])
              << ") has no rank and no ancestor with one: left out of the Kineto export (HTA takes a file without "
                 "distributedInfo as rank 0); export it alone with --pid "
              << p.pid << "\n";
  }
  if (plan.files.empty()) {
    Error("no process to export: every selected process was left out");
    return kInputError;
  }
  std::string dir = args.output;
  if (!EndsWith(dir, "/")) dir += '/';
  for (const collector::KinetoFile& f : plan.files) {
    if (std::string refused = inputs.CheckPath(dir + f.name, "the Kineto file " + dir + f.name); !refused.empty()) {
      Error(refused);
      return kInputError;
    }
  }
  const std::vector<std::vector<collector::StepSpan>> steps = ExportSteps(trace, *sel);
  uint64_t events = 0;
  for (const collector::KinetoFile& f : plan.files) {
    const int status = WriteOutput(dir + f.name, inputs, args.gzip, [&](collector::OutputSink* sink) {
      const collector::KinetoExportStats stats = collector::ExportKineto(trace, axis, *sel, f, steps, sink, &progress, events);
      events += stats.events;
      for (const std::string& problem : stats.problems) std::cerr << "trainprof: warning: " << problem << "\n";
    });
    if (status != kOk) {
      bar.Finish();
      return status;
    }
  }
  bar.Finish();
  std::cerr << "trainprof: " << events << " events from " << usable << " trace file" << (usable == 1 ? "" : "s")
            << " written to " << plan.files.size() << " Kineto trace" << (plan.files.size() == 1 ? "" : "s") << " in "
            << args.output << " (open with HolisticTraceAnalysis: TraceAnalysis(trace_dir=\"" << args.output
            << "\"))\n";
  return kOk;
}

}  // namespace trainprof::launcher
