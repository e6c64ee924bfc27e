#include "collector/trace_set.h"

#include <algorithm>
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

// The one place where images become a Trace: `read(i, pool)` decodes the i-th of `count` files.
template <typename Read>
Trace Load(size_t count, Read read) {
  Trace trace;
  std::vector<TraceImage> images;
  for (size_t i = 0; i < count; ++i) {
    ReadResult r = read(i, &trace.strings);
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

Trace LoadTrace(const std::vector<std::string>& files) {
  return Load(files.size(), [&](size_t i, StringPool* pool) { return ReadTraceFile(files[i], pool); });
}

Trace LoadTraceBytes(const std::vector<TraceBytes>& files) {
  return Load(files.size(),
              [&](size_t i, StringPool* pool) { return ReadTraceBytes(files[i].bytes, files[i].path, pool); });
}

}  // namespace trainprof::collector
