#include "collector/read/exported_copies.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "collector/model/losses.h"
#include "collector/read/kineto_input.h"
#include "collector/read/kineto_reader.h"
#include "trainprof/trace_format.h"

namespace trainprof::collector {
namespace {

using format::FileHeader;

// What the origin and a trace header both say of one image: pid, image index, the header's
// CLOCK_MONOTONIC start and the boot id (all zero: unknown, as in files of older writers).
using ImageKey = std::tuple<int64_t, uint64_t, uint64_t, std::array<uint8_t, 16>>;

// The origin's key, as export_kineto.cc writes it (JsonGuard keeps one white space of each run,
// so the line's indentation is not part of it).
constexpr std::string_view kOriginKey = "\"trainprof_origin\":";
constexpr std::string_view kEventsKey = "\"traceEvents\"";
constexpr size_t kMaxProbe = 1 << 20;  // JSON text read before giving up on an origin

// A regular file opened for reading (never a FIFO: O_NONBLOCK, checked after the open), or -1.
int OpenRegular(const std::string& path, struct stat* st) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return -1;
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    close(fd);
    return -1;
  }
  return fd;
}

template <typename T>
T At(const uint8_t* head, size_t offset) {
  T v;
  std::memcpy(&v, head + offset, sizeof v);
  return v;
}

// "00ff..." (32 hex digits) as bytes; "" as all zero. nullopt for anything else.
std::optional<std::array<uint8_t, 16>> BootId(const std::string& hex) {
  std::array<uint8_t, 16> out{};
  if (hex.empty()) return out;
  if (hex.size() != 32) return std::nullopt;
  auto nibble = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  for (size_t i = 0; i < 16; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return out;
}

struct OriginImage {
  ImageKey key;
  std::string trace;  // the file name the export read it from
  std::string host;
  int64_t pid = 0;
};

// The "trainprof_origin" of a Kineto file open at fd: its text before "traceEvents" (at most
// kMaxProbe characters, gunzipped when it is gzip). Empty when there is none or it is malformed.
std::vector<OriginImage> ReadOrigin(int fd, uint64_t size, bool gzip) {
  std::vector<uint8_t> buffer;
  KinetoInput input(
      [&](uint64_t off, uint64_t len) -> std::span<const uint8_t> {
        buffer.resize(len);
        ssize_t n;
        do {
          n = pread(fd, buffer.data(), len, static_cast<off_t>(off));
        } while (n < 0 && errno == EINTR);
        return {buffer.data(), n > 0 ? static_cast<size_t>(n) : 0};
      },
      size, gzip);
  std::string text;
  char piece[16 << 10];
  size_t events = std::string::npos;
  while (events == std::string::npos && text.size() < kMaxProbe) {
    const std::streamsize n = input.sgetn(piece, sizeof piece);
    if (n <= 0) break;
    const size_t from = text.size() > kEventsKey.size() ? text.size() - kEventsKey.size() : 0;
    text.append(piece, static_cast<size_t>(n));
    events = text.find(kEventsKey, from);
  }
  const size_t at = text.find(kOriginKey);
  if (at == std::string::npos || (events != std::string::npos && at > events)) return {};
  std::vector<OriginImage> out;
  try {
    std::istringstream value(text.substr(at + kOriginKey.size(), events == std::string::npos ? std::string::npos : events - at));
    nlohmann::json origin;
    value >> origin;  // one value; what follows it is not read
    if (!origin.is_array()) return {};
    for (const nlohmann::json& e : origin) {
      std::optional<std::array<uint8_t, 16>> boot = BootId(e.at("boot_id").get<std::string>());
      if (!boot) return {};
      OriginImage img;
      img.pid = e.at("pid").get<int64_t>();
      img.key = {img.pid, e.at("image").get<uint64_t>(), e.at("start_monotonic_ns").get<uint64_t>(), *boot};
      img.trace = e.at("trace").get<std::string>();
      img.host = e.at("host").get<std::string>();
      out.push_back(std::move(img));
    }
  } catch (const nlohmann::json::exception&) {
    return {};  // not an origin trainprof wrote: the file is read as any Kineto file
  }
  return out;
}

}  // namespace

void SkipExportedCopies(TraceFileList* list) {
  std::map<ImageKey, size_t> traces;                       // image → index in list->files
  std::vector<std::pair<size_t, std::vector<OriginImage>>> copies;  // Kineto files with an origin
  for (size_t i = 0; i < list->files.size(); ++i) {
    struct stat st {};
    const int fd = OpenRegular(list->files[i], &st);
    if (fd < 0) continue;  // the reader says why
    uint8_t head[sizeof(FileHeader)];
    ssize_t n;
    do {
      n = pread(fd, head, sizeof head, 0);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof head) && std::memcmp(head, format::kFileMagic, sizeof format::kFileMagic) == 0) {
      std::array<uint8_t, 16> boot;
      std::memcpy(boot.data(), head + offsetof(FileHeader, boot_id), boot.size());
      traces.emplace(ImageKey{At<int32_t>(head, offsetof(FileHeader, pid)), At<uint32_t>(head, offsetof(FileHeader, image_index)),
                              At<uint64_t>(head, offsetof(FileHeader, start_monotonic_ns)), boot},
                     i);
    } else if (n > 0 && LooksLikeKineto({head, static_cast<size_t>(n)})) {
      std::vector<OriginImage> origin = ReadOrigin(fd, static_cast<uint64_t>(st.st_size), IsGzip({head, static_cast<size_t>(n)}));
      if (!origin.empty()) copies.emplace_back(i, std::move(origin));
    }
    close(fd);
  }
  std::vector<bool> skip(list->files.size(), false);
  for (const auto& [copy, origin] : copies) {
    std::string read, left_out;
    for (const OriginImage& img : origin) {
      auto it = traces.find(img.key);
      if (it != traces.end()) {
        read += (read.empty() ? "" : ", ") + list->files[it->second];
      } else {
        left_out += (left_out.empty() ? "" : ", ") + std::string("pid ") + std::to_string(img.pid) +
                    (img.host.empty() ? "" : " on " + img.host) + " (" + img.trace + ")";
      }
    }
    if (read.empty()) continue;  // none of its traces is read: the copy is the only record
    skip[copy] = true;
    const bool one = read.find(", ") == std::string::npos;
    std::string detail = "left out: trainprof exported it from " + read + (one ? ", which is" : ", which are") +
                         " read instead (each process is counted once)";
    if (!left_out.empty()) {
      detail += "; left out with it: " + left_out + ", not among the trace files given (give " + list->files[copy] +
                " alone to read what it holds)";
    }
    list->warnings.push_back(list->files[copy] + ": " + LossText(Loss::exported_copies, 1, detail));
    ++list->losses[Loss::exported_copies];
  }
  std::vector<std::string> kept;
  for (size_t i = 0; i < list->files.size(); ++i) {
    if (!skip[i]) kept.push_back(std::move(list->files[i]));
  }
  list->files = std::move(kept);
}

}  // namespace trainprof::collector
