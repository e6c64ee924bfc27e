#include "summarize_command.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

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
  for (const char* ext : {".trace.json.gz", ".trace.json", ".trace", ".summary"}) {
    const std::string e = ext;
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
      name.resize(name.size() - e.size());
      break;
    }
  }
  return name + ".summary";
}

// Whether the summary file `name` in the directory `dir_fd` stands for the same trace file as the one
// of `status` whose first process is `first` (null: none): of the same process (its first process's identity: host, boot, pid
// namespace, pid, start), or, for a file without a process (unusable), of the same path, pid and
// size. That one is a summary written before, which the new one replaces.
bool SameTraceAs(int dir_fd, const std::string& name, const collector::FileStatus& status,
                 const collector::ProcessKey* first) {
  const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  std::vector<uint8_t> bytes;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) <= collector::kMaxSummaryBytes) {
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    bytes.resize(got);
  }
  ::close(fd);
  collector::StringPool names;
  collector::SummaryFile old;
  try {
    old = collector::DecodeSummaryFile(bytes, &names);
  } catch (const collector::SummaryError&) {
    return false;  // not a summary: never replaced
  }
  if (old.files.size() != 1) return false;
  if (!old.processes.empty() || first != nullptr) {
    return !old.processes.empty() && first != nullptr && old.processes.front().place.key == *first;
  }
  const collector::FileStatus& a = old.files.front();
  return a.path == status.path && a.pid == status.pid && a.bytes == status.bytes;
}

// Makes `dir` and the folders above it that are missing, 0700 (summaries hold command lines and
// host names, as traces do). Returns "" or what went wrong.
std::string MakeDirectory(const std::string& dir) {
  std::string at;
  std::stringstream parts(dir);
  if (!dir.empty() && dir[0] == '/') at = "/";
  for (std::string part; std::getline(parts, part, '/');) {
    if (part.empty()) continue;
    at += (at.empty() || at.back() == '/' ? "" : "/") + part;
    if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) return at + ": " + std::strerror(errno);
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return dir + ": not a directory";
  return "";
}

// Writes `bytes` (the summary of the trace file `status`, whose first process is `first`, null for
// none) as NAME in the directory `dir_fd` through a new file of
// a random name (O_CREAT|O_EXCL|O_NOFOLLOW, 0600: nothing planted there is written through): NAME
// (pid-7.summary) when it is free or holds a summary of the same trace file, else the first free
// NAME.2.summary, NAME.3.summary, ... (the nodes of a job writing into one directory at once:
// link(2) claims a name atomically, and another's summary is never replaced). Returns the name
// written, or "" with *error set.
std::string WriteSummary(int dir_fd, const std::string& dir, const std::string& name, const std::vector<uint8_t>& bytes,
                         const collector::FileStatus& status, const collector::ProcessKey* first, std::string* error) {
  std::string tmp;
  int fd = -1;
  for (int tries = 0; fd < 0 && tries < 16; ++tries) {
    uint64_t r = 0;
    if (::getrandom(&r, sizeof r, 0) != sizeof r) r = static_cast<uint64_t>(::getpid()) * 2654435761u + tries;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r));
    tmp = std::string(".trainprof-") + hex;
    fd = ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    *error = "cannot write into " + dir + ": " + std::strerror(errno);
    return "";
  }
  size_t put = 0;
  while (put < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + put, bytes.size() - put);
    if (n <= 0) break;
    put += static_cast<size_t>(n);
  }
  const int saved = errno;
  if (::close(fd) != 0 || put != bytes.size()) {
    *error = "cannot write " + dir + "/" + tmp + ": " + std::strerror(put != bytes.size() ? saved : errno);
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return "";
  }
  const std::string stem = name.substr(0, name.size() - sizeof(".summary") + 1);
  for (int k = 1; k < 100000; ++k) {
    const std::string candidate = k == 1 ? name : stem + "." + std::to_string(k) + ".summary";
    if (::linkat(dir_fd, tmp.c_str(), dir_fd, candidate.c_str(), 0) == 0) {
      ::unlinkat(dir_fd, tmp.c_str(), 0);
      return candidate;
    }
    if (errno != EEXIST) {
      *error = "cannot write " + dir + "/" + candidate + ": " + std::strerror(errno);
      ::unlinkat(dir_fd, tmp.c_str(), 0);
      return "";
    }
    if (SameTraceAs(dir_fd, candidate, status, first)) {
      if (::renameat(dir_fd, tmp.c_str(), dir_fd, candidate.c_str()) != 0) {  // a link there is replaced, never followed
        *error = "cannot write " + dir + "/" + candidate + ": " + std::strerror(errno);
        ::unlinkat(dir_fd, tmp.c_str(), 0);
        return "";
      }
      return candidate;
    }
  }
  ::unlinkat(dir_fd, tmp.c_str(), 0);
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

// The folder of `file` under the directory of `paths` it was found in ("node-003" for
// run/node-003/pid-7.trace found in run), "" for a file given itself or found at the top.
std::string FolderUnder(const std::string& file, const std::vector<std::string>& paths) {
  for (std::string dir : paths) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (file.size() <= dir.size() + 1 || file.compare(0, dir.size(), dir) != 0 || file[dir.size()] != '/') continue;
    const std::string rest = file.substr(dir.size() + 1);
    const size_t slash = rest.rfind('/');
    if (slash == std::string::npos) return "";
    std::string folder = rest.substr(0, slash);
    // Never above DIR: a folder with ".." or "." parts (given so) is flattened.
    if (("/" + folder + "/").find("/../") != std::string::npos || ("/" + folder + "/").find("/./") != std::string::npos) return "";
    return folder;
  }
  return "";
}

}  // namespace

void AddSummarizeOptions(CLI::App* sub, SummarizeArgs* args) {
  AddTracePathsArgument(sub, &args->paths);
  sub->add_option("-o,--output", args->output,
                  "The directory to write the summary files to (made if missing, 0700; default: summaries). Not a "
                  "directory of the traces: trainprof report DIR would read both")
      ->check([](const std::string& v) {
        return v.empty() ? std::string("an empty path")
               : v == "-" ? std::string("summarize writes files into a directory, not to stdout")
                          : std::string();
      })
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
  // The summaries beside their traces would be read twice by `trainprof report DIR`: refused.
  {
    std::error_code ec;
    const std::filesystem::path out = std::filesystem::weakly_canonical(args.output, ec);
    for (const std::string& t : traces) {
      std::error_code ec2;
      if (!ec && std::filesystem::weakly_canonical(std::filesystem::path(t).parent_path().empty()
                                                       ? std::filesystem::path(".")
                                                       : std::filesystem::path(t).parent_path(),
                                                   ec2) == out && !ec2) {
        Error("-o " + args.output + ": a directory of the traces (" + t +
              "): `trainprof report` of it would read each process twice; give another directory");
        return kInputError;
      }
    }
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
  if (usable == 0) {  // still summarised: their summaries say why, as the report of the traces does
    std::cerr << "trainprof: warning: no usable trace file in " << JoinPaths(args.paths)
              << ": their summaries hold only what is wrong with them\n";
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
  if (std::string wrong = MakeDirectory(args.output); !wrong.empty()) {
    Error("-o " + wrong);
    return kOutputError;
  }
  const int dir_fd = ::open(args.output.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    Error("-o " + args.output + ": " + std::strerror(errno));
    return kOutputError;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{dir_fd};
  std::set<std::string> names;  // written by this run: a second pid-7.trace given apart is pid-7.2.summary
  size_t written = 0, processes = 0;
  for (size_t i = 0; i < run.files.size(); ++i) {
    const collector::FileStatus& f = run.files[i];
    if (given.count(f.path) == 0) continue;  // a sibling image's file: summarised when it is given
    const std::vector<const collector::ProcessSummary*>& own = by_file[f.path];
    const std::vector<uint8_t> bytes =
        collector::EncodeSummaryFile({f}, written == 0 ? run.not_recorded_omitted : 0, own, *run.names);
    // Under the directory given, as the trace is under its own (node-003/pid-7.summary): names
    // stay apart, and `trainprof report DIR` finds the summaries in the traces' order.
    const std::string folder = FolderUnder(f.path, args.paths);
    const std::string dir = folder.empty() ? args.output : args.output + "/" + folder;
    std::string name = SummaryName(f.path);
    const std::string stem = name.substr(0, name.size() - sizeof(".summary") + 1);
    for (int k = 2; names.count(folder + "/" + name) > 0; ++k) name = stem + "." + std::to_string(k) + ".summary";
    int fd = dir_fd;
    if (!folder.empty()) {
      if (std::string wrong = MakeDirectory(dir); !wrong.empty()) {
        Error("-o " + wrong);
        return kOutputError;
      }
      fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) {
        Error(dir + ": " + std::strerror(errno));
        return kOutputError;
      }
    }
    std::string error;
    const std::string wrote = WriteSummary(fd, dir, name, bytes, f, own.empty() ? nullptr : &own.front()->place.key, &error);
    if (fd != dir_fd) ::close(fd);
    if (wrote.empty()) {
      Error(error);
      return kOutputError;
    }
    names.insert(folder + "/" + wrote);
    ++written;
    processes += own.size();
  }
  std::cerr << "trainprof: " << written << " summary file" << (written == 1 ? "" : "s") << " written to " << args.output
            << " (" << processes << " process" << (processes == 1 ? "" : "es")
            << "); merge them with: trainprof report " << args.output << "\n";
  return kOk;
}

}  // namespace trainprof::launcher
