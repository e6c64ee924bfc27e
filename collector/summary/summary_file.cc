// summary_file.h: the file's top-level map and the trace files' statuses.
#include "collector/summary/summary_file.h"

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iterator>
#include <string>
#include <utility>

#include <zlib.h>

#include "collector/model/losses.h"
#include "collector/summary/summary_codec.h"

namespace trainprof::collector {
namespace {

using Json = nlohmann::json;

uint32_t Crc32(std::span<const uint8_t> bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t at = 0; at < bytes.size();) {  // zlib takes a uInt length
    const uInt n = static_cast<uInt>(std::min<size_t>(bytes.size() - at, 1u << 30));
    crc = crc32(crc, bytes.data() + at, n);
    at += n;
  }
  return static_cast<uint32_t>(crc);
}

// nlohmann/json's DOM builder with the limits a forged file needs, checked as the CBOR is read: its
// nesting (the reader recurses once a level: 100,000 nested arrays would overflow the stack) and its
// arrays and maps (each costs about 70 bytes once built, whatever its one byte in the file).
class BoundedCborSax {
 public:
  BoundedCborSax(Json* out, size_t max_containers) : dom_(*out, false), max_containers_(max_containers) {}
  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const std::string& s) { return dom_.number_float(v, s); }
  bool string(Json::string_t& v) { return dom_.string(v); }
  bool binary(Json::binary_t& v) { return dom_.binary(v); }
  bool key(Json::string_t& v) { return dom_.key(v); }
  bool start_object(std::size_t n) { return Enter() && dom_.start_object(n); }
  bool end_object() { return --depth_, dom_.end_object(); }
  bool start_array(std::size_t n) { return Enter() && dom_.start_array(n); }
  bool end_array() { return --depth_, dom_.end_array(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error_ = e.what();
    // "[json.exception.parse_error.110] parse error at byte 9: ...": the part after the bracket
    if (const size_t b = error_.find("] "); error_.rfind("[json.exception.", 0) == 0 && b != std::string::npos) error_.erase(0, b + 2);
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  bool Enter() {
    if (++depth_ > kMaxSummaryDepth) {
      error_ = "nested more than " + std::to_string(kMaxSummaryDepth) + " levels deep (no summary is)";
      return false;
    }
    if (++containers_ > max_containers_) {
      error_ = "more arrays and maps than its size allows (" + std::to_string(max_containers_) + ")";
      return false;
    }
    return true;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  size_t depth_ = 0, containers_ = 0;
  const size_t max_containers_;
  std::string error_;
};

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
  return SealSummary(Json::to_cbor(j));
}

std::vector<uint8_t> SealSummary(std::span<const uint8_t> cbor) {
  const uint32_t crc = Crc32(cbor);
  std::vector<uint8_t> out(sizeof kSummaryMagic + cbor.size() + 4);
  std::copy(std::begin(kSummaryMagic), std::end(kSummaryMagic), out.begin());
  std::copy(cbor.begin(), cbor.end(), out.begin() + sizeof kSummaryMagic);
  for (size_t k = 0; k < 4; ++k) out[out.size() - 4 + k] = static_cast<uint8_t>(crc >> (8 * k));
  return out;
}

bool LooksLikeSummary(std::span<const uint8_t> head) {
  return head.size() >= sizeof kSummaryMagic && std::memcmp(head.data(), kSummaryMagic, sizeof kSummaryMagic) == 0;
}

SummaryFile DecodeSummaryFile(std::span<const uint8_t> bytes, StringPool* strings) {
  if (!LooksLikeSummary(bytes)) throw SummaryError("not a trainprof summary (no CBOR magic 0xd9d9f7 at its start)");
  if (bytes.size() > kMaxSummaryBytes) {
    throw SummaryError(std::to_string(bytes.size()) + " bytes: more than a summary has (" +
                       std::to_string(kMaxSummaryBytes) + " at most)");
  }
  if (bytes.size() < sizeof kSummaryMagic + 5) throw SummaryError("cut short (" + std::to_string(bytes.size()) + " bytes)");
  const std::span<const uint8_t> cbor = bytes.subspan(sizeof kSummaryMagic, bytes.size() - sizeof kSummaryMagic - 4);
  uint32_t crc = 0;
  for (int k = 0; k < 4; ++k) crc |= static_cast<uint32_t>(bytes[bytes.size() - 4 + static_cast<size_t>(k)]) << (8 * k);
  if (Crc32(cbor) != crc) throw SummaryError("damaged or cut short: its CRC-32 does not match its bytes");
  Json j;
  BoundedCborSax sax(&j, cbor.size() / 8 + 64);
  if (!Json::sax_parse(cbor.begin(), cbor.end(), &sax, Json::input_format_t::cbor, /*strict=*/true)) {
    throw SummaryError("not readable as CBOR: " + (sax.error().empty() ? std::string("damaged") : sax.error()));
  }
  const uint64_t version = U64(Field(j, "trainprof_summary", "summary"), "trainprof_summary");
  if (version != kSummaryFormatVersion) {
    throw SummaryError("summary format version " + std::to_string(version) + "; this trainprof reads version " +
                       std::to_string(kSummaryFormatVersion) +
                       (version < kSummaryFormatVersion ? " (summarise the trace again with it)"
                                                        : " (written by a newer trainprof: report it with that one)"));
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
    SummaryFile f = DecodeSummaryFile(bytes, strings);
    if (f.files.size() != 1) {
      throw SummaryError("files: " + std::to_string(f.files.size()) +
                         " trace files' statuses where `trainprof summarize` writes one");
    }
    return f;
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
