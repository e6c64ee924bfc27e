#include "collector/read/cuda_chunk_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <span>
#include <tuple>

#include "collector/model/model.h"
#include "collector/read/record_scan.h"
#include "collector/read/tsc_convert.h"
#include "trainprof/records.h"

namespace trainprof::collector {
namespace {

using format::RecordTag;

// Which records a read again takes: those a time window owns or overlaps, or those with given
// correlation ids.
struct Selection {
  const TimeWindow* window = nullptr;
  uint64_t process_end_ns = 0;
  const std::vector<uint64_t>* call_ids = nullptr;  // sorted, unique
  const std::vector<uint64_t>* gpu_ids = nullptr;

  static bool Has(const std::vector<uint64_t>* ids, uint64_t id) {
    return ids != nullptr && std::binary_search(ids->begin(), ids->end(), id);
  }
  static bool AnyIn(const std::vector<uint64_t>* ids, uint64_t lo, uint64_t hi) {
    if (ids == nullptr || lo > hi) return false;
    auto it = std::lower_bound(ids->begin(), ids->end(), lo);
    return it != ids->end() && *it <= hi;
  }
  bool In(uint64_t begin, uint64_t end) const { return window->Owns(begin) || window->Overlaps(begin, end); }
  /// A call the whole read completed (returned, or never: by CallEnd).
  bool Call(const CudaCall& c) const {
    return window != nullptr ? In(c.begin_ns, CallEnd(c, process_end_ns)) : Has(call_ids, c.correlation);
  }
  bool Gpu(uint64_t start, uint64_t end, uint64_t correlation) const {
    return window != nullptr ? In(start, end) : Has(gpu_ids, correlation);
  }
  /// The chunk may hold a record taken.
  bool Chunk(const CudaChunkIndex::Chunk& c) const {
    // In time: a record with begin < end_ns and end >= begin_ns (owned or overlapping), and the
    // span holds every one of the chunk's records.
    if (window != nullptr) return c.span.lo < window->end_ns && c.span.hi >= window->begin_ns;
    return AnyIn(call_ids, c.span.call_ids_lo, c.span.call_ids_hi) ||
           AnyIn(gpu_ids, c.span.gpu_ids_lo, c.span.gpu_ids_hi);
  }
};

// The selected records as the decoder completes them.
class SelectSink final : public CudaSink {
 public:
  SelectSink(const Selection& select, const KernelConfigs& configs, std::vector<SeqCall>* calls, CudaData* out)
      : select_(select), configs_(configs), calls_(*calls), out_(*out) {}

  void Call(const CudaCall& c) override { CallAt(c, 0); }
  void CallAt(const CudaCall& c, uint64_t seq) override {
    // A call that never returned is handed over when its id is reused: the index has it.
    if (c.returned && select_.Call(c)) calls_.push_back({c, seq});
  }
  void Kernel(const GpuKernel& k, const KernelConfig& config) override {
    if (!select_.Gpu(k.start_ns, k.end_ns, k.correlation)) return;
    // Consecutive kernels mostly repeat a configuration (KernelConfigs::Intern's cache).
    if (!(has_last_ && config == last_config_)) {
      last_config_ = config;
      last_index_ = configs_.Find(config);
      has_last_ = true;
    }
    const uint32_t index = last_index_;
    if (index == UINT32_MAX) {
      unknown_config_ = true;
      return;
    }
    out_.kernels.push_back(k);
    out_.kernels.back().config = index;
  }
  void Memcpy(const GpuMemcpy& m) override {
    if (select_.Gpu(m.start_ns, m.end_ns, m.correlation)) out_.memcpys.push_back(m);
  }
  void Memset(const GpuMemset& m) override {
    if (select_.Gpu(m.start_ns, m.end_ns, m.correlation)) out_.memsets.push_back(m);
  }
  void Sync(const GpuSync&) override {}
  void Overhead(const GpuOverhead&) override {}
  void Resolve(const std::vector<StringId>&) override {}

  bool unknown_config() const { return unknown_config_; }

 private:
  const Selection& select_;
  const KernelConfigs& configs_;
  std::vector<SeqCall>& calls_;
  CudaData& out_;
  bool unknown_config_ = false;
  bool has_last_ = false;
  KernelConfig last_config_;
  uint32_t last_index_ = 0;
};

// One chunk's records again, for their CUDA part: the steps of Decoder::DecodeChunk
// (trace_reader.cc) that decide where a record ends, whether it is whole, and where damage stops
// the chunk, with the CUDA records to `cuda` and an EVENT_STACK after an exit to its call. Where
// damage stops it, the whole read also marked the thread's open calls as having lost their exits:
// no call completes in the rest of the chunk, and the later chunks' start states carry the mark.
void ScanChunk(std::span<const uint8_t> bytes, const CudaChunkIndex::Chunk& c, const CudaChunkIndex& index,
               CudaRecordDecoder* cuda) {
  const uint8_t* p = bytes.data();
  const uint8_t* const end = p + bytes.size();
  uint64_t ticks = c.base;
  std::optional<TscConverter::Cursor> tsc;
  if (index.tsc) tsc.emplace(*index.tsc);
  uint64_t now = tsc ? tsc->ToNs(ticks) : ticks;
  uint64_t f[format::kMaxRecordFields];
  uint64_t dt = 0;
  uint8_t prev_tag = 0;
  while (p < end) {
    const uint8_t* const rec = p;
    const uint8_t tag = *p++;
    if (tag == 0 && c.cut && std::all_of(rec, end, [](uint8_t b) { return b == 0; })) return;
    const format::RecordInfo* layout = format::FindRecord(tag);
    if (layout == nullptr || layout->since > index.version) return;
    bool whole = scan::ReadVarints(*layout, &p, end, &dt, f);
    if (whole && layout->has_bytes) {
      const uint64_t length = f[layout->field_count - 1];
      if (length > format::kMaxStringBytes) return;
      if (length > static_cast<uint64_t>(end - p)) {
        whole = false;
      } else {
        p += length;
      }
    }
    if (!whole) return;
    const bool timed = layout->cls == format::RecordClass::kTimed;
    if (timed) {
      if (dt > UINT64_MAX - ticks) return;
      ticks += dt;
      now = tsc ? tsc->ToNs(ticks) : ticks;
    }
    if (tag >= static_cast<uint8_t>(RecordTag::kCudaApiEnter) && tag <= static_cast<uint8_t>(RecordTag::kCapture)) {
      cuda->Add(tag, f, now, c.gpu_base, c.thread);
    } else if (tag == static_cast<uint8_t>(RecordTag::kEventStack)) {
      const uint64_t stack = format::Decode<format::rec::EventStack>(f).stack;
      if (stack != 0 && prev_tag == static_cast<uint8_t>(RecordTag::kCudaApiExit)) cuda->SetExitStack(stack);
    }
    if (timed) prev_tag = tag;
  }
}

// The index's file, if it is still the one the whole read read.
class IndexedBytes {
 public:
  explicit IndexedBytes(const CudaChunkIndex& index) : index_(index) {
    if (index.bytes != nullptr) return;
    fd_ = ::open(index.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd_ < 0) {
      error_ = index.path + ": cannot open again for the CUDA windows: " + std::strerror(errno);
      return;
    }
    struct stat sb {};
    if (::fstat(fd_, &sb) != 0 || !S_ISREG(sb.st_mode) || static_cast<uint64_t>(sb.st_size) != index.size ||
        sb.st_dev != index.device || sb.st_ino != index.inode ||
        int64_t{sb.st_mtim.tv_sec} * 1'000'000'000 + sb.st_mtim.tv_nsec != index.mtime_ns) {
      error_ = index.path + ": the file changed since it was read; its CUDA windows are not read again";
    }
  }
  ~IndexedBytes() {
    if (fd_ >= 0) ::close(fd_);
  }
  IndexedBytes(const IndexedBytes&) = delete;
  IndexedBytes& operator=(const IndexedBytes&) = delete;

  const std::string& error() const { return error_; }

  /// Bytes [begin, end) of the file; empty, with error() said, where they cannot all be read.
  std::span<const uint8_t> View(uint64_t begin, uint64_t end) {
    const uint64_t len = end - begin;
    if (index_.bytes != nullptr) {
      if (end > index_.bytes->size()) {
        error_ = index_.path + ": chunk past the bytes read";
        return {};
      }
      return {index_.bytes->data() + begin, len};
    }
    if (buf_.size() < len) buf_.resize(len);
    uint64_t got = 0;
    while (got < len) {
      const ssize_t n = ::pread(fd_, buf_.data() + got, len - got, static_cast<off_t>(begin + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = index_.path + ": read error at byte " + std::to_string(begin + got) + " of the CUDA windows" +
                 (n < 0 ? std::string(": ") + std::strerror(errno) : std::string(": the file shrank"));
        return {};
      }
      got += static_cast<uint64_t>(n);
    }
    return {buf_.data(), len};
  }

 private:
  const CudaChunkIndex& index_;
  int fd_ = -1;
  std::vector<uint8_t> buf_;
  std::string error_;
};

}  // namespace

namespace {

std::string Read(const CudaChunkIndex& index, const Selection& select, CudaData* out) {
  *out = CudaData{};
  IndexedBytes file(index);
  if (!file.error().empty()) return file.error();
  std::vector<SeqCall> calls;
  SelectSink sink(select, index.kernel_configs, &calls, out);
  CudaData scratch;  // definitions, counters: the whole read has them
  const auto& small = index.small_string_ref;
  CudaRecordDecoder cuda(
      &scratch,
      [&index, &small](uint64_t raw) -> uint32_t {
        if (raw < small.size()) return small[raw];
        auto it = index.string_ref_of.find(raw);
        return it == index.string_ref_of.end() ? 0 : it->second;
      },
      &sink, /*keep=*/false);
  for (const CudaChunkIndex::Chunk& c : index.chunks) {
    if (!select.Chunk(c)) continue;
    const std::span<const uint8_t> bytes = file.View(c.data_begin, c.data_end);
    if (!file.error().empty()) return file.error();
    cuda.Restart(index.open.data() + c.open_begin, c.open_end - c.open_begin, c.enters_before);
    ScanChunk(bytes, c, index, &cuda);
  }
  cuda.Restart(nullptr, 0, 0);  // hands over the last exit's call
  if (sink.unknown_config()) return index.path + ": a kernel's launch configuration is not the whole read's";
  for (const SeqCall& c : index.unreturned) {
    if (select.Call(c.call)) calls.push_back(c);
  }
  // The whole read's order: by enter time, ties in enter order (SortByEnterTime). Mostly in order
  // already: one thread's chunks.
  auto by_enter = [](const SeqCall& a, const SeqCall& b) {
    return std::tie(a.call.begin_ns, a.seq) < std::tie(b.call.begin_ns, b.seq);
  };
  if (!std::is_sorted(calls.begin(), calls.end(), by_enter)) std::sort(calls.begin(), calls.end(), by_enter);
  auto pool = [&](StringId ref) { return ref < index.pool_of_ref.size() ? index.pool_of_ref[ref] : 0; };
  out->calls.reserve(calls.size());
  for (SeqCall& c : calls) {
    c.call.name = pool(c.call.name);
    out->calls.push_back(c.call);
  }
  for (GpuKernel& k : out->kernels) k.name = pool(k.name);
  return {};
}

}  // namespace

std::string ReadCudaWindow(const CudaChunkIndex& index, const TimeWindow& window, uint64_t process_end_ns,
                           CudaData* out) {
  return Read(index, {.window = &window, .process_end_ns = process_end_ns}, out);
}

std::string ReadCudaPartners(const CudaChunkIndex& index, const std::vector<uint64_t>& call_ids,
                             const std::vector<uint64_t>& gpu_ids, CudaData* out) {
  return Read(index, {.call_ids = &call_ids, .gpu_ids = &gpu_ids}, out);
}

bool EveryCudaImageIndexed(const Trace& trace) {
  for (const Process& p : trace.processes) {
    for (const TraceImage& img : p.images) {
      if (img.source == ImageSource::kTrainprof && img.cuda.any() && img.cuda_index == nullptr) return false;
    }
  }
  return true;
}

CudaWindowReader ChunkIndexWindowReader() {
  return [](const TraceImage& image, const TimeWindow& window, uint64_t process_end_ns, CudaData* out,
            std::string* error) {
    if (image.cuda_index == nullptr) return false;
    *error = ReadCudaWindow(*image.cuda_index, window, process_end_ns, out);
    return error->empty();
  };
}

CudaPartnerReader ChunkIndexPartnerReader() {
  return [](const TraceImage& image, const CudaData& records, CudaData* out, std::string* error) {
    if (image.cuda_index == nullptr) return false;
    std::vector<uint64_t> call_ids, gpu_ids;  // the calls of its GPU records, the GPU records of its calls
    call_ids.reserve(records.kernels.size() + records.memcpys.size() + records.memsets.size());
    for (const GpuKernel& k : records.kernels) call_ids.push_back(k.correlation);
    for (const GpuMemcpy& m : records.memcpys) call_ids.push_back(m.correlation);
    for (const GpuMemset& m : records.memsets) call_ids.push_back(m.correlation);
    gpu_ids.reserve(records.calls.size());
    for (const CudaCall& c : records.calls) gpu_ids.push_back(c.correlation);
    for (std::vector<uint64_t>* ids : {&call_ids, &gpu_ids}) {
      std::sort(ids->begin(), ids->end());
      ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
    }
    *error = ReadCudaPartners(*image.cuda_index, call_ids, gpu_ids, out);
    return error->empty();
  };
}

CudaStartCounter ChunkIndexStartCounter() {
  return [](const TraceImage& image, std::vector<StartCount>* out) {
    if (image.cuda_index == nullptr) return false;
    for (const CudaChunkIndex::Chunk& c : image.cuda_index->chunks) out->push_back({c.span.lo, c.span.count});
    for (const SeqCall& c : image.cuda_index->unreturned) out->push_back({c.call.begin_ns, 1});
    return true;
  };
}

}  // namespace trainprof::collector
