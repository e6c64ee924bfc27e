// summary_file.h: the file's top-level map and the trace files' statuses.
#include "collector/summary/summary_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iterator>
#include <string>
#include <utility>

#include "collector/model/losses.h"
#include "collector/summary/summary_codec.h"

namespace trainprof::collector {
namespace {

using Json = nlohmann::json;

Json StatusJson(const FileStatus& f) {
  Json losses = Json::object();
  for (size_t k = 0; k < kLossKinds; ++k) {
    const Loss kind = static_cast<Loss>(k);
    if (f.losses[kind] > 0) losses[std::string(InfoOf(kind).key)] = f.losses[kind];
  }
  return Json{{"path", f.path},
              {"pid", f.pid ? Json(*f.pid) : Json(nullptr)},
              {"bytes", f.bytes},
              {"bytes_read", f.bytes_read},
              {"truncated", f.truncated},
              {"usable", f.usable},
              {"format", f.format == ImageSource::kKineto ? "kineto" : "trainprof"},
              {"errors", f.errors},
              {"losses", std::move(losses)}};
}

FileStatus ReadStatus(const Json& j, const std::string& w) {
  FileStatus f;
  f.path = Str(Field(j, "path", w), w + ".path");
  if (f.path.empty()) Fail(w + ".path", "empty");
  if (std::optional<int64_t> pid = OptI64(Field(j, "pid", w), w + ".pid")) {
    if (*pid < INT32_MIN || *pid > INT32_MAX) Fail(w + ".pid", "out of range");
    f.pid = static_cast<int32_t>(*pid);
  }
  f.bytes = U64(Field(j, "bytes", w), w + ".bytes");
  f.bytes_read = U64(Field(j, "bytes_read", w), w + ".bytes_read");
  if (f.bytes_read > f.bytes) Fail(w + ".bytes_read", "more bytes read than the file has");
  f.truncated = Bool(Field(j, "truncated", w), w + ".truncated");
  f.usable = Bool(Field(j, "usable", w), w + ".usable");
  const std::string format = Str(Field(j, "format", w), w + ".format");
  if (format == "kineto") {
    f.format = ImageSource::kKineto;
  } else if (format != "trainprof") {
    Fail(w + ".format", "not \"trainprof\" or \"kineto\"");
  }
  f.errors = Strings(Field(j, "errors", w), w + ".errors");
  const Json& losses = Field(j, "losses", w);
  if (!losses.is_object()) Fail(w + ".losses", "expected a map");
  for (const auto& [key, n] : losses.items()) {
    bool known = false;
    for (size_t k = 0; k < kLossKinds && !known; ++k) {
      const Loss kind = static_cast<Loss>(k);
      if (InfoOf(kind).key != key) continue;
      known = true;
      if (InfoOf(kind).scope != LossScope::kFile) Fail(w + ".losses." + key, "not a loss of a file");
      f.losses[kind] = U64(n, w + ".losses." + key);
      if (f.losses[kind] == 0) Fail(w + ".losses." + key, "a loss of 0");
    }
    if (!known) Fail(w + ".losses", "unknown loss \"" + key + "\"");
  }
  return f;
}

}  // namespace

std::vector<uint8_t> EncodeSummaryFile(const std::vector<FileStatus>& files, size_t not_recorded_omitted,
                                       const std::vector<const ProcessSummary*>& processes,
                                       const StringPool& strings) {
  Json j{{"trainprof_summary", kSummaryFormatVersion},
         {"files", Json::array()},
         {"not_recorded_omitted", not_recorded_omitted},
         {"processes", Json::array()}};
  for (const FileStatus& f : files) j["files"].push_back(StatusJson(f));
  for (const ProcessSummary* s : processes) j["processes"].push_back(SummaryJson(*s, strings));
  std::vector<uint8_t> out(std::begin(kSummaryMagic), std::end(kSummaryMagic));
  Json::to_cbor(j, out);
  return out;
}

bool LooksLikeSummary(std::span<const uint8_t> head) {
  return head.size() >= sizeof kSummaryMagic && std::memcmp(head.data(), kSummaryMagic, sizeof kSummaryMagic) == 0;
}

SummaryFile DecodeSummaryFile(std::span<const uint8_t> bytes, StringPool* strings) {
  if (!LooksLikeSummary(bytes)) throw SummaryError("not a trainprof summary (no CBOR magic 0xd9d9f7 at its start)");
  Json j;
  try {
    j = Json::from_cbor(bytes.subspan(sizeof kSummaryMagic), /*strict=*/true, /*allow_exceptions=*/true);
  } catch (const Json::exception& e) {
    throw SummaryError(std::string("not readable as CBOR (cut short or damaged): ") + e.what());
  }
  const uint64_t version = U64(Field(j, "trainprof_summary", "summary"), "trainprof_summary");
  if (version != kSummaryFormatVersion) {
    throw SummaryError("summary format version " + std::to_string(version) + "; this trainprof reads version " +
                       std::to_string(kSummaryFormatVersion) + " (summarise the trace again with it)");
  }
  SummaryFile out;
  const Json& files = Array(Field(j, "files", "summary"), "files");
  for (size_t i = 0; i < files.size(); ++i) out.files.push_back(ReadStatus(files[i], "files[" + std::to_string(i) + "]"));
  out.not_recorded_omitted = U64(Field(j, "not_recorded_omitted", "summary"), "not_recorded_omitted");
  const Json& processes = Array(Field(j, "processes", "summary"), "processes");
  for (size_t i = 0; i < processes.size(); ++i) {
    try {
      out.processes.push_back(ReadSummary(processes[i], strings));
    } catch (const SummaryError& e) {  // its fields' paths within the file
      throw SummaryError("processes[" + std::to_string(i) + "]." + e.what());
    }
  }
  return out;
}

bool IsSummaryFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  uint8_t head[sizeof kSummaryMagic] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  return in.gcount() == static_cast<std::streamsize>(sizeof head) && LooksLikeSummary(head);
}

SummaryFile ReadSummaryFile(const std::string& path, StringPool* strings) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes;
  if (in) bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  FileStatus status;
  status.path = path;
  status.bytes = bytes.size();
  if (!in && bytes.empty()) {
    status.errors.push_back(std::string("cannot read the summary file: ") + std::strerror(errno));
    return {{std::move(status)}, 0, {}};
  }
  try {
    return DecodeSummaryFile(bytes, strings);
  } catch (const SummaryError& e) {
    status.errors.push_back(std::string("not a usable summary file: ") + e.what());
    return {{std::move(status)}, 0, {}};
  }
}

std::vector<uint8_t> EncodeSummary(const ProcessSummary& s, const StringPool& strings) {
  return EncodeSummaryFile({}, 0, {&s}, strings);
}

ProcessSummary DecodeSummary(std::span<const uint8_t> bytes, StringPool* strings) {
  SummaryFile f = DecodeSummaryFile(bytes, strings);
  if (f.processes.size() != 1) {
    throw SummaryError("processes: " + std::to_string(f.processes.size()) + " summaries where one was expected");
  }
  return std::move(f.processes.front());
}

}  // namespace trainprof::collector
