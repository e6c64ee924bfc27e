// The trace reader's decoder of one trainprof file (internal to collector/read): the class whose
// stages the files beside it implement, in the order a read runs them:
//   decode_header.cc   the header (identity, clocks, flags), its clock checks, the metadata block;
//   decode_chunks.cc   the chunk slots: found, ordered per thread, decoded, indexed for CUDA windows;
//   decode_records.cc  one chunk's records: the dispatcher and a decoder per record family;
//   decode_resolve.cc  the file's ids → the string pool once every definition is seen; stacks.
// trace_reader.cc drives it (DecodedTrace). docs/trace-format.md is the format it reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <bit>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collector/base/kernel_names.h"
#include "collector/read/byte_source.h"
#include "collector/read/cuda_chunk_index.h"
#include "collector/read/cuda_records.h"
#include "collector/read/nvtx_matcher.h"
#include "collector/read/torch_op_ranges.h"
#include "collector/read/trace_reader.h"
#include "collector/read/tsc_convert.h"
#include "trainprof/records.h"

namespace trainprof::collector::decode {

using format::ChunkHeader;
using format::FileHeader;
using format::RecordTag;

static_assert(std::endian::native == std::endian::little,
              "the trace format is little-endian; the reader loads fields directly");

// Sanity bounds for header fields. The writer uses 16 KiB and 64 KiB; anything past these is a
// damaged header, and trusting it would make the slot arithmetic meaningless.
constexpr uint64_t kMaxHeaderRegion = 64ull << 20;
constexpr uint64_t kMaxChunkSize = 1ull << 30;
constexpr size_t kMaxErrorsPerFile = 32;  // further problems are only counted
// A header clock value at or past 2^62 ns (146 years of CLOCK_MONOTONIC uptime; CLOCK_REALTIME in
// the year 2116) is not one a writer took: a damaged header (0xFF bytes, random ones).
constexpr uint64_t kMaxClockNs = 1ull << 62;
// The header's end and the PROCESS_END record are read together at exit (inject/runtime.cc
// RecordEnd); farther apart than this, one of them is damaged (the record, decoded, is trusted).
constexpr uint64_t kMaxEndSkewNs = 1'000'000'000;

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// 16 bytes as 32 lowercase hex digits; "" when all zero (unknown).
std::string HexId(const uint8_t* p);

/// " (at byte N)", for a message about a header field.
inline std::string AtByte(size_t offset) { return " (at byte " + std::to_string(offset) + ")"; }

// One chunk slot as the reader found it: where it is, whose it is, and its committed records.
struct ChunkDesc {
  uint64_t slot = 0, offset = 0;  // slot number, file offset
  uint32_t tid = 0, thread_index = 0, seq = 0;
  uint64_t base_ns = 0;   // the dt chain's base, on the file's recording clock (ns or TSC ticks)
  uint64_t gpu_base_ns = 0;  // GPU activity's zs/ze base, CLOCK_MONOTONIC ns (TSC files: sync_ns)
  TscPair sync, last;     // TSC files: the chunk's calibration pairs (ticks 0: none)
  uint64_t data_begin = 0, data_end = 0;  // the committed records' bytes in the file
  bool cut = false;  // data_end was clamped (end of file, or committed beyond the chunk)
};

// The STRING definitions of one image: raw id → bytes. Ids are dense from 1 in files the writer
// wrote, so ids below a bound that grows with the file (4 bytes a slot, at most the file's size)
// take a vector slot; others (forged, damaged) a hash-map entry. The bytes live in one arena: a
// million names cost their bytes and ~16 bytes each, not a std::string and a map node each.
class DefinedStrings {
 public:
  explicit DefinedStrings(uint64_t file_bytes) : dense_limit_(std::max<uint64_t>(uint64_t{1} << 16, file_bytes / 4)) {}
  /// Index of raw's definition, or UINT32_MAX.
  uint32_t Find(uint64_t raw) const {
    if (raw < dense_limit_) return raw < dense_.size() && dense_[raw] != 0 ? dense_[raw] - 1 : UINT32_MAX;
    auto it = sparse_.find(raw);
    return it == sparse_.end() ? UINT32_MAX : it->second;
  }
  bool contains(uint64_t raw) const { return Find(raw) != UINT32_MAX; }
  void Add(uint64_t raw, std::string_view bytes) {
    const auto index = static_cast<uint32_t>(spans_.size());
    if (raw < dense_limit_) {
      if (dense_.size() <= raw) dense_.resize(std::max<uint64_t>(raw + 1, dense_.size() * 2), 0);
      dense_[raw] = index + 1;
    } else {
      sparse_.emplace(raw, index);
    }
    spans_.push_back({arena_.size(), bytes.size()});
    arena_.append(bytes);
  }
  size_t size() const { return spans_.size(); }
  std::string_view bytes(uint32_t index) const {
    return std::string_view(arena_).substr(spans_[index].first, spans_[index].second);
  }

 private:
  uint64_t dense_limit_;
  std::vector<uint32_t> dense_;  // raw → index + 1 (0: not defined)
  std::unordered_map<uint64_t, uint32_t> sparse_;
  std::vector<std::pair<uint64_t, uint64_t>> spans_;  // offset, length in arena_
  std::string arena_;
};

class Decoder {
 public:
  Decoder(ByteSource* src, FileStatus* status, TraceImage* image, const ReadOptions& options)
      : src_(src),
        size_(src->size()),
        st_(*status),
        img_(*image),
        keep_(options.keep == KeepNvtx::kStreamed ? KeepNvtx::kPhases : options.keep),
        nvtx_sink_(options.nvtx_sink),
        nvtx_names_(options.nvtx_names),
        cuda_(&image->cuda, [this](uint64_t raw) { return StringRef(raw); }, options.cuda_sink,
              options.keep_cuda == KeepCuda::kAll, options.keep_cuda == KeepCuda::kStackedCalls,
              options.cuda_digest ? &image->cuda_digest : nullptr),
        defined_strings_(size_),
        small_ids_(std::max<uint64_t>(kSmallIds, size_ / 4)),
        max_undefined_refs_(std::max<uint64_t>(kMinUndefinedRefs, size_ / 64)) {
    image->nvtx_complete = keep_ == KeepNvtx::kAll;
    cuda_.NoteNcclEnds(&image->nccl_kernel_ends, [this](uint32_t ref) {
      if (ref >= string_ref_raw_.size()) return 0;
      const uint32_t def = defined_strings_.Find(string_ref_raw_[ref]);
      if (def == UINT32_MAX) return 2;  // defined in a chunk not decoded yet: told at Resolve
      return IsNcclKernel(defined_strings_.bytes(def)) ? 1 : 0;
    });
    if (options.cuda_index) {
      index_ = std::make_unique<CudaChunkIndex>();
      cuda_.Track(&chunk_span_, &unreturned_, &index_->kernel_configs);
    }
  }
  /// The CUDA chunk index (null: not asked for, or none could be made), with the file's identity
  /// still to be filled; called once, after Resolve.
  std::unique_ptr<CudaChunkIndex> TakeCudaIndex() { return std::move(index_); }

  bool ReadHeader();
  /// The header's clock values a writer cannot have taken (damage): said, and left unknown.
  void CheckHeaderClocks();
  /// Once the records are read: a start after the first record, an end before the start or away
  /// from the PROCESS_END record (damage): said, and taken from the records.
  void CheckClocksAgainstRecords();
  /// Which clock the timed records are on (tsc_), from the header's flag bit 4 and, where it
  /// disagrees with them, the TSC fields: said as header damage.
  void DecideClock(const std::vector<ChunkDesc>& chunks);
  /// The file's (TSC, CLOCK_MONOTONIC) pairs: the header's start pair (when start_tsc and the
  /// start are known) and the chunks' sync and last pairs; a chunk's pair with ticks before its
  /// base_ns (the thread's earlier record) is no TSC reading: counted in *before_base, left out.
  std::vector<TscPair> CalibrationPairs(const std::vector<ChunkDesc>& chunks, size_t* before_base) const;
  void ReadMetadata();
  void ReadChunks();
  /// Ends decoding: the source is not used afterwards.
  void EndOfData();
  /// Maps the file's ids into `pool` (which it interns into).
  void Resolve(StringPool* pool);
  /// The stacks' refs to pool ids, stacks sorted by id, uses of ids no STACK defines said.
  void ResolveStacks(const std::vector<StringId>& string_pool, const std::vector<StringId>& domain_pool);
  uint64_t skipped() const { return skipped_; }

 private:
  /// A problem of `kind` (a file entry of model/losses.def), `n` of them, said as `what`.
  void Error(Loss kind, std::string what, uint64_t n = 1) {
    st_.losses[kind] += n;
    if (st_.errors.size() < kMaxErrorsPerFile) {
      st_.errors.push_back(std::move(what));
    } else {
      ++errors_dropped_;
    }
  }
  static std::string Num(uint64_t v) { return std::to_string(v); }

  /// The ref of string id `raw` (0 for 0), made at its first use. Inline: a known small id.
  [[gnu::always_inline]] uint32_t StringRef(uint64_t raw) {
    if (raw == 0) return 0;
    return raw < small_string_ref_.size() && small_string_ref_[raw] != 0 ? small_string_ref_[raw] : StringRefSlow(raw);
  }
  uint32_t StringRefSlow(uint64_t raw);
  /// The ref of domain id `raw` (0 for 0), made at its first use. Inline: a known small id.
  [[gnu::always_inline]] uint32_t DomainRef(uint64_t raw) {
    if (raw == 0) return 0;
    return raw < small_domain_ref_.size() && small_domain_ref_[raw] != 0 ? small_domain_ref_[raw] : DomainRefSlow(raw);
  }
  uint32_t DomainRefSlow(uint64_t raw);
  uint32_t ThreadFor(const ChunkDesc& c);
  /// The CUDA chunk index around a chunk's decode: its start state noted (returns where it begins
  /// in index_->open), then kept with the chunk's span if the chunk completed a CUDA record.
  size_t IndexChunkStart();
  void IndexChunkEnd(const ChunkDesc& c, uint32_t thread, size_t open_before);
  // One chunk's records (decode_records.cc): DecodeChunk sets up a ChunkCursor, DecodeRecords
  // dispatches each record to its family's decoder. Those taking the cursor are inlined into the
  // loop, so that its fields stay in registers (the cursor never escapes). `kSink`: an NvtxSink is set (the exporters'
  // second read); the report's decode has none of its bookkeeping.
  struct ChunkCursor;
  /// A record read by the generic path: its layout, dt, fields in schema order, and the bytes of
  /// its S field.
  struct Record {
    const format::RecordInfo* layout = nullptr;
    bool timed = false;
    uint64_t dt = 0;
    uint64_t f[format::kMaxRecordFields] = {};
    std::string_view bytes;
  };
  template <bool kSink>
  void DecodeChunk(const ChunkDesc& c, uint32_t thread);
  template <bool kSink>
  void DecodeRecords(ChunkCursor& cur);
  void Advance(ChunkCursor& cur, uint64_t delta);
  /// Damage from `rec` on: the rest of the chunk is skipped, and with it maybe the exits of the
  /// thread's open CUDA calls (they are then not calls the process ended inside).
  void LoseRest(const uint8_t* rec, const uint8_t* end, uint32_t thread);
  /// The sink's pending event (if any) handed over, its names mapped through nvtx_names_.
  void HandOver(ChunkCursor& cur);
  /// The report's fast path of the five NVTX records; false: not taken (cur.p unchanged), the
  /// generic path reads the record and says what is wrong with it.
  bool FastNvtx(ChunkCursor& cur, uint8_t tag);
  /// The record after `tag` into *out, its time advanced; false where the chunk's decode ends
  /// here (damage said, or a record cut where the data was cut).
  bool ReadRecord(ChunkCursor& cur, const uint8_t* rec, uint8_t tag, Record* out);
  /// Push, pop, mark, start, end into the matcher (ops-domain pushes and pops to the operators)
  /// and *e; true where the event went to the sink.
  template <bool kSink>
  bool DecodeNvtx(ChunkCursor& cur, RecordTag tag, const uint64_t* f, NvtxEvent* e);
  /// STRING, DOMAIN, THREAD_NAME, ROLE, PROCESS_ENV (CATEGORY_NAME, DOMAIN_DESTROY skipped).
  void DecodeDefinition(RecordTag tag, const uint64_t* f, std::string_view bytes);
  /// PROCESS_END, FORK, EXEC, CHILD_EXIT, MISUSE into img_.process_events.
  void DecodeProcessEvent(RecordTag tag, const uint64_t* f, uint64_t now, uint32_t thread);
  /// STACK, EVENT_STACK, MODULE, SAMPLE, SAMPLE_THREAD_LOST, SAMPLE_PAUSED into img_.stacks.
  template <bool kSink>
  void DecodeStackRecord(ChunkCursor& cur, RecordTag tag, const uint64_t* f, std::string_view bytes,
                         const uint8_t* rec);
  bool KeepEvent(uint32_t domain_ref);
  /// Whether a domain is format::kTorchOpsDomain (its ranges are operators, not NVTX ranges).
  bool IsOpsDomain(uint32_t domain_ref);
  /// Whether domain `domain_ref`'s name is one of the string ids `names`: 0 not known yet, 1 no,
  /// 2 yes; cached in `known` (by domain ref).
  uint8_t DomainIs(uint32_t domain_ref, const std::unordered_set<uint64_t>& names, std::vector<uint8_t>* known);
  /// A STACK record's frames (docs/trace-format.md, "Stacks") into img_.stacks; damage said.
  void AddStack(uint64_t id, std::string_view bytes, uint64_t at);

  ByteSource* src_;
  uint64_t size_;
  FileStatus& st_;
  TraceImage& img_;
  KeepNvtx keep_;
  NvtxSink* nvtx_sink_;
  const TraceImage* nvtx_names_;
  NvtxMatcher matcher_;
  TorchOpRanges ops_;
  CudaRecordDecoder cuda_;
  uint64_t skipped_ = 0;
  size_t errors_dropped_ = 0;
  uint32_t header_region_ = 0, chunk_size_ = 0;        // from the header
  uint32_t metadata_offset_ = 0, metadata_size_ = 0;
  bool metadata_cut_ = false, shrank_ = false;

  // Raw ids of the file are image-local. While decoding, events hold dense "refs" to them; Resolve()
  // maps refs to pool ids once every definition (possibly in a later chunk) has been seen.
  std::vector<uint64_t> string_ref_raw_{0};
  std::unordered_map<uint64_t, uint32_t> string_ref_of_;
  std::vector<uint32_t> small_string_ref_;  // raw id < kSmallIds → ref (0 = none yet)
  std::vector<uint64_t> domain_ref_raw_{0};
  std::unordered_map<uint64_t, uint32_t> domain_ref_of_;   // raw ids >= kMaxDomainIds
  std::vector<uint32_t> small_domain_ref_;                 // raw id < kMaxDomainIds → ref (0 = none yet)
  DefinedStrings defined_strings_;                          // interned into the pool by Resolve
  // Raw ids below small_ids_ map to refs through small_string_ref_ (4 bytes a slot, at most the
  // file's size in all); others through string_ref_of_.
  uint64_t small_ids_;
  // A forged file can name a new undefined string id in every record: each would cost a ref, a
  // range row and a pool name. Past max_undefined_refs_ ids used before any definition (the
  // writer defines every id before its first use; see Resolve for threads decoded out of order),
  // further ones share one ref, named "<undefined strings>", and count as damage.
  uint64_t max_undefined_refs_;
  uint64_t undefined_refs_ = 0;      // refs made for ids not defined when first used
  uint32_t overflow_ref_ = 0;        // the shared ref (0: none yet)
  uint64_t overflow_uses_ = 0;       // uses mapped to it
  static constexpr uint64_t kMinUndefinedRefs = 1 << 16;
  std::unordered_set<uint64_t> phase_strings_;              // raw ids of strings == kPhaseDomain
  std::vector<uint8_t> domain_is_phase_;                    // by domain ref: 0 unknown, 1 no, 2 yes
  std::unordered_set<uint64_t> ops_strings_;                // raw ids of strings == kTorchOpsDomain
  std::vector<uint8_t> domain_is_ops_;                      // by domain ref: 0 unknown, 1 no, 2 yes
  std::unordered_map<uint64_t, uint64_t> domain_names_;     // raw domain id → raw string id
  std::unordered_map<uint32_t, uint32_t> thread_names_;     // tid → string ref
  std::unordered_map<uint32_t, uint32_t> thread_of_index_;  // ChunkHeader::thread_index → dense
  uint32_t role_ref_ = 0;
  std::vector<uint32_t> env_refs_;  // kProcessEnv "NAME=value" string refs, in decoding order
  std::unordered_set<uint64_t> stack_ids_;  // STACK ids defined (the first definition is kept)
  static constexpr uint64_t kSmallIds = 1 << 16;
  // The TSC recording clock (kFlagTscClock): ticks → ns, from the header's and chunks' pairs.
  bool tsc_ = false;
  uint32_t tsc_khz_ = 0;
  uint64_t start_tsc_ = 0;
  std::shared_ptr<TscConverter> tsc_to_ns_;
  // ReadOptions::cuda_index: filled as the chunks are decoded; null once an index would not be
  // exact or small (read/cuda_chunk_index.h).
  std::unique_ptr<CudaChunkIndex> index_;
  CudaSpan chunk_span_;        // the CUDA span of the chunk being decoded
  uint64_t enters_before_ = 0;  // CUDA_API_ENTER records met before it
  std::vector<SeqCall> unreturned_;
  bool start_unknown_ = false;  // start_monotonic_ns damaged: the start is the first record's time
};

}  // namespace trainprof::collector::decode
