#include "summarize_command.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "collector/read/trace_reader.h"
#include "collector/report/report.h"
#include "collector/summary/summary_file.h"
#include "progress_bar.h"
#include "trace_inputs.h"

namespace trainprof::launcher {
namespace {

constexpr int kOk = 0;
constexpr int kOutputError = 1;
constexpr int kInputError = 2;

// NAME.summary for NAME.trace; NAME.pt.summary for NAME.pt.trace.json(.gz); else NAME.summary.
std::string SummaryName(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const char* ext : {".trace.json.gz", ".trace.json", ".trace"}) {
    const std::string e = ext;
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
      name.resize(name.size() - e.size());
      break;
    }
  }
  return name + ".summary";
}

// Whether the summary file at `path` stands for the trace file `trace` of host `host` (a summary
// of it written before, which a new one replaces): the same file's status, the same host.
bool SameTraceAs(const std::string& path, const std::string& trace, const std::string& host) {
  collector::StringPool names;
  const collector::SummaryFile old = collector::ReadSummaryFile(path, &names);
  if (old.files.size() != 1 || old.files.front().path != trace) return false;
  const std::string old_host = old.processes.empty() ? std::string() : old.processes.front().info.host;
  return old_host == host;
}

// Writes `bytes` to DIR/NAME through a temporary file: NAME (pid-7.summary) when it is free or holds
// the summary of the same trace file and host, else the next of NAME.2.summary, NAME.3.summary, ...
// (the summaries of several nodes written into one directory at once: another's file is never
// replaced, link(2) claims a name atomically). Returns the name written, or "" with *error set.
std::string WriteSummary(const std::string& dir, const std::string& name, const std::vector<uint8_t>& bytes,
                         const std::string& trace, const std::string& host, std::string* error) {
  const std::string tmp = (std::filesystem::path(dir) / (".tmp." + name + "." + std::to_string(::getpid()))).string();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      *error = "cannot write " + tmp + ": " + std::strerror(errno);
      std::filesystem::remove(tmp);
      return "";
    }
  }
  const std::string stem = name.substr(0, name.size() - sizeof(".summary") + 1);
  for (int k = 1; k < 100000; ++k) {
    const std::string candidate = k == 1 ? name : stem + "." + std::to_string(k) + ".summary";
    const std::string target = (std::filesystem::path(dir) / candidate).string();
    if (::link(tmp.c_str(), target.c_str()) == 0) {
      std::filesystem::remove(tmp);
      return candidate;
    }
    if (errno != EEXIST) {
      *error = "cannot write " + target + ": " + std::strerror(errno);
      std::filesystem::remove(tmp);
      return "";
    }
    if (SameTraceAs(target, trace, host)) {
      std::error_code ec;
      std::filesystem::rename(tmp, target, ec);
      if (ec) {
        *error = "cannot write " + target + ": " + ec.message();
        std::filesystem::remove(tmp);
        return "";
      }
      return candidate;
    }
  }
  std::filesystem::remove(tmp);
  *error = "cannot write " + name + " in " + dir + ": every name taken";
  return "";
}

// The other files of `path`'s process name in its directory: for .../pid-<PID>.trace or
// .../pid-<PID>.<N>.trace, every pid-<PID>.trace and pid-<PID>.<M>.trace there (docs/trace-format.md,
// "Files"), as `path` is spelled (same directory prefix).
std::vector<std::string> ImageSiblings(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = path.substr(dir.size());
  auto pid_of = [](const std::string& n) -> std::string {  // "4109" of pid-4109.trace / pid-4109.1.trace
    if (n.rfind("pid-", 0) != 0 || n.size() < 11 || n.compare(n.size() - 6, 6, ".trace") != 0) return "";
    const std::string mid = n.substr(4, n.size() - 10);
    const size_t dot = mid.find('.');
    const std::string pid = mid.substr(0, dot);
    const std::string index = dot == std::string::npos ? "" : mid.substr(dot + 1);
    auto digits = [](const std::string& d) { return !d.empty() && d.find_first_not_of("0123456789") == std::string::npos; };
    if (!digits(pid) || (dot != std::string::npos && !digits(index))) return "";
    return pid;
  };
  const std::string pid = pid_of(name);
  std::vector<std::string> out;
  if (pid.empty()) return out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir.empty() ? "." : dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n != name && pid_of(n) == pid && e.is_regular_file(ec)) out.push_back(dir + n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void AddSummarizeOptions(CLI::App* sub, SummarizeArgs* args) {
  AddTracePathsArgument(sub, &args->paths);
  sub->add_option("-o,--output", args->output,
                  "The directory to write the summary files to (made if missing; default: the current directory)")
      ->check([](const std::string& v) { return v.empty() ? std::string("an empty path") : std::string(); })
      ->type_name("DIR");
}

int RunSummarize(const SummarizeArgs& args) {
  std::optional<collector::TraceFileList> list = FindTraceFilesOrSay(args.paths);
  if (!list) return kInputError;
  std::vector<std::string> traces;
  for (const std::string& f : list->files) {
    if (collector::IsSummaryFile(f)) {
      std::cerr << "trainprof: warning: " << f << ": already a summary file: skipped\n";
    } else {
      traces.push_back(f);
    }
  }
  for (const std::string& w : list->warnings) std::cerr << "trainprof: warning: " << w << "\n";
  if (traces.empty()) {
    Error("no trace files to summarise in " + JoinPaths(args.paths));
    return kInputError;
  }
  // A program that exec'd has an image per file, pid-<PID>.trace then pid-<PID>.<N>.trace: given one
  // of them, its siblings in that directory are read too (the process is one), and its summary goes
  // with the file of its first image when that is given.
  const std::set<std::string> given(traces.begin(), traces.end());
  std::vector<std::string> read = traces;
  for (const std::string& t : traces) {
    for (const std::string& sibling : ImageSiblings(t)) {
      if (given.count(sibling) == 0 && std::find(read.begin(), read.end(), sibling) == read.end()) read.push_back(sibling);
    }
  }
  // On a terminal, a run of more than 2 s shows a progress bar (reading, then summarising).
  std::atomic<uint64_t> files_done{0};
  ProgressBar bar = ProgressBar::ForStderr(read.size(), 2'000'000'000, "reading", "files");
  collector::Trace trace;
  {
    EveryTenthOfASecond ticker([&] { bar.Update(files_done.load(std::memory_order_relaxed)); });
    trace = collector::LoadTraceForReport(read, &files_done);
  }
  const bool progress_shown = bar.drawn();
  bar.Finish();
  size_t usable = 0;
  for (const collector::FileStatus& f : trace.files) {
    if (given.count(f.path) == 0) continue;
    if (f.usable) ++usable;
    if (f.damaged()) std::cerr << "trainprof: warning: " << f.path << ": " << collector::DescribeDamage(f) << "\n";
  }
  if (usable == 0) {
    Error(NoReadableTrace(trace.files, JoinPaths(args.paths)));
    return kInputError;
  }
  // Every device's activity is kept: the report may merge these with processes of other files.
  const std::string doing = "summarising " + std::to_string(trace.processes.size()) + " processes";
  if (progress_shown) bar.Note(doing);
  collector::RunSummaries run;
  {
    EveryTenthOfASecond ticker([&] { bar.NoteOnceLate(doing); });
    run = collector::SummarizeForReport(std::move(trace), /*all_device_activity=*/true);
  }
  bar.Finish();
  // Each process goes with the file of its first image; one not recorded (no file) with its parent's.
  std::map<std::string, std::vector<const collector::ProcessSummary*>> by_file;
  std::map<collector::ProcessKey, const collector::ProcessSummary*> by_key;
  for (const collector::ProcessSummary& s : run.processes) by_key[s.place.key] = &s;
  for (const collector::ProcessSummary& s : run.processes) {
    const collector::ProcessSummary* owner = &s;
    for (int hops = 0; owner->info.files.empty() && owner->place.parent && hops < 64; ++hops) {
      auto it = by_key.find(*owner->place.parent);
      if (it == by_key.end()) break;
      owner = it->second;
    }
    if (!owner->info.files.empty()) by_file[owner->info.files.front()].push_back(&s);
  }
  std::error_code ec;
  std::filesystem::create_directories(args.output, ec);
  if (ec) {
    Error("-o " + args.output + ": " + ec.message());
    return kOutputError;
  }
  std::set<std::string> names;  // written by this run: a second pid-7.trace of another directory is pid-7.2.summary
  size_t written = 0, processes = 0;
  for (size_t i = 0; i < run.files.size(); ++i) {
    const collector::FileStatus& f = run.files[i];
    if (given.count(f.path) == 0) continue;  // a sibling image's file: summarised when it is given
    const std::vector<const collector::ProcessSummary*>& own = by_file[f.path];
    const std::vector<uint8_t> bytes =
        collector::EncodeSummaryFile({f}, written == 0 ? run.not_recorded_omitted : 0, own, *run.names);
    std::string name = SummaryName(f.path);
    const std::string stem = name.substr(0, name.size() - sizeof(".summary") + 1);
    for (int k = 2; names.count(name) > 0; ++k) name = stem + "." + std::to_string(k) + ".summary";
    std::string error;
    const std::string wrote = WriteSummary(args.output, name, bytes, f.path, own.empty() ? "" : own.front()->info.host, &error);
    if (wrote.empty()) {
      Error(error);
      return kOutputError;
    }
    names.insert(wrote);
    ++written;
    processes += own.size();
  }
  std::cerr << "trainprof: " << written << " summary file" << (written == 1 ? "" : "s") << " written to " << args.output
            << " (" << processes << " process" << (processes == 1 ? "" : "es")
            << "); merge them with: trainprof report " << args.output << "\n";
  return kOk;
}

}  // namespace trainprof::launcher
