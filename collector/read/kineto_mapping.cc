#include "collector/read/kineto_mapping.h"

#include <algorithm>
#include <tuple>

namespace trainprof::collector {

using format::Phase;

Phase KinetoPhase(std::string_view n) {
  auto starts = [&](std::string_view p) { return n.size() > p.size() && n.substr(0, p.size()) == p; };
  auto ends = [&](std::string_view p) { return n.size() >= p.size() && n.substr(n.size() - p.size()) == p; };
  if (starts("ProfilerStep#")) {
    const std::string_view num = n.substr(13);
    if (std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; })) return Phase::kProfilerStep;
    return Phase::kNone;
  }
  if (starts("enumerate(DataLoader)#") && ends(".__next__")) return Phase::kDataWait;
  if (starts("Optimizer.step#")) return Phase::kOptimizerStep;
  if (starts("Optimizer.zero_grad#")) return Phase::kZeroGrad;
  return Phase::kNone;
}

std::string HostFromKinetoFileName(std::string_view path) {
  const size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (std::string_view suffix : {std::string_view(".pt.trace.json.gz"), std::string_view(".pt.trace.json")}) {
    if (base.size() > suffix.size() && base.substr(base.size() - suffix.size()) == suffix) {
      base.remove_suffix(suffix.size());
      // <host>_<pid>.<ms>, or <host>_<pid>.<ms>-<n>: trainprof's export names a second file of the
      // same worker and millisecond so
      const size_t dot = base.rfind('.');
      if (dot == std::string_view::npos) return {};
      std::string_view ms = base.substr(dot + 1);
      if (const size_t dash = ms.find('-'); dash != std::string_view::npos) ms = ms.substr(0, dash);
      const std::string_view host_pid = base.substr(0, dot);
      const size_t us = host_pid.rfind('_');
      if (us == std::string_view::npos || us == 0) return {};
      const std::string_view pid = host_pid.substr(us + 1);
      auto digits = [](std::string_view s) {
        return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
      };
      if (!digits(ms) || !digits(pid)) return {};
      return std::string(host_pid.substr(0, us));
    }
  }
  return {};
}

namespace {

// An integer arg: the value, or `fallback` when absent or not a whole non-negative number.
uint64_t U64(const KinetoValue& v, uint64_t fallback = 0) { return v.number() && v.whole ? v.u : fallback; }

// A number field within 0..max, or one that is not a number (absent, or of a type said elsewhere
// or taken as absent).
bool Fits(const KinetoValue& v, uint64_t max) { return !v.number() || (v.whole && v.u <= max); }

// Where a 32-bit id may be written signed (Kineto writes some tids as negative int32).
bool Fits32(int64_t x) { return x >= INT32_MIN && x <= int64_t{UINT32_MAX}; }
uint32_t U32(const KinetoValue& v, uint32_t fallback = 0) {
  const uint64_t x = U64(v, fallback);
  return x <= UINT32_MAX ? static_cast<uint32_t>(x) : fallback;
}
bool Int(const KinetoValue& v, int64_t* out) {
  if (!v.number() || !v.integral) return false;
  *out = v.i;
  return true;
}

format::MemcpyKind CopyKind(std::string_view dir) {
  using K = format::MemcpyKind;
  static constexpr std::pair<std::string_view, K> kKinds[] = {
      {"HtoD", K::kHtoD}, {"DtoH", K::kDtoH}, {"HtoA", K::kHtoA}, {"AtoH", K::kAtoH}, {"AtoA", K::kAtoA},
      {"AtoD", K::kAtoD}, {"DtoA", K::kDtoA}, {"DtoD", K::kDtoD}, {"HtoH", K::kHtoH}, {"PtoP", K::kPtoP}};
  for (const auto& [name, kind] : kKinds)
    if (dir == name) return kind;
  return K::kUnknown;
}

// Kineto's memory kind strings (memoryKindString in libkineto's CuptiActivity.cpp).
format::MemoryKind MemoryKindOf(std::string_view s) {
  using M = format::MemoryKind;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s == "Pageable") return M::kPageable;
  if (s == "Pinned") return M::kPinned;
  if (s == "Device") return M::kDevice;
  if (s == "Array") return M::kArray;
  if (s == "Managed") return M::kManaged;
  if (s == "Device Static") return M::kDeviceStatic;
  if (s == "Managed Static") return M::kManagedStatic;
  return M::kUnknown;
}

// "Memcpy HtoD (Pageable -> Device)" → kind, source and destination memory.
void ParseCopyName(std::string_view n, GpuMemcpy* c) {
  if (n.substr(0, 7) == "Memcpy ") {
    const std::string_view rest = n.substr(7);
    c->kind = CopyKind(rest.substr(0, rest.find(' ')));
  }
  const size_t open = n.find('('), close = n.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return;
  const std::string_view inside = n.substr(open + 1, close - open - 1);
  const size_t arrow = inside.find("->");
  if (arrow == std::string_view::npos) return;
  c->src_memory = MemoryKindOf(inside.substr(0, arrow));
  c->dst_memory = MemoryKindOf(inside.substr(arrow + 2));
}

// "Memset (Device)" → the memory set.
format::MemoryKind MemsetMemory(std::string_view n) {
  const size_t open = n.find('('), close = n.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return format::MemoryKind::kUnknown;
  return MemoryKindOf(n.substr(open + 1, close - open - 1));
}

// Kineto's synchronisation names (syncTypeString in libkineto's CuptiActivity.cpp).
format::SyncType SyncTypeOf(std::string_view n) {
  using S = format::SyncType;
  if (n == "Event Sync") return S::kEventSynchronize;
  if (n == "Stream Wait Event") return S::kStreamWaitEvent;
  if (n == "Stream Sync") return S::kStreamSynchronize;
  if (n == "Context Sync") return S::kContextSynchronize;
  return S::kUnknown;
}

// A kernel, copy or memset with the fields they share.
template <typename A>
A Activity(uint64_t begin, uint64_t end, uint64_t correlation, uint32_t device, uint32_t context, uint32_t stream) {
  A a;
  a.start_ns = begin;
  a.end_ns = end;
  a.correlation = correlation;
  a.device = device;
  a.context = context;
  a.stream = stream;
  return a;
}

bool Is(const KinetoValue& v, std::string_view s) { return v.type == KinetoValue::Type::kString && v.s == s; }

}  // namespace

uint64_t KinetoHeldLimit(uint64_t file_bytes) {
  const uint64_t scaled = file_bytes > UINT64_MAX / kKinetoHeldPerFileByte ? UINT64_MAX : file_bytes * kKinetoHeldPerFileByte;
  return std::max(scaled, kKinetoHeldFloorBytes);
}

KinetoMapper::KinetoMapper(TraceImage* image, StringPool* strings, KeepNvtx keep,
                           std::function<void(const std::string&)> problem, uint64_t held_limit)
    : img_(*image), strings_(*strings), keep_(keep == KeepNvtx::kStreamed ? KeepNvtx::kAll : keep),
      problem_(std::move(problem)), held_limit_(held_limit) {
  img_.nvtx_complete = keep_ == KeepNvtx::kAll;  // a Kineto file is not read again (read/nvtx_stream.h)
  phase_domain_ = strings_.Intern(format::kPhaseDomain);
  gpu_domain_ = strings_.Intern(kGpuAnnotationDomain);
}

void KinetoMapper::Bad(const KinetoEvent& e, const std::string& what) {
  std::string where = "traceEvents[" + std::to_string(e.index) + "]";
  if (e.cat.type == KinetoValue::Type::kString) where += " (" + e.cat.s + ")";
  problem_(where + ": " + what + ": skipped");
}

// A thread: its ThreadInfo, its span list, its map node (about 64 bytes), a GPU track's name.
constexpr uint64_t kThreadBytes = sizeof(ThreadInfo) + sizeof(std::vector<int>) + 96;

bool KinetoMapper::Hold(uint64_t bytes) {
  if (bytes > held_limit_ - held_) return false;
  held_ += bytes;
  return true;
}

bool KinetoMapper::HoldName(std::string_view s) {
  // A new string in the pool: its bytes, its view and its share of the index.
  return s.empty() || strings_.Find(s) != 0 || Hold(s.size() + 32);
}

std::string KinetoMapper::LimitMessage() const {
  return "more events than a file of this size holds (" + std::to_string(held_limit_ >> 20) +
         " MiB for them, " + std::to_string(kKinetoHeldPerFileByte) +
         " bytes per byte of the file, at least " + std::to_string(kKinetoHeldFloorBytes >> 20) +
         " MiB): traceEvents[" + std::to_string(refused_at_) + "] and after not read";
}

uint32_t KinetoMapper::HostThread(int64_t pid, int64_t tid) {
  if (host_threads_.find({pid, tid}) == host_threads_.end() &&
      (img_.threads.size() >= kMaxThreadsPerImage || !Hold(kThreadBytes))) {
    return UINT32_MAX;
  }
  auto [it, added] = host_threads_.try_emplace({pid, tid}, static_cast<uint32_t>(img_.threads.size()));
  if (added) {
    ThreadInfo t;
    t.tid = static_cast<uint32_t>(tid);  // Kineto writes some tids as negative int32: the same bits
    t.writer_index = it->second;
    img_.threads.push_back(t);
    spans_.emplace_back();
  }
  return it->second;
}

uint32_t KinetoMapper::GpuTrack(uint32_t device, uint32_t stream) {
  if (gpu_tracks_.find({device, stream}) == gpu_tracks_.end() &&
      (img_.threads.size() >= kMaxThreadsPerImage || !Hold(kThreadBytes))) {
    return UINT32_MAX;
  }
  auto [it, added] = gpu_tracks_.try_emplace({device, stream}, static_cast<uint32_t>(img_.threads.size()));
  if (added) {
    ThreadInfo t;
    t.tid = stream;
    t.writer_index = it->second;
    t.name = strings_.Intern("GPU " + std::to_string(device) + " stream " + std::to_string(stream));
    img_.threads.push_back(t);
    spans_.emplace_back();
  }
  return it->second;
}

bool KinetoMapper::Times(const KinetoEvent& e, uint64_t* begin, uint64_t* end) {
  if (e.ts.type == KinetoValue::Type::kAbsent) return Bad(e, "no ts"), false;
  if (!e.ts.number() || !e.ts.ns_ok) return Bad(e, "ts is not a non-negative number of microseconds"), false;
  uint64_t dur = 0;
  if (e.dur.type == KinetoValue::Type::kAbsent) return Bad(e, "no dur"), false;
  if (!e.dur.number() || !e.dur.ns_ok) return Bad(e, "dur is not a non-negative number of microseconds"), false;
  dur = e.dur.ns;
  if (e.ts.ns >= kMaxKinetoNs || dur >= kMaxKinetoNs - e.ts.ns) {
    return Bad(e, "ts + dur is past 2^62 ns (the year 2116): not a time"), false;
  }
  *begin = e.ts.ns;
  *end = e.ts.ns + dur;
  return true;
}

void KinetoMapper::See(uint64_t begin, uint64_t end) {
  first_ns_ = std::min(first_ns_, begin);
  last_ns_ = std::max(last_ns_, end);
  ++mapped_;
}

// The numbers of an X event against the ranges they can have; false (said) when one is out.
bool KinetoMapper::Ranges(const KinetoEvent& e, bool gpu, int64_t pid, int64_t tid, uint32_t* device, uint32_t* stream) {
  auto out = [&](const char* field, const std::string& value, const char* range) {
    Bad(e, std::string(field) + " " + value + " is out of range (" + range + ")");
    return false;
  };
  if (!gpu && (pid < 0 || pid > INT32_MAX)) return out("pid", std::to_string(pid), "a process id, 0..2^31-1");
  if (!Fits32(pid)) return out("pid", std::to_string(pid), "32 bits");
  if (!Fits32(tid)) return out("tid", std::to_string(tid), "32 bits");
  static constexpr struct {
    KinetoValue KinetoEvent::*field;
    const char* name;
    uint64_t max;
    const char* range;
  } kArgs[] = {
      {&KinetoEvent::device, "args.device", UINT32_MAX, "0..2^32-1"},
      {&KinetoEvent::context, "args.context", UINT32_MAX, "0..2^32-1"},
      {&KinetoEvent::correlation, "args.correlation", UINT64_MAX, "0..2^64-1"},
      {&KinetoEvent::bytes, "args.bytes", UINT64_MAX, "0..2^64-1"},
      {&KinetoEvent::cbid, "args.cbid", UINT16_MAX, "a CUPTI callback id, 0..65535"},
      {&KinetoEvent::registers, "args.registers per thread", UINT32_MAX, "0..2^32-1"},
      {&KinetoEvent::shared_memory, "args.shared memory", UINT32_MAX, "0..2^32-1"},
  };
  for (const auto& a : kArgs) {
    if (!Fits(e.*a.field, a.max)) return out(a.name, NumberText(e.*a.field), a.range);
  }
  // A sync's stream may be -1 (Kineto's "none").
  int64_t st = 0;
  const bool no_stream = Is(e.cat, "cuda_sync") && Int(e.stream, &st) && st == -1;
  if (!no_stream && !Fits(e.stream, UINT32_MAX)) return out("args.stream", NumberText(e.stream), "0..2^32-1");
  if (e.dims_bad) return Bad(e, "args.grid or args.block has an element that is not a whole number in 0..2^32-1"), false;
  // The GPU track's pid is the device and its tid the stream (libkineto's GPU rows).
  if (gpu && !e.device.number() && (pid < 0 || pid > int64_t{UINT32_MAX})) {
    return out("pid", std::to_string(pid), "a device id, 0..2^32-1, where args.device is missing");
  }
  if (gpu && !e.stream.number() && (tid < 0 || tid > int64_t{UINT32_MAX})) {
    return out("tid", std::to_string(tid), "a stream id, 0..2^32-1, where args.stream is missing");
  }
  *device = U32(e.device, gpu ? static_cast<uint32_t>(pid) : 0);
  *stream = U32(e.stream, gpu ? static_cast<uint32_t>(tid) : 0);
  return true;
}

bool KinetoMapper::Event(const KinetoEvent& e) {
  if (refused_at_ != UINT64_MAX) return false;
  auto refuse = [&]() {
    refused_at_ = e.index;
    return false;
  };
  if (e.ph.type != KinetoValue::Type::kString) {
    Bad(e, e.ph.type == KinetoValue::Type::kAbsent ? "no ph" : "ph is not a string");
    return true;
  }
  const std::string& ph = e.ph.s;
  if (ph == "M") {
    int64_t pid = 0, tid = 0;
    // A name kept for a (pid, tid): its bytes more than what it replaces, a new entry's node.
    auto keep = [&](std::string* slot, bool added, const std::string& value) {
      const uint64_t bytes = (added ? 96 : 0) + (value.size() > slot->size() ? value.size() - slot->size() : 0);
      if (!Hold(bytes)) return false;
      *slot = value;
      return true;
    };
    auto put = [&](auto& map, const auto& key, const std::string& value) {
      auto it = map.find(key);
      const bool added = it == map.end();
      std::string none;
      if (!keep(added ? &none : &it->second, added, value)) return false;
      if (added) map.emplace(key, value);
      return true;
    };
    if (!Int(e.pid, &pid) || e.arg_name.type != KinetoValue::Type::kString) {
      if (Is(e.name, "process_labels") && Int(e.pid, &pid) && e.labels.type == KinetoValue::Type::kString &&
          !put(process_labels_, pid, e.labels.s)) {
        return refuse();
      }
      return true;  // other metadata ("Spans" tracks, sort indices) is not read
    }
    if (Is(e.name, "process_name") && !put(process_names_, pid, e.arg_name.s)) return refuse();
    if (Is(e.name, "thread_name") && Int(e.tid, &tid) && !put(thread_names_, std::make_pair(pid, tid), e.arg_name.s)) {
      return refuse();
    }
    return true;
  }
  if (ph == "s" || ph == "f") {
    if (!Is(e.cat, "ac2g")) return true;  // fwdbwd and other flows are not read
    int64_t pid = 0, tid = 0;
    if (!Int(e.pid, &pid) || !Int(e.tid, &tid) || !e.ts.number() || !e.ts.ns_ok || U64(e.id) == 0) {
      Bad(e, "an ac2g flow without a numeric pid, tid, ts and id");
      return true;
    }
    if (!Hold(sizeof(Flow))) return refuse();
    (ph == "s" ? flow_starts_ : flow_ends_).push_back({pid, tid, e.ts.ns, U64(e.id)});
    return true;
  }
  if (ph != "X") return true;  // instant, counter and async events are not read
  if (e.cat.type != KinetoValue::Type::kString) {
    // The profiler's own span ("PyTorch Profiler (0)") has a category; an X event without one is
    // not torch.profiler's: not read.
    if (e.cat.type != KinetoValue::Type::kAbsent) Bad(e, "cat is not a string");
    return true;
  }
  const std::string& cat = e.cat.s;
  enum class C { kNone, kOp, kPy, kAnn, kGpuAnn, kRuntime, kDriver, kKernel, kMemcpy, kMemset, kSync, kTrace };
  C c = C::kNone;
  if (cat == "cpu_op") c = C::kOp;
  else if (cat == "python_function") c = C::kPy;
  else if (cat == "user_annotation") c = C::kAnn;
  else if (cat == "gpu_user_annotation") c = C::kGpuAnn;
  else if (cat == "cuda_runtime") c = C::kRuntime;
  else if (cat == "cuda_driver") c = C::kDriver;
  else if (cat == "kernel") c = C::kKernel;
  else if (cat == "gpu_memcpy") c = C::kMemcpy;
  else if (cat == "gpu_memset") c = C::kMemset;
  else if (cat == "cuda_sync") c = C::kSync;
  else if (cat == "Trace") c = C::kTrace;
  if (c == C::kNone) return true;  // other categories (gpu_mem, overhead, ...) are not read
  uint64_t begin = 0, end = 0;
  if (!Times(e, &begin, &end)) return true;
  if (c == C::kTrace) {  // the profiling window: the image's span, nothing else
    first_ns_ = std::min(first_ns_, begin);
    last_ns_ = std::max(last_ns_, end);
    return true;
  }
  if (e.name.type != KinetoValue::Type::kString) {
    Bad(e, e.name.type == KinetoValue::Type::kAbsent ? "no name" : "name is not a string");
    return true;
  }
  int64_t pid = 0, tid = 0;
  if (!Int(e.pid, &pid)) return Bad(e, "pid is not an integer"), true;
  if (!Int(e.tid, &tid)) return Bad(e, "tid is not an integer"), true;
  const std::string& name = e.name.s;
  const bool host = c == C::kOp || c == C::kPy || c == C::kAnn || c == C::kRuntime || c == C::kDriver;
  const bool gpu = c == C::kGpuAnn || c == C::kKernel || c == C::kMemcpy || c == C::kMemset || c == C::kSync;
  uint32_t device = 0, stream = 0;
  if (!Ranges(e, gpu, pid, tid, &device, &stream)) return true;
  // What the event will hold, before anything of it is kept; its thread and name come after.
  constexpr uint64_t kRangeBytes = sizeof(Span) + 2 * sizeof(NvtxEvent);  // the span, its push and pop
  const Phase op_phase = c == C::kOp ? KinetoPhase(name) : Phase::kNone;
  uint64_t bytes = 0;
  switch (c) {
    case C::kOp: bytes = sizeof(HostOp) + (op_phase != Phase::kNone ? kRangeBytes : 0); break;
    case C::kPy: bytes = sizeof(HostOp); break;
    case C::kAnn:
    case C::kGpuAnn: bytes = kRangeBytes; break;
    case C::kRuntime:
    case C::kDriver: bytes = sizeof(CudaCall); break;
    case C::kKernel: bytes = sizeof(GpuKernel) + sizeof(KernelConfig); break;
    case C::kMemcpy: bytes = sizeof(GpuMemcpy); break;
    case C::kMemset: bytes = sizeof(GpuMemset); break;
    default: bytes = sizeof(GpuSync); break;
  }
  const bool named = c != C::kMemcpy && c != C::kMemset && c != C::kSync;
  const uint32_t t = host ? HostThread(pid, tid) : c == C::kGpuAnn ? GpuTrack(device, stream) : 0;
  if (t == UINT32_MAX) {
    if (img_.threads.size() >= kMaxThreadsPerImage) {
      Bad(e, "more than " + std::to_string(kMaxThreadsPerImage) + " threads and GPU streams in one file");
      return true;
    }
    return refuse();
  }
  if (!Hold(bytes)) return refuse();
  if (named && !HoldName(name)) return refuse();
  if (host && !have_host_pid_) {
    have_host_pid_ = true;
    host_pid_ = pid;
  }
  See(begin, end);
  switch (c) {
    case C::kOp:
    case C::kPy: {
      ++img_.threads[t].events;
      HostOp op;
      op.begin_ns = begin;
      op.end_ns = end;
      op.name = strings_.Intern(name);
      op.thread = t;
      op.kind = c == C::kOp ? HostOpKind::kOperator : HostOpKind::kPythonFunction;
      img_.host_ops.push_back(op);
      // PyTorch before 1.11 wrote record_function ranges (ProfilerStep#N, ...) as cpu_op.
      if (op_phase != Phase::kNone) spans_[t].push_back({begin, end, op.name, phase_domain_, static_cast<uint32_t>(op_phase)});
      break;
    }
    case C::kAnn: {
      ++img_.threads[t].events;
      const Phase p = KinetoPhase(name);
      spans_[t].push_back({begin, end, strings_.Intern(name), p == Phase::kNone ? StringId{0} : phase_domain_,
                           static_cast<uint32_t>(p)});
      break;
    }
    case C::kGpuAnn: {
      ++img_.threads[t].events;
      spans_[t].push_back({begin, end, strings_.Intern(name), gpu_domain_, 0});
      break;
    }
    case C::kRuntime:
    case C::kDriver: {
      ++img_.threads[t].events;
      CudaCall call;
      call.begin_ns = begin;
      call.end_ns = end;
      call.correlation = U64(e.correlation);
      call.name = strings_.Intern(name);
      call.thread = t;
      call.cbid = static_cast<uint16_t>(U32(e.cbid));
      call.api = c == C::kRuntime ? format::CudaApi::kRuntime : format::CudaApi::kDriver;
      call.returned = true;
      missing_correlation_ = missing_correlation_ || call.correlation == 0;
      img_.cuda.calls.push_back(call);
      break;
    }
    case C::kKernel:
    case C::kMemcpy:
    case C::kMemset:
    case C::kSync: {
      const uint64_t corr = U64(e.correlation);
      const uint32_t context = U32(e.context);
      missing_correlation_ = missing_correlation_ || corr == 0;
      if (c == C::kKernel) {
        auto k = Activity<GpuKernel>(begin, end, corr, device, context, stream);
        k.name = strings_.Intern(name);
        KernelConfig config;
        for (int i = 0; i < 3; ++i) {
          config.grid[i] = e.grid[i];
          config.block[i] = e.block[i];
        }
        config.registers = U32(e.registers);
        config.static_shared = U32(e.shared_memory);
        k.config = img_.cuda.kernel_configs.Intern(config);
        img_.cuda.kernels.push_back(k);
      } else if (c == C::kMemcpy) {
        auto m = Activity<GpuMemcpy>(begin, end, corr, device, context, stream);
        m.bytes = U64(e.bytes);
        ParseCopyName(name, &m);
        m.async = true;  // Kineto does not say; PyTorch's copies are cudaMemcpyAsync
        img_.cuda.memcpys.push_back(m);
      } else if (c == C::kMemset) {
        auto m = Activity<GpuMemset>(begin, end, corr, device, context, stream);
        m.bytes = U64(e.bytes);
        m.memory = MemsetMemory(name);
        m.async = true;
        img_.cuda.memsets.push_back(m);
      } else {
        GpuSync s;
        s.start_ns = begin;
        s.end_ns = end;
        s.correlation = corr;
        s.context = context;
        int64_t st = -1;
        s.has_stream = Int(e.stream, &st) && st >= 0 && st <= UINT32_MAX;
        s.stream = s.has_stream ? static_cast<uint32_t>(st) : 0;
        s.type = SyncTypeOf(name);
        img_.cuda.syncs.push_back(s);
      }
      break;
    }
    default: break;
  }
  return true;
}

// Each thread's spans as NVTX push/pop events, properly nested: by begin (the longer first when
// two begin together); a span that overhangs the one it starts in is cut at that one's end.
void KinetoMapper::EmitRanges() {
  for (uint32_t t = 0; t < spans_.size(); ++t) {
    std::vector<Span>& spans = spans_[t];
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
      return std::tie(a.begin_ns, b.end_ns) < std::tie(b.begin_ns, a.end_ns);
    });
    std::vector<const Span*> open;
    std::vector<uint64_t> open_end;
    auto emit = [&](NvtxKind kind, uint64_t time, const Span& s) {
      NvtxEvent ev;
      ev.time_ns = time;
      ev.name = kind == NvtxKind::kPush ? s.name : 0;
      ev.domain = s.domain;
      ev.category = kind == NvtxKind::kPush ? s.category : 0;
      ev.thread = t;
      ev.kind_ = static_cast<uint8_t>(kind);
      if (kind == NvtxKind::kPush) {
        matcher_.Push(t, s.domain, s.name, time);
      } else {
        matcher_.Pop(t, s.domain, time);
      }
      ++img_.nvtx_events;
      if (keep_ == KeepNvtx::kAll || s.domain == phase_domain_) img_.nvtx.push_back(ev);
    };
    auto close_until = [&](uint64_t time) {
      while (!open.empty() && open_end.back() <= time) {
        emit(NvtxKind::kPop, open_end.back(), *open.back());
        open.pop_back();
        open_end.pop_back();
      }
    };
    for (const Span& s : spans) {
      close_until(s.begin_ns);
      const uint64_t end = open.empty() ? s.end_ns : std::min(s.end_ns, open_end.back());
      emit(NvtxKind::kPush, s.begin_ns, s);
      open.push_back(&s);
      open_end.push_back(end);
    }
    close_until(UINT64_MAX);
    std::vector<Span>().swap(spans);
  }
}

// ac2g flows give the correlation of calls and GPU activity that have none in their args: the
// flow's start is at the call's ts on its thread, its end at the activity's ts on its GPU track.
void KinetoMapper::FillCorrelations() {
  if (missing_correlation_) {
    std::map<std::tuple<int64_t, int64_t, uint64_t>, uint64_t> starts, ends;
    for (const Flow& f : flow_starts_) starts.emplace(std::make_tuple(f.pid, f.tid, f.ts_ns), f.id);
    for (const Flow& f : flow_ends_) ends.emplace(std::make_tuple(f.pid, f.tid, f.ts_ns), f.id);
    std::vector<std::pair<int64_t, int64_t>> thread_key(img_.threads.size());
    for (const auto& [key, index] : host_threads_) thread_key[index] = key;
    for (CudaCall& call : img_.cuda.calls) {
      if (call.correlation != 0) continue;
      auto it = starts.find({thread_key[call.thread].first, thread_key[call.thread].second, call.begin_ns});
      if (it != starts.end()) call.correlation = it->second;
    }
    auto fill = [&](auto& activities) {
      for (auto& a : activities) {
        if (a.correlation != 0) continue;
        auto it = ends.find({int64_t{a.device}, int64_t{a.stream}, a.start_ns});
        if (it != ends.end()) a.correlation = it->second;
      }
    };
    fill(img_.cuda.kernels);
    fill(img_.cuda.memcpys);
    fill(img_.cuda.memsets);
  }
  std::vector<Flow>().swap(flow_starts_);
  std::vector<Flow>().swap(flow_ends_);
}

void KinetoMapper::Finish(const KinetoHeader& h, const std::string& path) {
  img_.source = ImageSource::kKineto;
  // The process: the pid of its host events; without any, the track labelled "CPU".
  if (!have_host_pid_) {
    for (const auto& [pid, labels] : process_labels_) {
      if (labels == "CPU") {
        host_pid_ = pid;
        have_host_pid_ = true;
        break;
      }
    }
  }
  img_.pid = have_host_pid_ && host_pid_ >= INT32_MIN && host_pid_ <= INT32_MAX ? static_cast<int32_t>(host_pid_) : 0;
  if (auto it = process_names_.find(host_pid_); have_host_pid_ && it != process_names_.end()) {
    img_.executable = it->second;
    img_.argv = {it->second};
  }
  for (const auto& [key, index] : host_threads_) {
    auto it = thread_names_.find(key);
    if (it != thread_names_.end()) img_.threads[index].name = strings_.Intern(it->second);
  }
  img_.host = HostFromKinetoFileName(path);
  if (img_.host.empty()) img_.host = h.host_name;
  if (h.rank) img_.env.emplace_back("RANK", std::to_string(*h.rank));
  if (h.local_rank) img_.env.emplace_back("LOCAL_RANK", std::to_string(*h.local_rank));
  if (h.world_size) img_.env.emplace_back("WORLD_SIZE", std::to_string(*h.world_size));
  for (size_t k = 0; k < h.devices.size(); ++k) {
    const KinetoDevice& d = h.devices[k];
    const std::string entry = "deviceProperties[" + std::to_string(k) + "]";
    GpuDevice g;
    if (!d.id.number() || !Fits(d.id, UINT32_MAX)) {
      problem_(entry + (d.id.number() ? ".id " + NumberText(d.id) + " is not a device id (0..2^32-1)" : ": no numeric id") +
               ": skipped");
      continue;
    }
    g.id = static_cast<uint32_t>(d.id.u);
    if (d.name.type == KinetoValue::Type::kString) g.name = strings_.Intern(d.name.s);
    // The other numbers: out of their range, said and left out (0, as when absent).
    auto field = [&](const KinetoValue& v, const char* name, uint64_t max) {
      if (Fits(v, max)) return U64(v);
      problem_(entry + "." + name + " " + NumberText(v) + " is out of range (0.." + std::to_string(max) + "): left out");
      return uint64_t{0};
    };
    g.cc_major = static_cast<uint32_t>(field(d.compute_major, "computeMajor", UINT32_MAX));
    g.cc_minor = static_cast<uint32_t>(field(d.compute_minor, "computeMinor", UINT32_MAX));
    g.sm_count = static_cast<uint32_t>(field(d.num_sms, "numSms", UINT32_MAX));
    g.global_memory = field(d.total_global_mem, "totalGlobalMem", UINT64_MAX);
    img_.cuda.devices.push_back(g);
  }
  EmitRanges();
  FillCorrelations();
  img_.nvtx_summary = matcher_.Finish();
  auto by_start = [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; };
  std::stable_sort(img_.cuda.calls.begin(), img_.cuda.calls.end(),
                   [](const CudaCall& a, const CudaCall& b) { return a.begin_ns < b.begin_ns; });
  std::stable_sort(img_.cuda.kernels.begin(), img_.cuda.kernels.end(), by_start);
  std::stable_sort(img_.cuda.memcpys.begin(), img_.cuda.memcpys.end(), by_start);
  std::stable_sort(img_.cuda.memsets.begin(), img_.cuda.memsets.end(), by_start);
  std::stable_sort(img_.cuda.syncs.begin(), img_.cuda.syncs.end(), by_start);
  img_.records = mapped_;
  img_.has_timed_records = first_ns_ <= last_ns_;
  if (img_.has_timed_records) {
    img_.first_record_ns = first_ns_;
    img_.last_record_ns = last_ns_;
    img_.start_ns = first_ns_;
    img_.end_ns = last_ns_;
  }
  // Kineto's ts is microseconds since the epoch, or since baseTimeNanoseconds when the file has it
  // (libkineto writes relative times then).
  uint64_t base = h.base_time_ns.value_or(0);
  if (base >= kMaxKinetoNs - std::min(img_.start_ns, kMaxKinetoNs)) {  // each < 2^62 (sax), not their sum
    problem_("baseTimeNanoseconds " + std::to_string(base) + " + the first ts (" + std::to_string(img_.start_ns) +
             " ns) is past 2^62 ns (the year 2116): baseTimeNanoseconds ignored, times read as since the epoch");
    base = 0;
  }
  img_.start_realtime_ns = base + img_.start_ns;
  // GPU tracing was on (Kineto's CUPTI) where the file has GPU activity or CUDA calls.
  if (!img_.cuda.calls.empty() || img_.cuda.any_activity() || !img_.cuda.syncs.empty()) {
    GpuStatusEvent on;
    on.time_ns = img_.start_ns;
    on.state = format::GpuState::kOn;
    on.raw_state = static_cast<uint32_t>(format::GpuState::kOn);
    img_.cuda.status.push_back(on);
    GpuStatusEvent flushed = on;  // the profiler wrote the file: its buffers were flushed
    flushed.time_ns = img_.end_ns;
    flushed.state = format::GpuState::kFlushed;
    flushed.raw_state = static_cast<uint32_t>(format::GpuState::kFlushed);
    img_.cuda.status.push_back(flushed);
  }
}

}  // namespace trainprof::collector
