// Helpers shared by the collector tests: a scratch directory, reading traces built in memory.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "collector/read/process_tree.h"
#include "collector/render/render.h"
#include "collector/read/trace_reader.h"
#include "collector/read/trace_set.h"
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

/// Whether any line of `text` contains `s`.
inline bool Has(const std::vector<std::string>& text, const std::string& s) {
  for (const std::string& line : text) {
    if (line.find(s) != std::string::npos) return true;
  }
  return false;
}

/// The lines of `text`, each ended by a newline (for failure messages).
inline std::string Join(const std::vector<std::string>& text) {
  std::string out;
  for (const std::string& l : text) out += l + "\n";
  return out;
}

/// Has(text, s) as an assertion whose message, either way, names `s` and lists the text:
/// EXPECT_TRUE(Says(t.text, "Input-bound: ...")), EXPECT_FALSE(Says(t.text, "Worker start-up")).
inline ::testing::AssertionResult Says(const std::vector<std::string>& text, const std::string& s) {
  if (Has(text, s)) return ::testing::AssertionSuccess() << "a line has \"" << s << "\" in:\n" << Join(text);
  return ::testing::AssertionFailure() << "no line has \"" << s << "\" in:\n" << Join(text);
}

/// The GPU record `x` at `times` (start, end, correlation): designated initializers cannot name the
/// fields of its GpuWork base. At({.start_ns = 10, .end_ns = 30}, GpuKernel{.name = 5}).
template <typename Record>
Record At(const collector::GpuWork& times, Record x) {
  static_cast<collector::GpuWork&>(x) = times;
  return x;
}

/// The report's CSV tables (RenderCsv) by file name: "callsites.csv" → its text.
inline std::map<std::string, std::string> CsvByName(const collector::Report& report) {
  std::map<std::string, std::string> csv;
  for (collector::CsvTable& t : collector::RenderCsv(report)) csv[t.name] = std::move(t.text);
  return csv;
}

/// The first line of CSV text (its header), without the CRLF.
inline std::string FirstLine(const std::string& text) { return text.substr(0, text.find("\r\n")); }

/// `text` contains `part`, as an assertion whose failure message shows the text.
inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no \"" << part << "\" in:\n" << text;
}

/// Every member of the object `want` is in `got` with an equal value (numbers by value: 7000 equals
/// 7000.0); `got`'s other members are not looked at. The message names the first that differs.
inline ::testing::AssertionResult HasMembers(const nlohmann::json& got, const nlohmann::json& want) {
  for (const auto& member : want.items()) {
    const std::string& key = member.key();
    if (!got.contains(key)) return ::testing::AssertionFailure() << "no \"" << key << "\" in " << got.dump();
    if (got.at(key) != member.value()) {
      return ::testing::AssertionFailure() << "\"" << key << "\" is " << got.at(key).dump() << ", not "
                                           << member.value().dump();
    }
  }
  return ::testing::AssertionSuccess();
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Decodes builders as files of one run (in memory), like LoadTrace does with files on disk.
inline collector::Trace TraceOf(const std::vector<const TraceBuilder*>& builders) {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<collector::TraceBytes> files;
  bytes.reserve(builders.size());
  for (const TraceBuilder* b : builders) {
    bytes.push_back(b->Build());
    files.push_back({b->FileName(), bytes.back()});
  }
  return collector::LoadTraceBytes(files);
}

}  // namespace trainprof::test
