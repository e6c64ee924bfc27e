#include "collector/trace_set.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <filesystem>
#include <set>
#include <system_error>

#include "collector/process_tree.h"
#include "collector/trace_reader.h"

namespace trainprof::collector {

namespace fs = std::filesystem;

TraceFileList FindTraceFiles(const std::vector<std::string>& paths) {
  TraceFileList out;
  std::set<std::string> seen;  // canonical paths
  auto add = [&](const fs::path& p) {
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(p, ec);
    std::string key = ec ? p.lexically_normal().string() : canon.string();
    if (seen.insert(key).second) out.files.push_back(p.lexically_normal().string());
  };
  for (const std::string& arg : paths) {
    std::error_code ec;
    fs::path path(arg);
    fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) {
      out.errors.push_back(arg + ": " + (ec ? ec.message() : "no such file or directory"));
      continue;
    }
    if (!fs::is_directory(st)) {
      add(path);
      continue;
    }
    std::vector<fs::path> found;
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
      if (it->path().extension() == ".trace" && it->is_regular_file(fe)) found.push_back(it->path());
    }
    std::sort(found.begin(), found.end());
    for (const fs::path& p : found) add(p);
  }
  return out;
}

namespace {

// Files decoded at once: one per core (TRAINPROF_REPORT_THREADS overrides; 1 = sequential).
size_t DecodeThreads(size_t files) {
  size_t n = std::max(1u, std::thread::hardware_concurrency());
  if (const char* env = std::getenv("TRAINPROF_REPORT_THREADS"); env != nullptr && *env != 0) {
    char* end = nullptr;
    unsigned long v = std::strtoul(env, &end, 10);
    if (end != nullptr && *end == 0 && v > 0) n = v;
  }
  return std::min(n, std::max<size_t>(files, 1));
}

// The one place where images become a Trace: `decode(i)` decodes the i-th of `count` files. Files
// are decoded in parallel (they are independent); their strings are then pooled one file after
// another, in order, so that the result does not depend on the timing.
template <typename Decode>
Trace Load(size_t count, Decode decode) {
  std::vector<DecodedTrace> decoded(count);
  const size_t threads = DecodeThreads(count);
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) decoded[i] = decode(i);
  } else {
    std::atomic<size_t> next{0};
    std::mutex failed_mu;
    std::exception_ptr failed;
    auto work = [&] {
      try {
        for (size_t i; (i = next.fetch_add(1)) < count;) decoded[i] = decode(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failed_mu);
        if (!failed) failed = std::current_exception();
        next.store(count);
      }
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    if (failed) std::rethrow_exception(failed);
  }
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
  trace.processes = BuildProcesses(std::move(images), trace.strings);
  return trace;
}

}  // namespace

Trace LoadTrace(const std::vector<std::string>& files, const ReadOptions& options) {
  return Load(files.size(), [&](size_t i) { return DecodeTraceFile(files[i], options); });
}

Trace LoadTraceBytes(const std::vector<TraceBytes>& files, const ReadOptions& options) {
  return Load(files.size(), [&](size_t i) { return DecodeTraceBytes(files[i].bytes, files[i].path, options); });
}

}  // namespace trainprof::collector
