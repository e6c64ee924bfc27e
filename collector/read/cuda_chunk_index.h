// The windowed CUDA read (docs/performance.md, "The windows made concrete"; issue 17): what a whole
// read of a trainprof trace notes about its chunks so that the CUDA records of one time window can
// be decoded again later from the chunks that hold them, without the image keeping every record.
//
//   pass 1 (ReadOptions::cuda_index)          per chunk that completes a CUDA record:
//     the whole read, as always       ──►      its bytes, time base, thread; the span [lo, hi] of
//                                              the calls that returned in it and of its kernels,
//                                              copies and memsets; the calls open at its start
//                                              (correlation state) and the enters met before it
//                                      ──►     the calls that never returned; the string refs
//   pass k (ReadCudaWindow)                    the chunks whose span meets window k, each decoded
//                                              from its own start state: exactly the calls,
//                                              kernels, copies and memsets a whole read gives
//                                              that the window owns or overlaps (SliceWindow)
//
// A call's enter and exit may lie in different chunks (and, damaged or forged, on different
// threads): the chunk of its exit holds it, and starts from the correlation state the whole read
// had there, so each chunk decodes alone. Damage inside a chunk stops it again at the same byte;
// what it did to the open calls (their exits lost) is in the later chunks' start states.
//
// No index is made (TraceImage::cuda_index stays null) where one would not be small or exact:
// more than kMaxOpenCalls calls open at a chunk's start, or that never returned (each would be in
// every window after its enter), a file whose undefined string ids overflowed (their refs depend
// on the order of use), or a Kineto trace.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/model/cuda_model.h"
#include "collector/model/cuda_window.h"
#include "collector/read/cuda_records.h"

namespace trainprof::collector {

class TscConverter;

struct CudaChunkIndex {
  /// Calls open at one chunk's start past which no index is kept (a forged file: every call of a
  /// thread left open); normal traces have a few (a runtime call and the driver call inside it).
  static constexpr size_t kMaxOpenCalls = 4096;
  /// Open calls kept over all chunks past which no index is kept.
  static constexpr size_t kMaxOpenTotal = size_t{1} << 20;

  struct Chunk {
    uint64_t data_begin = 0, data_end = 0;  ///< the committed bytes the whole read decoded
    uint64_t base = 0;      ///< the dt chain's base, on the file's recording clock
    uint64_t gpu_base = 0;  ///< GPU activity's zs/ze base (CudaRecordDecoder::kLostBase: none)
    uint32_t thread = 0;    ///< the image's thread index
    bool cut = false;       ///< the bytes end early (truncated): a record cut there is no damage
    CudaSpan span;          ///< the times of the records completed in it
    uint64_t enters_before = 0;            ///< CUDA_API_ENTER records met before it
    uint32_t open_begin = 0, open_end = 0;  ///< its start state: open[open_begin, open_end)
  };

  // Where the bytes are, and the file as the whole read found it (a file replaced or grown
  // since is not read again).
  std::string path;
  std::shared_ptr<const std::vector<uint8_t>> bytes;  ///< a read from memory: a copy of them
  uint64_t size = 0, device = 0, inode = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;  ///< the status change time: a rewrite that puts the mtime back still changes it

  uint32_t version = 0;                       ///< FileHeader::version
  std::shared_ptr<const TscConverter> tsc;    ///< the TSC recording clock (null: ns)
  std::vector<Chunk> chunks;                  ///< in the whole read's order
  std::vector<SeqCall> open;                  ///< the chunks' start states
  std::vector<SeqCall> unreturned;            ///< calls that never returned (name: a string ref)
  /// The kernels' launch configurations, interned in the whole read's order: the same indices as
  /// CudaData::kernel_configs when it keeps the records, and there when it does not.
  KernelConfigs kernel_configs;
  // Raw string id → string ref, as the whole read made them; ref → pool id.
  std::vector<uint32_t> small_string_ref;
  std::unordered_map<uint64_t, uint32_t> string_ref_of;
  std::vector<StringId> pool_of_ref;

  /// How far the chunks' spans reach, for a read to skip the chunks that cannot hold a record it
  /// takes without asking each (Seal; a read of every window would otherwise ask every chunk:
  /// O(windows × chunks)). For each of the three spans (time, call ids, GPU ids): `reach[i]`, the
  /// largest hi of chunks [0, i]; `floor[i]`, the smallest lo of chunks [i, n). Both never fall
  /// as i grows, so the chunks that may meet [lo, hi] are a range found by two binary searches.
  struct Bounds {
    std::vector<uint64_t> reach, floor;
    /// The chunks [first, last) outside of which none has a span meeting [lo, hi].
    std::pair<size_t, size_t> Meeting(uint64_t lo, uint64_t hi) const;
  };
  Bounds time, call_ids, gpu_ids;
  /// Makes the bounds from `chunks` (once they are all there).
  void Seal();
};

/// Decodes again the calls, kernels, copies and memsets of `index`'s image that `window` owns or
/// overlaps (calls by CallEnd with `process_end_ns`) into `out` (replaced), each in the order
/// SliceWindow of the whole read's CudaData gives; kernels' launch configurations are indices
/// into `index.kernel_configs`. Counters, definitions, syncs and
/// overheads are not read. Returns "" or what went wrong (the file cannot be read, or is not the
/// one indexed any more); `out` is then incomplete.
std::string ReadCudaWindow(const CudaChunkIndex& index, const TimeWindow& window, uint64_t process_end_ns,
                           CudaData* out);

/// Decodes again every call of `index`'s image whose correlation id is in `call_ids`, and every
/// kernel, copy and memset whose id is in `gpu_ids` (any order, repeats allowed), into `out`
/// (replaced), in the whole read's order: calls by enter time, ties in enter order; GPU records as
/// the file holds them. What a window's records are correlated with (the calls of its GPU records,
/// the GPU records of its calls) wherever in time they lie: the correlation look-ups of one window
/// made without the image's records (CorrelateGpuRecords, EnterByCorrelation and LaunchCallsOf of
/// it give, for those ids, what they give of the whole image). Returns as ReadCudaWindow.
std::string ReadCudaPartners(const CudaChunkIndex& index, const std::vector<uint64_t>& call_ids,
                             const std::vector<uint64_t>& gpu_ids, CudaData* out);

/// ReadCudaWindow and ReadCudaPartners of the window's ids (the ids of its GPU records' calls and
/// of its calls' GPU records) in one pass over the chunks: each chunk decoded at most once. With
/// `partners_extra` (may be null: every partner), `partners` may hold only the partners that
/// `records` does not, and then *partners_extra is true: where no correlation id is in both
/// parts, a look-up made over records, then partners, is the one made over every partner
/// (CudaWindowData::PartnerSources). Returns as ReadCudaWindow.
std::string ReadCudaWindowAndPartners(const CudaChunkIndex& index, const TimeWindow& window, uint64_t process_end_ns,
                                      CudaData* records, CudaData* partners, bool* partners_extra = nullptr);

/// Whether every image of `trace` with CUDA records has a CudaChunkIndex: what the windows need to
/// be read again. A Kineto image never has one (it keeps its records whatever the read options
/// say; sliced window by window, its correlation look-ups would be made over all of it for each
/// window), so a trace with Kineto CUDA records is reported in one window.
bool EveryCudaImageIndexed(const Trace& trace);

/// A CudaWindowReader (model/cuda_window.h) over the images' CudaChunkIndex:
/// ReadCudaWindowAndPartners (ReadCudaWindow without partners) for an image that has one; false
/// for one without, or where the read fails (its error said).
CudaWindowReader ChunkIndexWindowReader();

/// A CudaStartCounter (model/cuda_window.h) over the images' CudaChunkIndex: each indexed chunk's
/// records counted at its span's start, each call that never returned at its enter; false for an
/// image without an index.
CudaStartCounter ChunkIndexStartCounter();

}  // namespace trainprof::collector
