// Tolerant reader of one trace file (the layout is format/trainprof/trace_format.h).
//
// Contract: any byte sequence is safe input. Every offset and length read from the file is
// checked against the file before use, string lengths are capped at kMaxStringBytes, and every
// loop advances through the file, so the reader neither crashes, allocates absurdly nor hangs.
// It keeps what it can: a chunk cut short (crash, copy in progress) or damaged in the middle is
// decoded up to its last whole record; one damaged chunk does not lose the others. Each problem
// becomes one line in FileStatus::errors, naming the byte offset where it was found.
//
//   header (+ metadata TLVs) ──► chunk slots: skip magic 0, check magic/committed/EOF
//        └─► group chunks by thread_index, order by thread_seq
//             └─► records, each chunk from its own base_ns ──► TraceImage
//                  NVTX records also feed an NvtxMatcher (summaries, not events)
//   Finish: file-local string ids ──► the report's StringPool
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "collector/model/cuda_sink.h"
#include "collector/model/model.h"
#include "collector/model/nvtx_sink.h"

namespace trainprof::collector {

struct ReadResult {
  FileStatus status;
  std::optional<TraceImage> image;  ///< set iff status.usable
};

/// Which NVTX events TraceImage::nvtx keeps. Every NVTX record is matched and summarised into
/// TraceImage::nvtx_summary whatever this says.
enum class KeepNvtx : uint8_t {
  kAll,     ///< every push, pop, mark, start and end (export, tests)
  kPhases,  ///< pushes, pops and marks of the phase domain (format/trainprof/phases.h) only:
            ///< what the step analysis needs; memory then does not grow with NVTX records
  kStreamed,  ///< as kPhases for a trainprof file, whose events the exporters read again as they
              ///< write them (read/nvtx_stream.h); as kAll for a Kineto file, which cannot be
              ///< read that way
};

/// Which CUDA calls and GPU records TraceImage::cuda keeps. Counters, devices, contexts, status
/// and captures are kept whatever this says, and a CudaSink sees every record.
enum class KeepCuda : uint8_t {
  kAll,           ///< every call and GPU record (report, export)
  kStackedCalls,  ///< only the calls with a stack (EVENT_STACK), no GPU record: what the call-site
                  ///< lines of `export --format folded` need; memory then grows with those only
  kNone,          ///< none (a CudaSink sees them); undefined stack ids of calls are not checked
};

struct ReadOptions {
  KeepNvtx keep = KeepNvtx::kAll;
  /// Receives the file's CUDA calls and GPU records as they are decoded (model/cuda_sink.h); one
  /// file's at a time: a sink per file when files are decoded at once (LoadTrace shares its
  /// options between threads: null there). Not owned.
  CudaSink* cuda_sink = nullptr;
  /// A trainprof trace's only, as the sink: a Kineto file keeps its records whatever this says.
  KeepCuda keep_cuda = KeepCuda::kAll;
  /// Fill TraceImage::cuda_digest (model/cuda_digest.h) as the records are decoded: the report's
  /// per-name CUDA tables. Off for an export, which does not use it (a Kineto image's is made
  /// whole, whatever this says).
  bool cuda_digest = true;
  /// Note where each chunk's CUDA records lie, so that one time window of them can be decoded
  /// again (TraceImage::cuda_index, read/cuda_chunk_index.h). A trainprof trace's only.
  bool cuda_index = false;
  /// Receives every NVTX event (push, pop, mark, start, end; not the operators' domain) in file
  /// order, each with the stack that followed it (0: none), named through `nvtx_names`' refs
  /// (model/nvtx_sink.h; read/nvtx_stream.h sets both). Not owned.
  NvtxSink* nvtx_sink = nullptr;
  /// The image an earlier read of the same file made: its string_of_ref / domain_of_ref name the
  /// sink's events (a ref past them gets 0).
  const TraceImage* nvtx_names = nullptr;
  /// Counts the files LoadTrace / LoadTraceBytes have decoded, as each is done (another thread may
  /// read it for a progress bar). Not owned.
  std::atomic<uint64_t>* files_done = nullptr;
};

/// A file decoded but not yet merged into a StringPool. Decoding touches no shared state, so
/// several files can be decoded at once; Finish() interns the file's strings and must run on one
/// thread at a time (in file order, so that pool ids do not depend on timing).
class DecodedTrace {
 public:
  DecodedTrace();
  ~DecodedTrace();
  DecodedTrace(DecodedTrace&&) noexcept;
  DecodedTrace& operator=(DecodedTrace&&) noexcept;

  ReadResult Finish(StringPool* strings);

  /// A file that could not be decoded at all: its status says `error` (e.g. out of memory).
  static DecodedTrace Failed(const std::string& path, const std::string& error);

 private:
  friend DecodedTrace DecodeTraceBytes(std::span<const uint8_t>, const std::string&, const ReadOptions&);
  friend DecodedTrace DecodeTraceFile(const std::string&, const ReadOptions&);
  struct State;
  std::unique_ptr<State> state_;
};

/// Decodes a whole trace held in memory (the bytes are not used after the call); `path` only names
/// it in messages.
DecodedTrace DecodeTraceBytes(std::span<const uint8_t> data, const std::string& path, const ReadOptions& options = {});

/// Decodes the file at `path`, reading it a chunk at a time (memory: one chunk, not the file). A
/// file that cannot be opened or read is reported in the status (usable == false), never thrown.
DecodedTrace DecodeTraceFile(const std::string& path, const ReadOptions& options = {});

/// DecodeTraceBytes(...).Finish(strings).
ReadResult ReadTraceBytes(std::span<const uint8_t> data, const std::string& path, StringPool* strings,
                          const ReadOptions& options = {});

/// DecodeTraceFile(...).Finish(strings).
ReadResult ReadTraceFile(const std::string& path, StringPool* strings, const ReadOptions& options = {});

/// "what is wrong; what else (read N of M bytes)": the damage of one file on one line.
std::string DescribeDamage(const FileStatus& status);

}  // namespace trainprof::collector
