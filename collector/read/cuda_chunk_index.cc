#include "collector/read/cuda_chunk_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <optional>
#include <span>
#include <tuple>

#include "collector/base/id_map.h"
#include "collector/model/model.h"
#include "collector/read/record_scan.h"
#include "collector/read/tsc_convert.h"
#include "trainprof/records.h"

namespace trainprof::collector {
namespace {

using format::RecordTag;

// A set of correlation ids, asked once per record decoded for a partner read and once per chunk
// for a range. Where the ids are dense (as CUPTI counts them up; IdSpan::dense, base/id_map.h,
// the rule IdMap's flat array follows), one bit per id of the span and the count of ids before
// each 64-bit word: membership is one bit, a range two counts, and nothing is sorted. Ids spread
// thinner are sorted (binary searches).
class IdSet {
 public:
  /// The distinct ids of `ids` (any order, repeats allowed).
  explicit IdSet(std::vector<uint64_t> ids) {
    IdSpan span;
    for (uint64_t id : ids) span.Add(id);
    if (span.count == 0) return;
    if (span.dense()) {
      lo_ = span.lo;
      hi_ = span.hi;
      bits_.assign((hi_ - lo_) / 64 + 1, 0);
      for (uint64_t id : ids) bits_[(id - lo_) >> 6] |= uint64_t{1} << ((id - lo_) & 63);
      before_.resize(bits_.size() + 1);
      before_[0] = 0;
      for (size_t w = 0; w < bits_.size(); ++w) before_[w + 1] = before_[w] + std::popcount(bits_[w]);
      return;
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    sorted_ = std::move(ids);
  }

  bool empty() const { return bits_.empty() && sorted_.empty(); }
  /// The smallest and the largest id (not empty()).
  uint64_t min() const { return bits_.empty() ? sorted_.front() : lo_; }
  uint64_t max() const { return bits_.empty() ? sorted_.back() : hi_; }

  bool Has(uint64_t id) const {
    if (bits_.empty()) return std::binary_search(sorted_.begin(), sorted_.end(), id);
    if (id < lo_ || id > hi_) return false;
    const uint64_t slot = id - lo_;
    return (bits_[slot >> 6] >> (slot & 63)) & 1;
  }
  /// Some id in [lo, hi].
  bool AnyIn(uint64_t lo, uint64_t hi) const {
    if (lo > hi) return false;
    if (bits_.empty()) {
      auto it = std::lower_bound(sorted_.begin(), sorted_.end(), lo);
      return it != sorted_.end() && *it <= hi;
    }
    lo = std::max(lo, lo_);
    hi = std::min(hi, hi_);
    return lo <= hi && Below(hi - lo_ + 1) > Below(lo - lo_);
  }

 private:
  // How many ids lie in the span's first `slots` slots.
  uint64_t Below(uint64_t slots) const {
    const uint64_t w = slots >> 6, bit = slots & 63;
    return before_[w] + (bit == 0 ? 0 : std::popcount(bits_[w] & ((uint64_t{1} << bit) - 1)));
  }

  uint64_t lo_ = 0, hi_ = 0;
  std::vector<uint64_t> bits_;     // dense: bit i for id lo_ + i
  std::vector<uint64_t> before_;   // dense: ids in the words before word w
  std::vector<uint64_t> sorted_;   // spread thin: the ids, sorted, distinct
};

// Which records a read again takes: those a time window owns or overlaps, or those with given
// correlation ids.
struct Selection {
  const TimeWindow* window = nullptr;
  uint64_t process_end_ns = 0;
  const IdSet* call_ids = nullptr;
  const IdSet* gpu_ids = nullptr;

  static bool Has(const IdSet* ids, uint64_t id) { return ids != nullptr && ids->Has(id); }
  static bool AnyIn(const IdSet* ids, uint64_t lo, uint64_t hi) { return ids != nullptr && ids->AnyIn(lo, hi); }
  bool In(uint64_t begin, uint64_t end) const { return window->Owns(begin) || window->Overlaps(begin, end); }
  /// A call the whole read completed (returned, or never: by CallEnd).
  bool Call(const CudaCall& c) const {
    return window != nullptr ? In(c.begin_ns, CallEnd(c, process_end_ns)) : Has(call_ids, c.correlation);
  }
  bool Gpu(uint64_t start, uint64_t end, uint64_t correlation) const {
    return window != nullptr ? In(start, end) : Has(gpu_ids, correlation);
  }
  /// The chunks [first, last) of `index` outside of which none holds a record taken.
  std::pair<size_t, size_t> Chunks(const CudaChunkIndex& index) const {
    if (index.time.reach.size() != index.chunks.size()) return {0, index.chunks.size()};  // not sealed: ask each
    if (window != nullptr) {
      if (window->end_ns == 0) return {0, 0};
      return index.time.Meeting(window->begin_ns, window->end_ns - 1);
    }
    std::pair<size_t, size_t> range{index.chunks.size(), 0};
    auto add = [&](const IdSet* ids, const CudaChunkIndex::Bounds& bounds) {
      if (ids == nullptr || ids->empty()) return;
      const auto [first, last] = bounds.Meeting(ids->min(), ids->max());
      range = {std::min(range.first, first), std::max(range.second, last)};
    };
    add(call_ids, index.call_ids);
    add(gpu_ids, index.gpu_ids);
    return range.first < range.second ? range : std::pair<size_t, size_t>{0, 0};
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

// Every record the decoder completes, with its place in the file (the chunk's ordinal in the
// index, then its order in the chunk), for a selection to take from.
class BufferSink final : public CudaSink {
 public:
  explicit BufferSink(const KernelConfigs& configs) : configs_(configs) {}

  template <typename T>
  struct At {
    uint64_t pos;
    T record;
  };
  std::vector<SeqCall> calls;  // returned ones: a call that never returned is the index's
  std::vector<At<GpuKernel>> kernels;
  std::vector<At<GpuMemcpy>> memcpys;
  std::vector<At<GpuMemset>> memsets;

  void StartChunk(uint64_t ordinal) { pos_ = ordinal << 32; }
  bool unknown_config() const { return unknown_config_; }

  void Call(const CudaCall& c) override { CallAt(c, 0); }
  void CallAt(const CudaCall& c, uint64_t seq) override {
    if (c.returned) calls.push_back({c, seq});
  }
  void Kernel(const GpuKernel& k, const KernelConfig& config) override {
    // Consecutive kernels mostly repeat a configuration (KernelConfigs::Intern's cache).
    if (!(has_last_ && config == last_config_)) {
      last_config_ = config;
      last_index_ = configs_.Find(config);
      has_last_ = true;
    }
    if (last_index_ == UINT32_MAX) {
      unknown_config_ = true;
      return;
    }
    kernels.push_back({pos_++, k});
    kernels.back().record.config = last_index_;
  }
  void Memcpy(const GpuMemcpy& m) override { memcpys.push_back({pos_++, m}); }
  void Memset(const GpuMemset& m) override { memsets.push_back({pos_++, m}); }
  void Sync(const GpuSync&) override {}
  void Overhead(const GpuOverhead&) override {}
  void Resolve(const std::vector<StringId>&) override {}

 private:
  const KernelConfigs& configs_;
  uint64_t pos_ = 0;
  bool unknown_config_ = false;
  bool has_last_ = false;
  KernelConfig last_config_;
  uint32_t last_index_ = 0;
};

// One chunk's records again, for their CUDA part: the steps of Decoder::DecodeRecords
// (decode_records.cc) that decide where a record ends, whether it is whole, and where damage stops
// the chunk, with the CUDA records to `cuda` and an EVENT_STACK after an exit to its call. Where
// damage stops it, the whole read also marked the thread's open calls as having lost their exits:
// no call completes in the rest of the chunk, and the later chunks' start states carry the mark.
void ScanChunk(std::span<const uint8_t> bytes, const CudaChunkIndex::Chunk& c, const CudaChunkIndex& index,
               const TscConverter* converter, CudaRecordDecoder* cuda) {
  const uint8_t* p = bytes.data();
  const uint8_t* const end = p + bytes.size();
  uint64_t ticks = c.base;
  std::optional<TscConverter::Cursor> tsc;
  if (converter != nullptr) tsc.emplace(*converter);
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

// The bounds of one span of the chunks (`lo_of`, `hi_of` give it).
template <typename Lo, typename Hi>
CudaChunkIndex::Bounds MakeBounds(const std::vector<CudaChunkIndex::Chunk>& chunks, Lo lo_of, Hi hi_of) {
  CudaChunkIndex::Bounds b;
  b.reach.resize(chunks.size());
  b.floor.resize(chunks.size());
  uint64_t reach = 0, floor = UINT64_MAX;
  for (size_t i = 0; i < chunks.size(); ++i) b.reach[i] = reach = std::max(reach, hi_of(chunks[i]));
  for (size_t i = chunks.size(); i-- > 0;) b.floor[i] = floor = std::min(floor, lo_of(chunks[i]));
  return b;
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
        int64_t{sb.st_mtim.tv_sec} * 1'000'000'000 + sb.st_mtim.tv_nsec != index.mtime_ns ||
        int64_t{sb.st_ctim.tv_sec} * 1'000'000'000 + sb.st_ctim.tv_nsec != index.ctime_ns) {
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

// Decodes again the chunks of `index` that `select` may take from and `done` does not name, into
// `sink`, marking them done.
std::string DecodeChunks(const CudaChunkIndex& index, IndexedBytes* file, const Selection& select,
                         std::vector<bool>* done, BufferSink* sink) {
  CudaData scratch;  // definitions, counters: the whole read has them
  const auto& small = index.small_string_ref;
  CudaRecordDecoder cuda(
      &scratch,
      [&index, &small](uint64_t raw) -> uint32_t {
        // As the whole read's StringRef: a small id's slot, else the map (ids past the slots'
        // bound, which the vector's growth may have covered with empty slots).
        if (raw < small.size() && small[raw] != 0) return small[raw];
        auto it = index.string_ref_of.find(raw);
        return it == index.string_ref_of.end() ? 0 : it->second;
      },
      sink, /*keep=*/false);
  // A TscConverter keeps the segment it used last (not thread-safe): this read's own copy, as the
  // windows of one index are read on several threads at once (ForEachCudaWindow).
  std::optional<TscConverter> converter;
  if (index.tsc) converter.emplace(*index.tsc);
  const auto [first, last] = select.Chunks(index);
  for (size_t i = first; i < last; ++i) {
    const CudaChunkIndex::Chunk& c = index.chunks[i];
    if ((*done)[i] || !select.Chunk(c)) continue;
    (*done)[i] = true;
    const std::span<const uint8_t> bytes = file->View(c.data_begin, c.data_end);
    if (!file->error().empty()) return file->error();
    cuda.Restart(index.open.data() + c.open_begin, c.open_end - c.open_begin, c.enters_before);
    sink->StartChunk(i);
    ScanChunk(bytes, c, index, converter ? &*converter : nullptr, &cuda);
  }
  cuda.Restart(nullptr, 0, 0);  // hands over the last exit's call
  if (sink->unknown_config()) return index.path + ": a kernel's launch configuration is not the whole read's";
  return {};
}

// The records of `buffer` (and the index's calls that never returned) that `select` takes and
// `except` (may be null) does not, into `out` (replaced), in the whole read's order.
void Take(const CudaChunkIndex& index, const BufferSink& buffer, const Selection& select, CudaData* out,
          const Selection* except = nullptr) {
  *out = CudaData{};
  // Each kind taken in two steps: the records selected, by address, noting whether they are in
  // order already (mostly: then nothing is sorted); then each copied once into `out`, which is
  // not zeroed first.
  auto by_enter = [](const SeqCall* a, const SeqCall* b) {  // SortByEnterTime: ties in enter order
    return std::tie(a->call.begin_ns, a->seq) < std::tie(b->call.begin_ns, b->seq);
  };
  std::vector<const SeqCall*> calls;
  calls.reserve(buffer.calls.size());
  bool in_order = true;
  auto select_call = [&](const SeqCall& c) {
    if (!select.Call(c.call) || (except != nullptr && except->Call(c.call))) return;
    if (in_order && !calls.empty() && by_enter(&c, calls.back())) in_order = false;
    calls.push_back(&c);
  };
  for (const SeqCall& c : buffer.calls) select_call(c);
  for (const SeqCall& c : index.unreturned) select_call(c);
  if (!in_order) std::sort(calls.begin(), calls.end(), by_enter);
  auto pool = [&](StringId ref) { return ref < index.pool_of_ref.size() ? index.pool_of_ref[ref] : 0; };
  out->calls.reserve(calls.size());
  for (const SeqCall* c : calls) {
    out->calls.push_back(c->call);
    out->calls.back().name = pool(c->call.name);
  }
  // GPU records in file order: the buffer's, where chunks were decoded in two rounds, by place.
  auto take = [&](const auto& from, auto* to, auto fix) {
    using At = typename std::decay_t<decltype(from)>::value_type;
    std::vector<const At*> taken;
    taken.reserve(from.size());
    bool by_place = true;
    for (const At& r : from) {
      if (!select.Gpu(r.record.start_ns, r.record.end_ns, r.record.correlation)) continue;
      if (except != nullptr && except->Gpu(r.record.start_ns, r.record.end_ns, r.record.correlation)) continue;
      if (by_place && !taken.empty() && r.pos < taken.back()->pos) by_place = false;
      taken.push_back(&r);
    }
    if (!by_place) std::sort(taken.begin(), taken.end(), [](const At* a, const At* b) { return a->pos < b->pos; });
    to->reserve(taken.size());
    for (const At* r : taken) {
      to->push_back(r->record);
      fix(&to->back());
    }
  };
  take(buffer.kernels, &out->kernels, [&](GpuKernel* k) { k->name = pool(k->name); });
  take(buffer.memcpys, &out->memcpys, [](GpuMemcpy*) {});
  take(buffer.memsets, &out->memsets, [](GpuMemset*) {});
}

std::string Read(const CudaChunkIndex& index, const Selection& select, CudaData* out) {
  *out = CudaData{};
  IndexedBytes file(index);
  if (!file.error().empty()) return file.error();
  BufferSink buffer(index.kernel_configs);
  std::vector<bool> done(index.chunks.size(), false);
  const std::string error = DecodeChunks(index, &file, select, &done, &buffer);
  if (!error.empty()) return error;
  Take(index, buffer, select, out);
  return {};
}

}  // namespace

std::string ReadCudaWindow(const CudaChunkIndex& index, const TimeWindow& window, uint64_t process_end_ns,
                           CudaData* out) {
  return Read(index, {.window = &window, .process_end_ns = process_end_ns}, out);
}

std::string ReadCudaPartners(const CudaChunkIndex& index, const std::vector<uint64_t>& call_ids,
                             const std::vector<uint64_t>& gpu_ids, CudaData* out) {
  const IdSet calls(call_ids), gpu(gpu_ids);
  return Read(index, {.call_ids = &calls, .gpu_ids = &gpu}, out);
}

std::string ReadCudaWindowAndPartners(const CudaChunkIndex& index, const TimeWindow& window, uint64_t process_end_ns,
                                      CudaData* records, CudaData* partners, bool* partners_extra) {
  *records = CudaData{};
  *partners = CudaData{};
  if (partners_extra != nullptr) *partners_extra = false;
  IndexedBytes file(index);
  if (!file.error().empty()) return file.error();
  BufferSink buffer(index.kernel_configs);
  std::vector<bool> done(index.chunks.size(), false);
  const Selection in_window{.window = &window, .process_end_ns = process_end_ns};
  std::string error = DecodeChunks(index, &file, in_window, &done, &buffer);
  if (!error.empty()) return error;
  Take(index, buffer, in_window, records);
  std::vector<uint64_t> call_ids, gpu_ids;  // the calls of its GPU records, the GPU records of its calls
  for (const GpuKernel& k : records->kernels) call_ids.push_back(k.correlation);
  for (const GpuMemcpy& m : records->memcpys) call_ids.push_back(m.correlation);
  for (const GpuMemset& m : records->memsets) call_ids.push_back(m.correlation);
  for (const CudaCall& c : records->calls) gpu_ids.push_back(c.correlation);
  const IdSet call_set(std::move(call_ids)), gpu_set(std::move(gpu_ids));
  // The chunks already decoded hold most of them (ids count up with time); the others are read now.
  const Selection by_id{.call_ids = &call_set, .gpu_ids = &gpu_set};
  error = DecodeChunks(index, &file, by_id, &done, &buffer);
  if (!error.empty()) return error;
  if (partners_extra == nullptr) {
    Take(index, buffer, by_id, partners);
    return {};
  }
  // Only the partners the window's records are not: most of them are. A look-up made over the
  // records, then these, equals one over all the partners unless an id is in both parts (a
  // correlation id reused, or a graph's kernels on both sides of the window's edge: which one
  // comes first would then depend on the order); then every partner is taken.
  Take(index, buffer, by_id, partners, &in_window);
  bool both = false;
  for (const CudaCall& c : partners->calls) both = both || gpu_set.Has(c.correlation);
  for (const GpuKernel& k : partners->kernels) both = both || call_set.Has(k.correlation);
  for (const GpuMemcpy& m : partners->memcpys) both = both || call_set.Has(m.correlation);
  for (const GpuMemset& m : partners->memsets) both = both || call_set.Has(m.correlation);
  if (both) {
    Take(index, buffer, by_id, partners);
  } else {
    *partners_extra = true;
  }
  return {};
}

std::pair<size_t, size_t> CudaChunkIndex::Bounds::Meeting(uint64_t lo, uint64_t hi) const {
  // A chunk before `first` has every span's hi below lo; one from `last` on its lo above hi.
  const auto below = std::partition_point(reach.begin(), reach.end(), [&](uint64_t r) { return r < lo; });
  const auto before = std::partition_point(floor.begin(), floor.end(), [&](uint64_t f) { return f <= hi; });
  const size_t first = below - reach.begin(), last = before - floor.begin();
  return {first, std::max(first, last)};
}

void CudaChunkIndex::Seal() {
  time = MakeBounds(chunks, [](const Chunk& c) { return c.span.lo; }, [](const Chunk& c) { return c.span.hi; });
  call_ids = MakeBounds(chunks, [](const Chunk& c) { return c.span.call_ids_lo; },
                        [](const Chunk& c) { return c.span.call_ids_hi; });
  gpu_ids = MakeBounds(chunks, [](const Chunk& c) { return c.span.gpu_ids_lo; },
                       [](const Chunk& c) { return c.span.gpu_ids_hi; });
}

bool EveryCudaImageIndexed(const Trace& trace) {
  for (const Process& p : trace.processes) {
    for (const TraceImage& img : p.images) {
      if (img.cuda.any() && img.cuda_index == nullptr) return false;
    }
  }
  return true;
}

CudaWindowReader ChunkIndexWindowReader() {
  return [](const TraceImage& image, const TimeWindow& window, uint64_t process_end_ns, CudaData* records,
            CudaData* partners, bool* partners_extra, std::string* error) {
    if (image.cuda_index == nullptr) return false;
    *error = partners == nullptr ? ReadCudaWindow(*image.cuda_index, window, process_end_ns, records)
                                 : ReadCudaWindowAndPartners(*image.cuda_index, window, process_end_ns, records,
                                                             partners, partners_extra);
    return error->empty();
  };
}

CudaStartCounter ChunkIndexStartCounter() {
  return [](const TraceImage& image, std::vector<StartCount>* out) {
    if (image.cuda_index == nullptr) return false;
    for (const CudaChunkIndex::Chunk& c : image.cuda_index->chunks) {
      out->push_back({c.span.lo, c.span.count, std::max<uint64_t>(c.span.hi, 1)});
    }
    for (const SeqCall& c : image.cuda_index->unreturned) out->push_back({c.call.begin_ns, 1});
    return true;
  };
}

}  // namespace trainprof::collector
