#include "collector/read/trace_set.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <mutex>
#include <new>
#include <set>
#include <system_error>
#include <thread>

#include "collector/read/process_tree.h"
#include "collector/read/trace_reader.h"

namespace trainprof::collector {

namespace fs = std::filesystem;

namespace {

// "a FIFO", "a socket"... for a file that is neither a regular file nor a directory.
const char* KindOf(fs::file_type type) {
  switch (type) {
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    default: return "not a regular file";
  }
}

bool IsLoop(const std::error_code& ec) { return ec == std::errc::too_many_symbolic_link_levels; }

// A name a directory search takes: trainprof's *.trace and *.summary (`trainprof summarize`), and
// tensorboard_trace_handler's *.pt.trace.json / *.pt.trace.json.gz (Kineto traces; their content
// is checked when read).
bool IsTraceName(const fs::path& p) {
  if (p.extension() == ".trace" || p.extension() == ".summary") return true;
  const std::string name = p.filename().string();
  auto ends = [&](std::string_view s) { return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
  return ends(".pt.trace.json") || ends(".pt.trace.json.gz");
}


}  // namespace

TraceFileList FindTraceFiles(const std::vector<std::string>& paths) {
  TraceFileList out;
  std::vector<Loss> kinds;  // of out.warnings
  auto warn = [&](Loss kind, const std::string& path, const std::string& detail) {
    out.warnings.push_back(path + ": " + LossText(kind, 1, detail));
    kinds.push_back(kind);
  };
  std::set<std::string> seen;  // canonical paths
  auto add = [&](const fs::path& p) {
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(p, ec);
    std::string key = ec ? p.lexically_normal().string() : canon.string();
    if (seen.insert(key).second) out.files.push_back(p.lexically_normal().string());
  };
  // Nothing is opened here (stat only): a FIFO, socket or device is named and skipped, never
  // read (reading one could block for ever, or never end).
  for (const std::string& arg : paths) {
    std::error_code ec;
    fs::path path(arg);
    fs::file_status st = fs::status(path, ec);
    if (IsLoop(ec)) {
      warn(Loss::symlink_loops, arg, ec.message());
      continue;
    }
    if (ec || !fs::exists(st)) {
      out.errors.push_back(arg + ": " + (ec ? ec.message() : "no such file or directory"));
      continue;
    }
    if (!fs::is_directory(st)) {
      if (fs::is_regular_file(st)) {
        add(path);
      } else {
        warn(Loss::not_regular_files, arg, KindOf(st.type()));
      }
      continue;
    }
    std::vector<fs::path> found;
    // The directory named itself must be readable: skip_permission_denied below is for the
    // folders under it, and would make an unreadable one look empty ("no trace files").
    if (fs::directory_iterator probe(path, ec); ec) {
      out.errors.push_back(arg + ": cannot read this directory (" + ec.message() + ")");
      continue;
    }
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
    if (ec) {
      out.errors.push_back(arg + ": " + ec.message());
      continue;
    }
    for (fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
      if (ec) {
        out.errors.push_back(arg + ": " + ec.message());
        break;
      }
      std::error_code fe;
      if (IsTraceName(it->path())) {
        fs::file_status fst = it->status(fe);  // follows a symbolic link
        if (IsLoop(fe)) {
          warn(Loss::symlink_loops, it->path().string(), fe.message());
        } else if (!fe && fs::is_regular_file(fst)) {
          found.push_back(it->path());
        } else if (!fe && fs::exists(fst) && !fs::is_directory(fst)) {
          warn(Loss::not_regular_files, it->path().string(), KindOf(fst.type()));
        }
      }
      // The iterator skips what it may not enter (skip_permission_denied); say so.
      if (it->is_directory(fe) && !it->is_symlink(fe) && ::access(it->path().c_str(), R_OK | X_OK) != 0) {
        warn(Loss::unreadable_directories, it->path().string(), std::strerror(errno));
      }
    }
    std::sort(found.begin(), found.end());
    for (const fs::path& p : found) add(p);
  }
  // A path given and also found in a directory given is said once.
  std::set<std::string> said;
  std::vector<std::string> once;
  for (size_t i = 0; i < out.warnings.size(); ++i) {
    if (!said.insert(out.warnings[i]).second) continue;
    once.push_back(std::move(out.warnings[i]));
    ++out.losses[kinds[i]];
  }
  out.warnings = std::move(once);
  return out;
}

size_t ReportThreads() {
  constexpr size_t kMax = 256;
  size_t n = std::max(1u, std::thread::hardware_concurrency());
  if (const char* env = std::getenv("TRAINPROF_REPORT_THREADS"); env != nullptr && *env != 0) {
    size_t v = 0;
    const char* c = env;
    for (; *c >= '0' && *c <= '9' && v <= kMax; ++c) v = v * 10 + static_cast<size_t>(*c - '0');
    if (*c == 0 && v >= 1 && v <= kMax) n = v;
  }
  return std::min(n, kMax);
}

namespace {

constexpr size_t kMaxDecodeThreads = 256;  // as ReportThreads()

// Files decoded at once: ReportThreads(), at most one per file.
size_t DecodeThreads(size_t files) { return std::min({ReportThreads(), kMaxDecodeThreads, std::max<size_t>(files, 1)}); }

// The one place where images become a Trace: `decode(i)` decodes the i-th of `count` files and
// `path(i)` names it. Files are decoded in parallel (they are independent); their strings are then
// pooled one file after another, in order, so that the result does not depend on the timing. A
// file whose decoding runs out of memory is reported as such and the others are read.
template <typename Decode, typename Path>
Trace Load(size_t count, Decode decode, Path path) {
  std::vector<DecodedTrace> decoded(count);
  auto one = [&](size_t i) {
    try {
      decoded[i] = decode(i);
    } catch (const std::bad_alloc&) {
      decoded[i] = DecodedTrace::Failed(path(i), "not enough memory to read it");
    }
  };
  std::atomic<size_t> next{0};
  std::mutex failed_mu;
  std::exception_ptr failed;
  auto work = [&] {
    try {
      for (size_t i; (i = next.fetch_add(1)) < count;) one(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failed_mu);
      if (!failed) failed = std::current_exception();
      next.store(count);
    }
  };
  std::vector<std::thread> pool;
  const size_t threads = DecodeThreads(count);
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads (limits): those started, and this one, do the work
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
  Trace trace;
  std::vector<TraceImage> images;
  for (size_t i = 0; i < count; ++i) {
    ReadResult r = decoded[i].Finish(&trace.strings);
    decoded[i] = DecodedTrace();
    if (r.image) {
      r.image->file = trace.files.size();
      images.push_back(std::move(*r.image));
    }
    trace.files.push_back(std::move(r.status));
  }
  trace.processes = BuildProcesses(std::move(images), trace.strings, &trace.not_recorded_omitted);
  return trace;
}

}  // namespace

Trace LoadTrace(const std::vector<std::string>& files, const ReadOptions& options) {
  return Load(
      files.size(),
      [&](size_t i) {
        DecodedTrace d = DecodeTraceFile(files[i], options);
        if (options.files_done != nullptr) options.files_done->fetch_add(1, std::memory_order_relaxed);
        return d;
      },
      [&](size_t i) { return files[i]; });
}

Trace LoadTraceBytes(const std::vector<TraceBytes>& files, const ReadOptions& options) {
  return Load(
      files.size(), [&](size_t i) { return DecodeTraceBytes(files[i].bytes, files[i].path, options); },
      [&](size_t i) { return files[i].path; });
}

}  // namespace trainprof::collector
