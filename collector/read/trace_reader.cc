#include "collector/read/trace_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "collector/read/kineto_reader.h"
#include "collector/read/trace_decoder.h"

namespace trainprof::collector {

// One file's read: trace_decoder.h (its stages in decode_*.cc); here, how a read is driven.
using decode::ByteSource;
using decode::Decoder;
using decode::FileSource;
using decode::MemorySource;

struct DecodedTrace::State {
  ReadResult result;
  TraceImage image;
  // The file as it was opened, for the CUDA chunk index (ReadOptions::cuda_index): a path and its
  // identity, or a copy of the bytes of a read from memory.
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  uint64_t device = 0, inode = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  std::unique_ptr<Decoder> decoder;  // null: nothing usable (the status says why)
  std::optional<KinetoDecoded> kineto;  // a Kineto JSON trace (kineto_reader.h)

  void Run(ByteSource* src, const std::string& path, const ReadOptions& options) {
    // Recognised by content: a trainprof trace starts with its magic, a Kineto trace with gzip's
    // magic or a JSON object.
    if (const std::span<const uint8_t> head = src->View(0, 64); LooksLikeKineto(head)) {
      const uint64_t size = src->size();
      kineto = DecodeKineto([src](uint64_t off, uint64_t len) { return src->View(off, len); }, size, path, options,
                            [src, size]() -> std::string {
                              if (!src->error().empty()) return src->error();
                              if (size > 0 && src->View(size - 1, 1).empty())
                                return "the file shrank while it was read (was " + std::to_string(size) +
                                       " bytes): read up to where it ended";
                              return {};
                            });
      return;
    }
    result.status.path = path;
    result.status.bytes = src->size();
    decoder = std::make_unique<Decoder>(src, &result.status, &image, options);
    if (!decoder->ReadHeader()) {  // bytes_read stays 0: nothing was usable
      decoder.reset();
      return;
    }
    // A second read for the exporters (read/nvtx_stream.h) of a file that another trace has
    // replaced since (a rename, a copy over it): its events would be another process's or run's,
    // named through the wrong refs. Nothing of it is decoded.
    if (const TraceImage* first = options.nvtx_names; first != nullptr) {
      if (image.pid != first->pid || image.header_start_ns != first->header_start_ns ||
          // A damaged wall-clock start reads as 0 here, and the first read's process tree filled
          // it in from the host's other processes (FillUnknownRealtime).
          (image.start_realtime_ns != 0 && image.start_realtime_ns != first->start_realtime_ns) ||
          image.run_id != first->run_id) {
        result.status.errors.push_back("another trace has replaced the file since it was loaded (pid " +
                                       std::to_string(image.pid) + ", was " + std::to_string(first->pid) +
                                       "; or another start or run)");
        ++result.status.losses[Loss::read_errors];
        decoder.reset();
        return;
      }
    }
    result.status.usable = true;
    decoder->ReadMetadata();
    decoder->ReadChunks();
    decoder->EndOfData();
    image.truncated = result.status.truncated;
    result.status.bytes_read = src->size() - std::min<uint64_t>(decoder->skipped(), src->size());
  }
};

DecodedTrace::DecodedTrace() : state_(std::make_unique<State>()) {}
DecodedTrace::~DecodedTrace() = default;
DecodedTrace::DecodedTrace(DecodedTrace&&) noexcept = default;
DecodedTrace& DecodedTrace::operator=(DecodedTrace&&) noexcept = default;

DecodedTrace DecodedTrace::Failed(const std::string& path, const std::string& error) {
  DecodedTrace out;
  out.state_->result.status.path = path;
  out.state_->result.status.errors.push_back(error);
  ++out.state_->result.status.losses[Loss::read_errors];
  return out;
}

ReadResult DecodedTrace::Finish(StringPool* strings) {
  State& st = *state_;
  if (st.kineto) {
    ReadResult r = FinishKineto(std::move(*st.kineto), strings);
    st.kineto.reset();
    return r;
  }
  if (st.decoder) {
    st.decoder->Resolve(strings);
    if (std::unique_ptr<CudaChunkIndex> index = st.decoder->TakeCudaIndex()) {
      index->path = st.result.status.path;
      index->size = st.result.status.bytes;
      index->bytes = std::move(st.bytes);
      index->device = st.device;
      index->inode = st.inode;
      index->mtime_ns = st.mtime_ns;
      index->ctime_ns = st.ctime_ns;
      index->Seal();
      st.image.cuda_index = std::move(index);
    }
    st.decoder.reset();
    st.result.image = std::move(st.image);
  }
  return std::move(st.result);
}

DecodedTrace DecodeTraceBytes(std::span<const uint8_t> data, const std::string& path, const ReadOptions& options) {
  MemorySource src(data);
  DecodedTrace out;
  if (options.cuda_index) out.state_->bytes = std::make_shared<const std::vector<uint8_t>>(data.begin(), data.end());
  out.state_->Run(&src, path, options);
  return out;
}

DecodedTrace DecodeTraceFile(const std::string& path, const ReadOptions& options) {
  auto fail = [&](const std::string& what, uint64_t bytes) {
    DecodedTrace out;
    out.state_->result.status.path = path;
    out.state_->result.status.bytes = bytes;
    out.state_->result.status.errors.push_back(what);
    ++out.state_->result.status.losses[Loss::read_errors];
    return out;
  };
  // O_NONBLOCK: opening a FIFO (a path swapped after the directory was listed) must not wait for
  // a writer; it is refused below. pread on a regular file ignores the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return fail(std::string("cannot open: ") + std::strerror(errno), 0);
  struct stat sb {};
  if (::fstat(fd, &sb) != 0) {
    int e = errno;
    ::close(fd);
    return fail(std::string("cannot stat: ") + std::strerror(e), 0);
  }
  if (!S_ISREG(sb.st_mode)) {
    ::close(fd);
    return fail("not a regular file", 0);
  }
  FileSource src(fd, static_cast<uint64_t>(sb.st_size));
  DecodedTrace out;
  out.state_->device = sb.st_dev;
  out.state_->inode = sb.st_ino;
  out.state_->mtime_ns = int64_t{sb.st_mtim.tv_sec} * 1'000'000'000 + sb.st_mtim.tv_nsec;
  out.state_->ctime_ns = int64_t{sb.st_ctim.tv_sec} * 1'000'000'000 + sb.st_ctim.tv_nsec;
  out.state_->Run(&src, path, options);
  ::close(fd);
  return out;
}

ReadResult ReadTraceBytes(std::span<const uint8_t> data, const std::string& path, StringPool* strings,
                          const ReadOptions& options) {
  return DecodeTraceBytes(data, path, options).Finish(strings);
}

ReadResult ReadTraceFile(const std::string& path, StringPool* strings, const ReadOptions& options) {
  return DecodeTraceFile(path, options).Finish(strings);
}

std::string DescribeDamage(const FileStatus& status) {
  std::string out;
  const size_t shown = std::min<size_t>(status.errors.size(), 3);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) out += "; ";
    out += status.errors[i];
  }
  if (status.errors.size() > shown) out += "; +" + std::to_string(status.errors.size() - shown) + " more";
  // How much of it was usable (the bytes decoded, the damaged and cut ones not), where that says
  // something: not of an empty file or one not opened. A file cut where a chunk ends has every byte
  // it holds usable: "N of N" would read as nothing lost, when what is lost is what it lacks.
  if (status.bytes > 0 && status.truncated && status.bytes_read == status.bytes) {
    out += " (all " + std::to_string(status.bytes) + (status.bytes == 1 ? " byte" : " bytes") + " it has usable)";
  } else if (status.bytes > 0) {
    out += " (" + std::to_string(status.bytes_read) + " of " + std::to_string(status.bytes) +
           (status.bytes == 1 ? " byte usable)" : " bytes usable)");
  }
  return out;
}

}  // namespace trainprof::collector
