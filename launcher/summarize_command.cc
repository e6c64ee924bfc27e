#include "summarize_command.h"

#include <unistd.h>

#include <algorithm>
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

// Writes `bytes` to `path` through a temporary file renamed into place: a reader never sees half a
// summary. Returns "" or what went wrong.
std::string WriteWhole(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      const std::string why = std::strerror(errno);
      std::filesystem::remove(tmp);
      return "cannot write " + path + ": " + why;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    return "cannot write " + path + ": " + ec.message();
  }
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
  collector::Trace trace = collector::LoadTraceForReport(read);
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
  collector::RunSummaries run = collector::SummarizeForReport(std::move(trace), /*all_device_activity=*/true);
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
  std::set<std::string> names;
  size_t written = 0, processes = 0;
  for (size_t i = 0; i < run.files.size(); ++i) {
    const collector::FileStatus& f = run.files[i];
    if (given.count(f.path) == 0) continue;  // a sibling image's file: summarised when it is given
    std::string name = SummaryName(f.path);  // pid-7.summary; of a second pid-7.trace: pid-7.2.summary
    const std::string stem = name.substr(0, name.size() - sizeof(".summary") + 1);
    for (int k = 2; !names.insert(name).second; ++k) name = stem + "." + std::to_string(k) + ".summary";
    const std::vector<uint8_t> bytes =
        collector::EncodeSummaryFile({f}, written == 0 ? run.not_recorded_omitted : 0, by_file[f.path], *run.names);
    if (std::string wrong = WriteWhole((std::filesystem::path(args.output) / name).string(), bytes); !wrong.empty()) {
      Error(wrong);
      return kOutputError;
    }
    ++written;
    processes += by_file[f.path].size();
  }
  std::cerr << "trainprof: " << written << " summary file" << (written == 1 ? "" : "s") << " written to " << args.output
            << " (" << processes << " process" << (processes == 1 ? "" : "es")
            << "); merge them with: trainprof report " << args.output << "\n";
  return kOk;
}

}  // namespace trainprof::launcher
