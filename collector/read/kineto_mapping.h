// KinetoEvents → one TraceImage: the mapping of torch.profiler's categories onto trainprof's
// model (docs/kineto.md, "Reading", has the table of every field read and what is left out).
//
//   cuda_runtime / cuda_driver           → CudaData::calls
//   kernel, gpu_memcpy, gpu_memset,      → CudaData::kernels, memcpys, memsets, syncs (device: args.device,
//   cuda_sync                              else the GPU track's pid; stream: args.stream, else its tid)
//   ac2g flows (s/f)                     → correlation ids where args.correlation is missing
//   user_annotation                      → NVTX push/pop ranges of the thread (default domain), or phase ranges
//                                          (domain "trainprof") for torch.profiler's DataLoader, optimizer and
//                                          ProfilerStep#N names (KinetoPhase)
//   gpu_user_annotation                  → NVTX ranges of a GPU stream's track, domain "gpu_user_annotation"
//   cpu_op / python_function             → TraceImage::host_ops (kOperator / kPythonFunction)
//   process_name / thread_name (ph M)    → executable, thread names
//   deviceProperties, distributedInfo,   → CudaData::devices, env RANK / WORLD_SIZE / LOCAL_RANK,
//   baseTimeNanoseconds                    start_realtime_ns
// Times: ts and dur in µs → ns exactly (kineto_sax.h). Strings go into a StringPool of the file's
// own; the reader maps them into the report's pool afterwards.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collector/model/model.h"
#include "collector/read/kineto_event.h"
#include "collector/read/kineto_sax.h"
#include "collector/read/nvtx_matcher.h"
#include "collector/read/trace_reader.h"
#include "trainprof/phases.h"

namespace trainprof::collector {

/// The phase (format/trainprof/phases.h) a torch.profiler range name stands for: 
/// "enumerate(DataLoader)#<Iter>.__next__" kDataWait, "Optimizer.step#<Class>.step" kOptimizerStep,
/// "Optimizer.zero_grad#<Class>.zero_grad" kZeroGrad, "ProfilerStep#<N>" kProfilerStep; else kNone.
format::Phase KinetoPhase(std::string_view name);

/// The domain of gpu_user_annotation ranges.
inline constexpr const char* kGpuAnnotationDomain = "gpu_user_annotation";

/// "<host>" of tensorboard_trace_handler's file name "<host>_<pid>.<ms>.pt.trace.json[.gz]" (the
/// directories before it ignored); "" for another name.
std::string HostFromKinetoFileName(std::string_view path);

/// The bytes a Kineto file of `file_bytes` (as stored: compressed for gzip) may make the reader
/// hold: kKinetoHeldPerFileByte per byte, at least kKinetoHeldFloorBytes. torch.profiler's traces
/// hold 2 to 3 bytes per byte of gzip (under 0.2 per byte of JSON): a file that claims more events
/// than that (a gzip bomb of 20M identical events is 5 MB) is read up to the bound and said.
inline constexpr uint64_t kKinetoHeldPerFileByte = 16;
inline constexpr uint64_t kKinetoHeldFloorBytes = 8 << 20;
uint64_t KinetoHeldLimit(uint64_t file_bytes);

class KinetoMapper {
 public:
  /// `problem(what)`: one event that could not be mapped (said once per kind of problem by the caller).
  /// `held_limit`: the bytes of events, threads, names and flows the mapper may hold (KinetoHeldLimit).
  KinetoMapper(TraceImage* image, StringPool* strings, KeepNvtx keep, std::function<void(const std::string&)> problem,
               uint64_t held_limit = UINT64_MAX);

  /// Maps one event. False once the event would take the held bytes past the limit: it and any
  /// later event are not mapped (the caller stops reading and says so with LimitMessage).
  bool Event(const KinetoEvent& e);
  /// Why Event returned false, naming the first event not read.
  std::string LimitMessage() const;
  uint64_t held_bytes() const { return held_; }
  /// Completes the image from the header and the file's name; nothing is added afterwards.
  void Finish(const KinetoHeader& header, const std::string& path);

  uint64_t mapped() const { return mapped_; }  ///< events that became part of the image

 private:
  struct Span {
    uint64_t begin_ns, end_ns;
    StringId name, domain;
    uint32_t category;
  };
  struct Flow {
    int64_t pid, tid;
    uint64_t ts_ns, id;
  };
  // UINT32_MAX past kMaxThreadsPerImage or the held limit.
  uint32_t HostThread(int64_t pid, int64_t tid);
  uint32_t GpuTrack(uint32_t device, uint32_t stream);
  bool Hold(uint64_t bytes);           // false (and nothing held) past the limit
  bool HoldName(std::string_view s);   // a string Intern will keep, if new
  bool Ranges(const KinetoEvent& e, bool gpu, int64_t pid, int64_t tid, uint32_t* device, uint32_t* stream);
  bool Times(const KinetoEvent& e, uint64_t* begin, uint64_t* end);
  void Bad(const KinetoEvent& e, const std::string& what);
  void See(uint64_t begin, uint64_t end);
  void EmitRanges();
  void FillCorrelations();

  TraceImage& img_;
  StringPool& strings_;
  KeepNvtx keep_;
  std::function<void(const std::string&)> problem_;
  NvtxMatcher matcher_;
  StringId phase_domain_, gpu_domain_;
  std::map<std::pair<int64_t, int64_t>, uint32_t> host_threads_;  // (pid, tid) → thread index
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> gpu_tracks_;  // (device, stream) → thread index
  std::vector<std::vector<Span>> spans_;                          // by thread index
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
  std::map<int64_t, std::string> process_names_, process_labels_;
  bool have_host_pid_ = false;
  int64_t host_pid_ = 0;
  std::vector<Flow> flow_starts_, flow_ends_;  // ac2g, for activity without args.correlation
  bool missing_correlation_ = false;
  uint64_t first_ns_ = UINT64_MAX, last_ns_ = 0;
  uint64_t mapped_ = 0;
  uint64_t held_ = 0, held_limit_;
  uint64_t refused_at_ = UINT64_MAX;  // index of the first event past the limit
};

}  // namespace trainprof::collector
