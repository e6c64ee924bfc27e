// The trainprof command: parses arguments and dispatches to a subcommand. Nothing else lives here.
//
//   trainprof run    [OPTIONS] [--] COMMAND [ARGS...]   run_command.h
//   trainprof report [OPTIONS] DIR|FILE...              report_command.h (collector/)
//   trainprof summarize [-o DIR] DIR|FILE...            summarize_command.h
//   trainprof export [OPTIONS] DIR|FILE...              export_command.h
//
// Exit status 2 for usage errors; otherwise the subcommand's. docs/cli.md is the reference.
#include <CLI/CLI.hpp>
#include <iostream>
#include <new>
#include <string>

#include "export_command.h"
#include "report_command.h"
#include "run_command.h"
#include "summarize_command.h"

#ifndef TRAINPROF_VERSION
#error "TRAINPROF_VERSION must be defined by the build (launcher/CMakeLists.txt)"
#endif

namespace {

constexpr int kUsageError = 2;

}  // namespace

int main(int argc, char** argv) {
  using namespace trainprof::launcher;

  CLI::App app{"trainprof: where does the time of a training run go?\n"
               "Records NVTX ranges, PyTorch phases, CUDA API calls and GPU activity (CUPTI) and the process tree of every process of a run, "
               "then reports statistics and the bottleneck.",
               "trainprof"};
  app.set_version_flag("--version", "trainprof " TRAINPROF_VERSION, "Print the version and exit");
  app.require_subcommand(1);
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    // An unknown option before `--` is an "extra" argument to CLI11: name it as such.
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      std::vector<const CLI::App*> apps = {failed};
      for (const CLI::App* sub : failed->get_subcommands()) apps.push_back(sub);
      for (const CLI::App* a : apps) {
        for (const std::string& extra : a->remaining()) {
          if (extra.size() > 1 && extra[0] == '-' && extra != "--") {
            return "trainprof: unknown option " + extra + "\nRun with --help for more information.\n";
          }
        }
      }
    }
    return "trainprof: " + std::string(e.what()) + "\nRun with --help for more information.\n";
  });
  app.footer("Start with: trainprof run -- python train.py; then trainprof report DIR.\n"
             "Reference: docs/cli.md.");

  RunArgs run_args;
  CLI::App* run = app.add_subcommand("run", "Run a command and record one trace file per process");
  AddRunOptions(run, &run_args);

  ReportArgs report_args;
  CLI::App* report = app.add_subcommand("report", "Print statistics and the bottleneck of recorded traces");
  AddReportOptions(report, &report_args);

  SummarizeArgs summarize_args;
  CLI::App* summarize = app.add_subcommand(
      "summarize", "Summarise traces into one summary file per trace file, for trainprof report to merge (one task per node)");
  AddSummarizeOptions(summarize, &summarize_args);

  ExportArgs export_args;
  CLI::App* exporter = app.add_subcommand("export", "Write recorded traces for another tool (Perfetto, chrome://tracing; Holistic Trace Analysis, TensorBoard)");
  AddExportOptions(exporter, &export_args);

  if (argc <= 1) {
    std::cerr << app.help();
    return kUsageError;
  }
  // The first argument must be a subcommand or one of trainprof's own options (--help, -h,
  // --version): CLI11 alone says only "A subcommand is required" for an unknown option there.
  if (const std::string first = argv[1]; first != "run" && first != "report" && first != "export" && first != "summarize" &&
                                         first != "--help" && first != "-h" && first != "--version" && first != "-") {
    std::cerr << "trainprof: "
              << (first[0] == '-' ? "unknown option " + first + " (options come after the subcommand: run, report, summarize or export)"
                                  : "unknown subcommand '" + first + "' (run, report, summarize or export)")
              << "\nRun with --help for more information.\n";
    return kUsageError;
  }
  // `--option=` with nothing after the `=`: CLI11 would take the next argument as the value
  // (`--backtrace= -o DIR` read "-o" as the backtrace list). Every trainprof option that takes
  // `=VALUE` needs a non-empty one. The scan stops where the launched command begins (`--`, or
  // run's first positional argument): its arguments are its own.
  const std::string command = argv[1];
  if (const CLI::App* sub = command == "run"         ? run
                            : command == "report"    ? report
                            : command == "summarize" ? summarize
                            : command == "export"    ? exporter
                                                     : nullptr;
      sub != nullptr) {
    bool value_next = false;
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--") break;
      if (value_next) {
        value_next = false;
        continue;
      }
      if (arg.size() < 2 || arg[0] != '-') {
        if (sub == run) break;
        continue;
      }
      const size_t eq = arg.find('=');
      const CLI::Option* o = sub->get_option_no_throw(arg.substr(0, eq));
      if (o == nullptr) continue;
      if (eq == std::string::npos) {
        value_next = o->get_type_size() > 0;
      } else if (eq + 1 == arg.size()) {
        std::cerr << "trainprof: " << arg << " needs a value after the '='\n"
                  << "Run with --help for more information.\n";
        return kUsageError;
      }
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);  // prints help, the version, or the error
    return status == 0 ? 0 : kUsageError;
  }

  try {
    if (run->parsed()) return RunRun(run_args);
    if (report->parsed()) return RunReport(report_args);
    if (exporter->parsed()) return RunExport(export_args);
    if (summarize->parsed()) return RunSummarize(summarize_args);
  } catch (const std::bad_alloc&) {
    std::cerr << "trainprof: error: out of memory\n";
    return 1;
  }
  return kUsageError;  // unreachable with require_subcommand(1)
}
