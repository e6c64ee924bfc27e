#include "run_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>

#include "backtrace_options.h"
#include "sample_options.h"
#include "capture_shutdown.h"
#include "collector/base/text_safety.h"
#include "child_process.h"
#include "inject_env.h"
#include "output_path.h"
#include "report_command.h"
#include "safe_path.h"
#include "trace_dir.h"

namespace trainprof::launcher {

namespace {

// Control bytes (from a %q value, a file name) shown as \xHH, as the text report does.
void Message(const std::string& text) {
  std::string line = "trainprof: " + collector::EscapeControls(text) + "\n";
  fputs(line.c_str(), stderr);
}

// ./trainprof-YYYYmmdd-HHMMSS, with -2, -3... appended if that already exists (two runs in one
// second), so a default run never mixes its traces with an earlier run's.
std::string DefaultOutputPattern() {
  std::string base = DefaultOutputName(std::time(nullptr));
  std::string name = base;
  // lstat: a dangling link (another user's, in a shared directory) takes the name too.
  struct stat st;
  for (int n = 2; lstat(name.c_str(), &st) == 0 && n < 1000; ++n) name = base + "-" + std::to_string(n);
  return name;
}

// Creates the trace directory `dir` (mkdir -p, new directories get exactly `mode`) unless a
// symlink on the way is one the rule refuses (OpenOutputDirectory). Returns the directory's
// resolved path, which the library and the launcher use from then on, or nullopt with *why (no
// "trainprof:" prefix). Also runs in the forked child (%p): allocating is fine there.
std::optional<std::string> PrepareOutputDirectory(const std::string& dir, mode_t mode, std::string* why) {
  return OpenOutputDirectory(dir, true, mode, why);
}

bool LooksLikePython(const std::string& command) {
  std::string base = std::filesystem::path(command).filename().string();
  return base.rfind("python", 0) == 0 || base == "torchrun";
}

// `run` lists COMMAND in its usage line the way users write it.
class RunHelpFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string name) const override {
    return "Usage: " + name + " [OPTIONS] [--] COMMAND [ARGS...]\n";
  }
  std::string make_option_opts(const CLI::Option* opt) const override {
    return opt->get_positional() ? std::string() : CLI::Formatter::make_option_opts(opt);
  }
};

}  // namespace

void AddRunOptions(CLI::App* sub, RunArgs* args) {
  sub->formatter(std::make_shared<RunHelpFormatter>());
  sub->add_option("-o,--output", args->output,
                  "Trace directory, created if missing; %-expansions below")
      ->check([](const std::string& v) {
        if (v.empty()) return std::string("an empty path");
        // `-o -- python train.py` (the folder forgotten) would make a folder named "--" and run on.
        if (v == "--") return std::string("\"--\" is not a folder name here: give -o its folder before `--`");
        return std::string();
      })
      ->type_name("DIR")
      ->take_last();  // a later -o (e.g. after a shell alias's) wins, as in most tools
  sub->add_flag("--follow-children", args->follow_children,
                "Record every descendant too (DataLoader workers, torchrun ranks)");
  // A string joined over repeats, not a vector: CLI11 2.1 lets a vector option swallow the `--`
  // that follows it, and then the command's own options would be parsed as ours.
  sub->add_option("--trace", args->trace,
                  "Sources: cuda,nvtx,python (default: all); -NAME leaves one out")
      ->type_name("LIST")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::Join);
  sub->add_flag("--report", args->report, "Print the report of this run when COMMAND ends");
  sub->add_option("--wait", args->wait,
                  "When COMMAND ends: 'all' waits for the descendants it left running (their traces "
                  "complete; Ctrl-C stops waiting), 'primary' does not")
      ->check(CLI::IsMember({"all", "primary"}))
      ->capture_default_str();
  sub->add_option("--capture-range", args->capture.range,
                  "Record only inside capture ranges: none (default), cudaProfilerApi (between "
                  "cudaProfilerStart and cudaProfilerStop), nvtx:NAME (inside NVTX ranges named NAME)")
      ->type_name("RANGE")
      ->take_last();
  sub->add_option("--capture-range-end", args->capture.range_end,
                  "After a capture range ends: stop (default; record no more in that process), "
                  "stop-shutdown (also end COMMAND: SIGTERM, then SIGKILL 5 s later), repeat (record "
                  "every range)")
      ->type_name("END")
      ->take_last();
  sub->add_option("--delay", args->capture.delay, "Record only from SEC seconds after the launch")
      ->type_name("SEC")
      ->take_last();
  sub->add_option("--duration", args->capture.duration,
                  "Record only for SEC seconds (after --delay); with --capture-range-end=stop-shutdown "
                  "COMMAND is then ended")
      ->type_name("SEC")
      ->take_last();
  sub->add_option("--backtrace", args->backtrace,
                  "Call stacks on events: cuda[:THRESHOLD_NS] (CUDA calls that block: synchronisation, "
                  "copies, cudaMalloc/cudaFree, lasting at least THRESHOLD_NS), nvtx (every NVTX range "
                  "and mark), none; comma-separated (default: cuda:1000)")
      ->type_name("LIST")
      ->take_last();
  sub->add_option("--sample", args->sample,
                  "CPU samples: every thread's stack (native and Python frames) HZ times per second "
                  "of its CPU time (1000 is typical; default: off)")
      ->type_name("HZ")
      ->take_last();
  sub->add_option("--umask", args->umask,
                  "Octal mask for what the run creates: the trace directory gets 0777 & ~MASK, its "
                  "trace files 0666 & ~MASK (default 077: only you can read them; the process umask "
                  "is not used)")
      ->type_name("MASK")
      ->capture_default_str()
      ->take_last();
  sub->add_option("COMMAND", args->command, "The program to profile, then its arguments")->required();
  // The first positional ends trainprof's options: `trainprof run python train.py --lr 3` passes
  // --lr to python, as nsys/strace/time do. `--` is still accepted (and needed if COMMAND
  // starts with '-').
  sub->positionals_at_end();
  sub->footer(
      "Options end at COMMAND: what follows goes to COMMAND unchanged. Write -- before COMMAND if\n"
      "it starts with '-'.\n"
      "\n"
      "Output directory: default ./trainprof-YYYYmmdd-HHMMSS. In DIR, %p is the pid of COMMAND,\n"
      "%h the hostname, %q{VAR} the value of environment variable VAR, %% a literal %.\n"
      "\n"
      "Examples:\n"
      "  trainprof run -- python train.py --epochs 1\n"
      "  trainprof run --follow-children -o runs/%h-%p -- torchrun --nproc-per-node 2 train.py\n"
      "  trainprof run --trace=-python --report -- ./train_cuda\n"
      "  trainprof run --capture-range=nvtx:train_step --capture-range-end=repeat -- ./train\n"
      "  trainprof run --capture-range=cudaProfilerApi --capture-range-end=stop-shutdown -- ./train\n"
      "  trainprof run --delay 60 --duration 30 -- python train.py\n"
      "\n"
      "Exit status: COMMAND's (128+N if signal N ended it), 127 if COMMAND was not found, 126 if\n"
      "it could not be executed, 1 if trainprof could not prepare the run, 2 for a usage error.\n"
      "SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to trainprof are passed on to COMMAND.\n"
      "Environment given to COMMAND, and the rest: docs/cli.md.");
}

int RunRun(const RunArgs& args) {
  std::string error;
  std::optional<unsigned> trace = ParseTraceList(args.trace, &error);
  if (!trace) {
    Message(error);
    return 2;
  }
  std::optional<CaptureOptions> capture = ParseCaptureOptions(args.capture, *trace, &error);
  if (!capture) {
    Message(error);
    return 2;
  }
  std::optional<std::string> backtrace = ParseBacktraceList(args.backtrace, &error);
  if (!backtrace) {
    Message(error);
    return 2;
  }
  std::optional<unsigned> sample_hz = ParseSampleHz(args.sample, &error);
  if (!sample_hz) {
    Message(error);
    return 2;
  }
  std::optional<unsigned> umask = ParseUmask(args.umask, &error);
  if (!umask) {
    Message(error);
    return 2;
  }
  const mode_t dir_mode = 0777 & ~*umask;
  PatternContext ctx = CurrentPatternContext();
  std::optional<OutputPattern> pattern =
      OutputPattern::Parse(args.output.empty() ? DefaultOutputPattern() : args.output, ctx, &error);
  if (!pattern) {
    Message(error);
    return 2;
  }
  for (const std::string& note : pattern->notes()) Message(note);
  std::optional<InjectFiles> files = FindInjectFiles(getenv("TRAINPROF_INJECT_LIB"), SelfExecutable(), &error);
  if (!files) {
    Message(error + "; " + args.command.front() + " was not run");
    return 1;
  }
  if ((*trace & kTracePython) && files->python_shim.empty() && LooksLikePython(args.command.front())) {
    Message("note: the Python shim folder was not found next to trainprof, so PyTorch phases will "
            "not be named (NVTX ranges still are)");
  }

  // Without %p the directory is known now: create it here, where an error is easy to report.
  // If it cannot be created the command still runs, unprofiled: a profiler must not cost the
  // user their run (said once, here; the library is then not injected at all).
  std::string dir;
  bool recording = true;
  bool dir_existed = true;  // with %p the child makes a directory of its own
  if (!pattern->has_pid()) {
    dir = pattern->Expand(0);
    struct stat before;
    dir_existed = stat(dir.c_str(), &before) == 0;
    std::optional<std::string> resolved;
    if (std::string why = TracePathProblem(dir); !why.empty()) {
      Message(why + "; running " + args.command.front() + " without profiling");
      recording = false;
    } else if (!(resolved = PrepareOutputDirectory(dir, dir_mode, &why))) {
      Message("cannot create output directory " + dir + ": " + why + "; running " + args.command.front() +
              " without profiling");
      recording = false;
    } else {
      dir = *resolved;  // what is used from here on: no link is looked up again
      struct stat owner;
      if (stat(dir.c_str(), &owner) == 0 && owner.st_uid != geteuid() && owner.st_uid != 0) {
        // Theirs to read, replace, or rename away for another directory of theirs (docs/cli.md).
        Message("warning: output directory " + dir + " is owned by uid " + std::to_string(owner.st_uid) +
                ", who can read and replace the traces, or swap the directory for another of theirs; write "
                "traces in a directory only you can change");
      }
    }
    if (size_t old = recording ? SummarizeTraceDir(dir).files : 0) {
      Message("warning: " + dir + " already holds " + std::to_string(old) +
              (old == 1 ? " trace file" : " trace files") +
              " from an earlier run; a report of it will mix both runs (use a fresh -o directory, "
              "or %p in its name)");
    }
  }

  InjectConfig config;
  config.files = *files;
  config.output_dir = dir;  // with %p: set by the child below
  config.follow_children = args.follow_children;
  config.trace = *trace;
  config.umask = *umask;
  config.run_id = NewRunId();  // tells this run's files from another's in the same directory
  std::vector<std::string> env = recording ? BuildChildEnvironment(CurrentEnvironment(), config) : CurrentEnvironment();
  // --delay/--duration count from here, the launch, in every process of the run.
  const uint64_t launch_ns = MonotonicNowNs();
  if (recording) {
    ApplyCaptureEnvironment(&env, *capture, launch_ns, getpid());
    ApplyBacktraceEnvironment(&env, *backtrace);
    ApplySampleEnvironment(&env, *sample_hz);
  }

  // In the child, after fork: trainprof is single-threaded, so allocating here is safe.
  const OutputPattern& out = *pattern;
  const std::string& program = args.command.front();
  auto prepare = [&out, recording, &program, dir_mode](std::vector<std::string>* child_env) -> int {
    if (!recording) return 0;
    pid_t self = getpid();
    SetEnv(child_env, "TRAINPROF_ROOT_PID", std::to_string(self));
    if (out.has_pid()) {
      std::string own_dir = out.Expand(self);
      if (std::string why = TracePathProblem(own_dir); !why.empty()) {
        Message(why + "; running " + program + " without profiling");
        *child_env = CurrentEnvironment();
        return 0;
      }
      std::string why;
      std::optional<std::string> resolved = PrepareOutputDirectory(own_dir, dir_mode, &why);
      if (!resolved) {
        Message("cannot create output directory " + own_dir + ": " + why + "; running " + program +
                " without profiling");
        *child_env = CurrentEnvironment();
        return 0;
      }
      SetEnv(child_env, "TRAINPROF_OUTPUT_DIR", *resolved);
    }
    return 0;
  };

  ChildProcess child;
  std::unique_ptr<TreeShutdown> shutdown;
  if (recording && capture->shuts_down()) {
    uint64_t duration_end = capture->duration_ns != 0 ? launch_ns + capture->delay_ns + capture->duration_ns : 0;
    shutdown = std::make_unique<TreeShutdown>(duration_end, args.command.front());
    child.ListenForShutdownRequests();
  }
  StartFailure failure;
  if (!child.Start(args.command, std::move(env), prepare, &failure)) {
    switch (failure.stage) {
      case StartFailure::Stage::kExec:
        Message(DescribeExecError(args.command.front(), failure.error));
        // Nothing ran, so nothing was recorded: leave no empty directory behind (rmdir only
        // removes an empty one, and only one this run made).
        if (recording && pattern->has_pid()) rmdir(pattern->Expand(child.pid()).c_str());
        if (recording && !dir_existed) rmdir(dir.c_str());
        return ExitStatusForExecError(failure.error);
      case StartFailure::Stage::kPrepare:
        Message("cannot create output directory " + pattern->Expand(child.pid()) + ": " +
                strerror(failure.error) + "; " + args.command.front() + " was not run");
        return 1;
      default:
        Message("cannot start " + args.command.front() + ": " + strerror(failure.error));
        return 1;
    }
  }
  int wait_status = child.Wait(shutdown.get());
  // Its end, for its header if the library could not write one (killed): not the time the last
  // descendant ended, which --wait=all may wait for long after.
  const uint64_t root_reaped_ns = MonotonicNowNs();
  int exit_status = ExitStatusFromWait(wait_status);
  std::vector<ChildProcess::Reaped> descendants;
  if (args.wait == "all") {
    descendants = child.WaitDescendants(2000, [&](const std::vector<pid_t>& running) {
      std::string pids;
      for (pid_t p : running) pids += (pids.empty() ? "" : ", ") + std::to_string(p);
      Message(args.command.front() + " exited; waiting for " + std::to_string(running.size()) +
              (running.size() == 1 ? " descendant" : " descendants") + " still running (pid " + pids +
              ") so their traces are complete; Ctrl-C stops waiting (or use --wait=primary)");
    }, shutdown.get());
  } else {
    child.StopForwarding();
  }
  if (shutdown != nullptr && shutdown->started()) Message(shutdown->Summary(exit_status));
  if (!recording) return exit_status;
  if (pattern->has_pid()) {
    std::string why;
    std::optional<std::string> resolved = OpenOutputDirectory(pattern->Expand(child.pid()), false, 0, &why);
    if (!resolved) return exit_status;  // the child said why it could not create it
    dir = *resolved;
  }

  std::string patch_error;
  if (!RecordRootEnd(dir, child.pid(), wait_status, root_reaped_ns, &patch_error, config.run_id) &&
      !patch_error.empty()) {
    Message("warning: " + patch_error);
  }
  // Orphans we reaped: their exit status is known here and nowhere else.
  for (const ChildProcess::Reaped& d : descendants) {
    RecordRootEnd(dir, d.pid, d.status, d.reaped_ns, &patch_error, config.run_id);
  }
  TraceDirSummary summary = SummarizeTraceDir(dir, config.run_id);
  // --report says the same about them itself (FindTraceFiles).
  if (!args.report) {
    for (const std::string& w : summary.skipped) Message("warning: " + w);
  }
  if (summary.files == 0) {
    if (access(dir.c_str(), W_OK | X_OK) != 0) {
      Message("no trace file was written in " + dir + ": " + strerror(errno));
    } else if (std::string full = NoRoomForTraces(dir); !full.empty()) {
      Message("no trace file was written in " + dir + ": " + full);
    } else {
      Message("no trace file was written in " + dir +
              " \u2014 is the command statically linked, setuid/setgid or with file capabilities "
              "(trainprof records nothing there), or did it clear LD_PRELOAD?");
    }
    return exit_status;
  }
  Message(SummaryLine(dir, summary, /*next=*/!args.report));

  if (args.report) {
    fflush(stderr);
    ReportArgs report;
    report.paths = {dir};
    int report_status;
    try {
      report_status = RunReport(report);
    } catch (const std::exception& e) {
      Message(std::string("report failed: ") + e.what());
      report_status = 1;
    }
    fflush(stdout);
    // The command's status comes first; a failed report only shows when the command succeeded.
    if (exit_status == 0) exit_status = report_status;
  }
  return exit_status;
}

}  // namespace trainprof::launcher
