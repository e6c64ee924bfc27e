// Helpers shared by the collector tests: a scratch directory, reading traces built in memory.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "collector/process_tree.h"
#include "collector/trace_reader.h"
#include "collector/trace_set.h"
#include "trace_builder.h"

namespace trainprof::test {

/// A fresh directory, removed with everything in it at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = ::testing::TempDir() + "trainprof-collector-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = buf.data();
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Decodes builders as files of one run (in memory), like LoadTrace does with files on disk.
inline collector::Trace TraceOf(const std::vector<const TraceBuilder*>& builders) {
  collector::Trace trace;
  std::vector<collector::TraceImage> images;
  for (const TraceBuilder* b : builders) {
    std::vector<uint8_t> bytes = b->Build();
    collector::ReadResult r = collector::ReadTraceBytes(bytes, b->FileName(), &trace.strings);
    if (r.image) {
      r.image->file = trace.files.size();
      images.push_back(std::move(*r.image));
    }
    trace.files.push_back(std::move(r.status));
  }
  trace.processes = collector::BuildProcesses(std::move(images), trace.strings);
  return trace;
}

}  // namespace trainprof::test
