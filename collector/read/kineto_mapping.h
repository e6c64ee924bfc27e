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

class KinetoMapper {
 public:
  /// `problem(what)`: one event that could not be mapped (said once per kind of problem by the caller).
  KinetoMapper(TraceImage* image, StringPool* strings, KeepNvtx keep, std::function<void(const std::string&)> problem);

  void Event(const KinetoEvent& e);
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
  uint32_t HostThread(int64_t pid, int64_t tid);
  uint32_t GpuTrack(uint32_t device, uint32_t stream);
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
};

}  // namespace trainprof::collector
