#include "export_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "collector/export/export_chrome.h"
#include "collector/base/output_sink.h"
#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
#include "output_file.h"
#include "trace_inputs.h"

namespace trainprof::launcher {
namespace {

constexpr int kOk = 0;
constexpr int kOutputError = 1;
constexpr int kInputError = 2;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void AddExportOptions(CLI::App* sub, ExportArgs* args) {
  AddTracePathsArgument(sub, &args->paths);
  sub->add_option("--format", args->format,
                  "chrome: Chrome Trace Event JSON, opened by ui.perfetto.dev and chrome://tracing")
      ->check(CLI::IsMember({"chrome"}))
      ->capture_default_str();
  sub->add_option("-o,--output", args->output,
                  "Output file (default trace.json, or trace.json.gz with --gzip); - for stdout; a name "
                  "ending in .gz is gzip-compressed")
      ->check([](const std::string& v) { return v.empty() ? std::string("an empty path") : std::string(); })
      ->type_name("FILE");
  sub->add_flag("--gzip", args->gzip, "Compress the output with gzip");
  sub->footer("Exit status: 0 written (damaged files are warnings on stderr); 1 output not written;\n"
              "2 no trace found, a PATH unreadable, or no usable trace. Reference: docs/cli.md.");
}

int RunExport(const ExportArgs& args) {
  std::optional<collector::TraceFileList> list = FindTraceFilesOrSay(args.paths, "");
  if (!list) return kInputError;
  collector::Trace trace = collector::LoadTrace(list->files);
  size_t usable = 0;
  for (const collector::FileStatus& f : trace.files) {
    if (f.usable) ++usable;
    if (f.damaged()) std::cerr << "trainprof: warning: " << f.path << ": " << collector::DescribeDamage(f) << "\n";
  }
  if (usable == 0) {
    Error("none of the " + std::to_string(trace.files.size()) + " trace files could be read");
    return kInputError;
  }

  std::string output = args.output;
  if (output.empty()) output = args.gzip ? "trace.json.gz" : "trace.json";
  const bool gzip = args.gzip || EndsWith(output, ".gz");
  const bool to_stdout = output == "-";
  // Written to a new temporary beside the file and renamed, so a failed export never looks
  // complete; devices and FIFOs in place, symlinks through when the rule allows (output_file.h).
  std::string error;
  std::unique_ptr<OutputFile> file;
  std::unique_ptr<collector::OutputSink> sink;
  if (to_stdout) {
    sink = collector::OpenOutput(output, gzip, &error);
  } else if ((file = OutputFile::Open(output, &error))) {
    sink = collector::OpenOutputFd(file->ReleaseFd(), gzip, &error);
  }
  if (!sink) {
    Error("cannot write " + output + ": " + error);
    return kOutputError;
  }
  collector::ChromeExportStats stats = collector::ExportChrome(trace, sink.get());
  error = sink->Close();
  if (error.empty() && file != nullptr) file->Commit(&error);
  if (!error.empty()) {
    Error("cannot write " + (to_stdout ? std::string("to stdout") : output) + ": " + error);
    return kOutputError;  // the temporary is removed with `file`
  }
  if (!to_stdout) {
    std::cerr << "trainprof: " << stats.events << " events from " << usable << " trace file"
              << (usable == 1 ? "" : "s") << " written to " << output << " (open it in ui.perfetto.dev)\n";
  }
  return kOk;
}

}  // namespace trainprof::launcher
