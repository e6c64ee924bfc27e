// `trainprof run [OPTIONS] [--] COMMAND [ARGS...]`: run a command with the injection library
// preloaded, wait for it, and leave one trace file per process in the output directory.
//
//   options ─► OutputPattern, trace list, InjectFiles (inject_env.h, output_path.h)
//           ─► capture options (capture_options.h) ─► TRAINPROF_CAPTURE_* in the environment
//           ─► ChildProcess::Start (fork; the child expands %p, mkdir -p, sets
//              TRAINPROF_ROOT_PID, execvpe) ─► Wait (signal forwarding; with
//              --capture-range-end=stop-shutdown, TreeShutdown ends the run: capture_shutdown.h)
//           ─► RecordRootEnd + one summary line (trace_dir.h) ─► optional report
//
// Exit status: the command's (128+N if signal N ended it); 126/127 if it could not be started;
// 1 if trainprof could not prepare the run; 2 for usage errors (docs/cli.md, "Exit status").
#pragma once

#include <string>
#include <vector>

#include "capture_options.h"

namespace CLI {
class App;
}

namespace trainprof::launcher {

struct RunArgs {
  std::string output;  ///< -o pattern; empty: ./trainprof-YYYYmmdd-HHMMSS
  bool follow_children = false;
  std::string trace;   ///< --trace list as given; empty: all sources
  bool report = false;
  std::string wait = "all";  ///< --wait: "all" descendants, or only the "primary" process
  CaptureArgs capture;       ///< --capture-range, --capture-range-end, --delay, --duration
  std::string backtrace;     ///< --backtrace LIST (empty: the default, cuda:1000)
  std::string sample;        ///< --sample HZ (empty: no CPU samples)
  std::string umask = "077";  ///< --umask: bits removed from the trace directory's and files' modes
  std::vector<std::string> command;
};

/// Adds run's options and the COMMAND positional to `sub`.
void AddRunOptions(CLI::App* sub, RunArgs* args);

/// Runs the command; returns trainprof's exit status.
int RunRun(const RunArgs& args);

}  // namespace trainprof::launcher
