// How the fuzz targets of tests/fuzz/ turn one fuzz input into trace files (docs/testing.md).
//
// One input can hold several trace files: a new file starts at every occurrence of the file magic
// ("TRPROF\r\n") after offset 0, so that a seed made of a whole run's files concatenated
// (tests/fuzz/make_corpus) exercises the merging of exec'd images, the process tree and the
// cross-process analyses. An input without a second magic is one file, read exactly as
// ReadTraceFile reads a file's bytes; so is the part before the first magic.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collector/read/trace_set.h"
#include "trainprof/trace_format.h"

namespace trainprof::fuzz {

/// The trace files in `data` (at least one, possibly empty), named pid-0.trace, pid-1.trace, ...
/// The spans point into `data`.
inline std::vector<collector::TraceBytes> SplitFiles(std::span<const uint8_t> data) {
  std::vector<collector::TraceBytes> files;
  const auto* const magic = reinterpret_cast<const uint8_t*>(format::kFileMagic);
  const size_t magic_size = sizeof format::kFileMagic;
  size_t begin = 0;
  while (true) {
    size_t next = data.size();
    if (data.size() - begin > magic_size) {
      auto it = std::search(data.begin() + static_cast<std::ptrdiff_t>(begin + 1), data.end(), magic,
                            magic + magic_size);
      next = static_cast<size_t>(it - data.begin());
    }
    files.push_back({"pid-" + std::to_string(files.size()) + ".trace", data.subspan(begin, next - begin)});
    if (next == data.size()) return files;
    begin = next;
  }
}

/// The fuzzer's (data, size) as a span; libFuzzer passes (nullptr, 0) for the empty input.
inline std::span<const uint8_t> Input(const uint8_t* data, size_t size) {
  return size == 0 ? std::span<const uint8_t>() : std::span<const uint8_t>(data, size);
}

/// Describes each damaged file of `trace` as the report's warnings do and keeps the result
/// observable, so that the compiler cannot drop the work of a fuzz entry.
inline void Observe(const collector::Trace& trace) {
  size_t described = 0;
  for (const collector::FileStatus& f : trace.files) {
    if (f.damaged()) described += collector::DescribeDamage(f).size();
  }
  volatile size_t sink = described + trace.processes.size();
  (void)sink;
}

}  // namespace trainprof::fuzz
