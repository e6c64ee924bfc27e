#include "cupti/cupti_tracer.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "capture.h"
#include "clock.h"
#include "cupti/activity_buffers.h"
#include "cupti/activity_convert.h"
#include "cupti/api_events.h"
#include "cupti/cupti_api.h"
#include "cupti/cuda_backtrace.h"
#include "cupti/cupti_locate.h"
#include "cupti/flush_thread.h"
#include "log.h"
#include "recorder.h"
#include "runtime.h"
#include "stacks/stacks.h"
#include "string_table.h"
#include "trace_file.h"

namespace trainprof::inject::cupti {
namespace {

using format::GpuState;
using format::RecordTag;

// The activity kinds recorded. A kind CUPTI refuses is left out, except kernels, without which
// GPU tracing is not worth having.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_DEVICE,            CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_OVERHEAD,
};

// How long exit waits for the flush thread's current tick.
constexpr unsigned kExitJoinMs = 2000;

// Interned function names, one per callback id: a callback costs one relaxed load for its name.
constexpr uint32_t kCbidTable = 1024;
static_assert(CUPTI_RUNTIME_TRACE_CBID_SIZE <= kCbidTable && CUPTI_DRIVER_TRACE_CBID_SIZE <= kCbidTable,
              "callback ids of a newer CUPTI are interned per call, through the thread's cache");

enum class Phase : int { kNone, kStarting, kOn, kOff };

struct Tracer {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  Phase phase = Phase::kNone;       ///< of this process (reset in a fork child of a kNone parent)
  bool inherited = false;           ///< a fork child of a process that had set CUPTI up
  pid_t pid = 0;                    ///< the process that set CUPTI up
  void* lib = nullptr;
  CuptiApi api;
  CUpti_SubscriberHandle subscriber = nullptr;
  uint32_t cupti_version = 0;
  int driver_version = 0;
  BufferPool pool;
  FlushThread flusher;
  bool multiple_subscribers = false;  ///< subscribed with allowMultipleSubscribers (CUPTI 13.2+)
  bool atexit_registered = false;
  bool flushed_at_exit = false;
  std::atomic<uint32_t> names[2][kCbidTable] = {};  ///< [runtime, driver][cbid] → string id
  std::atomic<uint8_t> wants_stack[2][kCbidTable] = {};  ///< [runtime, driver][cbid]: 0 unknown, 1 yes, 2 no
};

// Never destroyed: CUPTI's threads and the program's exit path may use it until the very end.
alignas(Tracer) unsigned char g_storage[sizeof(Tracer)];
Tracer* g = nullptr;
pthread_once_t g_once = PTHREAD_ONCE_INIT;
void MakeTracer() { g = new (g_storage) Tracer(); }

// Whether the callbacks record: set once CUPTI is fully set up, cleared in a fork child.
std::atomic<bool> g_on{false};

// ---- records ------------------------------------------------------------------------------------

void RecordStatus(ThreadState* t, GpuState state, uint32_t result, const char* message) {
  if (t == nullptr) return;
  uint32_t msg = message != nullptr ? InternBytes(t, message, NameLength(message)) : 0;
  RecordTimed(t, format::rec::GpuStatus{.state = static_cast<uint64_t>(state),
                                        .result = result,
                                        .cupti_version = g->cupti_version,
                                        .driver_version = static_cast<uint64_t>(g->driver_version < 0 ? 0 : g->driver_version),
                                        .message = msg});
}

// CUPTI's count of records it dropped since it was last asked (it resets on each read).
void RecordCuptiDrops(ThreadState* t, CUcontext ctx, uint32_t stream) {
  size_t dropped = 0;
  if (t == nullptr || g->api.ActivityGetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS ||
      dropped == 0) {
    return;
  }
  RecordTimed(t, format::rec::GpuDropped{.count = dropped});
}

// One activity record into this thread's chunk: its name first (a STRING record, if new), then
// the record itself, encoded against the chunk it lands in.
void WriteActivity(ThreadState* t, const CUpti_Activity* rec) {
  uint32_t name = 0;
  if (const char* s = ActivityName(rec)) name = InternBytes(t, s, NameLength(s));
  RecordScope scope(t);  // re-entry cannot happen on CUPTI's threads; the protocol is the same
  if (!scope.entered()) return;
  scope.WriteInChunk(kMaxGpuRecordBytes,
                     [&](uint8_t* p, uint64_t base_ns) { return p + EncodeActivity(rec, base_ns, name, p); });
}

// GPU activity arrives late: with capture ranges, it is kept iff it started inside a capture
// (definitions — devices, contexts — are always kept).
bool ActivityCaptured(const CUpti_Activity* rec) {
  uint64_t start = 0;
  return !ActivityStart(rec, &start) || CapturedAt(start);
}

// ---- CUPTI callbacks ------------------------------------------------------------------------------

// CUPTI's clock for GPU timestamps: CLOCK_MONOTONIC ns on either recording clock (CUPTI expects
// ns; GPU activity is never in TSC ticks, docs/trace-format.md "Time").
uint64_t CUPTIAPI Timestamp() { return NowNs(); }

uint32_t FunctionName(ThreadState* t, const ApiCall& c) {
  if (c.name == nullptr) return 0;
  if (c.cbid >= kCbidTable) return InternCString(t, c.name);
  std::atomic<uint32_t>& slot = g->names[c.api == format::CudaApi::kRuntime ? 0 : 1][c.cbid];
  uint32_t id = slot.load(std::memory_order_relaxed);
  if (__builtin_expect(id == 0, 0)) {
    id = InternCString(t, c.name);  // first call of this function: the string table, once
    slot.store(id, std::memory_order_relaxed);
  }
  return id;
}

// Whether this function's calls take a stack (cuda_backtrace.h), cached per callback id.
bool WantsStack(const ApiCall& c) {
  if (c.cbid >= kCbidTable) return CudaCallWantsStack(c.name);
  std::atomic<uint8_t>& slot = g->wants_stack[c.api == format::CudaApi::kRuntime ? 0 : 1][c.cbid];
  uint8_t v = slot.load(std::memory_order_relaxed);
  if (__builtin_expect(v == 0, 0)) {
    v = CudaCallWantsStack(c.name) ? 1 : 2;
    slot.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}

void CUPTIAPI OnApiCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
  if (!g_on.load(std::memory_order_relaxed)) return;
  const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
  ApiCall c;
  if (!DecodeApiCallback(domain, cbid, data, &c)) return;
  ThreadState* t = CurrentThread();
  if (t == nullptr) return;
  if (!TrackNesting(&t->cuda_runtime_depth, data->correlationData, c)) return;
  if (c.enter) {
    // cudaProfilerStart turns a capture range on before its own enter is gated, and
    // cudaProfilerStop turns it off after its exit, so both calls lie inside the capture.
    const int profiler_api = ProfilerApiOf(c.api, c.cbid);
    if (profiler_api > 0) OnCudaProfilerApi(true);
    if (!CapturingNowLazy()) {
      SkipRecording(data->correlationData, c);
      return;
    }
    RecordTimed(t, ApiEnterRecord(c, FunctionName(t, c)));
    t->cuda_enter_ns = t->prev_ns;  // the enter's time, for the exit's --backtrace=cuda threshold
  } else {
    const uint64_t now = TraceNow();
    if (Backtraces().cuda && now - t->cuda_enter_ns >= TraceUnitsFromNs(Backtraces().cuda_threshold_ns) &&
        WantsStack(c)) {
      RecordTimedWithStackAt(t, ApiExitRecord(c), TakeStack(t), now);
    } else {
      RecordAt(t, ApiExitRecord(c), now);
    }
    if (ProfilerApiOf(c.api, c.cbid) < 0) OnCudaProfilerApi(false);
  }
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many as fit
  *buffer = g->pool.Acquire();
  *size = *buffer != nullptr ? BufferPool::kBufferBytes : 0;
}

void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  // Never called in a fork child: CUPTI's threads are not there, and the child never flushes.
  if (buffer != nullptr) {
    if (ThreadState* t = CurrentThread()) {
      uint64_t skipped = ForEachConverted(
          [&](CUpti_Activity** rec) {
            return valid > 0 && g->api.ActivityGetNextRecord(buffer, valid, rec) == CUPTI_SUCCESS;
          },
          [&](const CUpti_Activity* rec) {
            if (!CaptureConfigured() || ActivityCaptured(rec)) WriteActivity(t, rec);
          });
      // A kind we did not ask for, or one newer than this build: not written, counted as dropped
      // in the trace header.
      if (skipped != 0) CountDropped(skipped);
      RecordCuptiDrops(t, ctx, stream);
    }
  }
  g->pool.Release(buffer);
}

// ---- life cycle -------------------------------------------------------------------------------------

void FlushTick() {
  if (!g_on.load(std::memory_order_relaxed)) return;
  g->api.ActivityFlushAll(0);  // completed buffers only: never waits for the GPU
  RecordCuptiDrops(CurrentThread(), nullptr, 0);
}

void AtExit() {
  if (g == nullptr) return;
  pthread_mutex_lock(&g->mu);
  bool ours = g->phase == Phase::kOn && g->pid == getpid() && !g->flushed_at_exit &&
              g_on.load(std::memory_order_relaxed);
  if (ours) g->flushed_at_exit = true;
  pthread_mutex_unlock(&g->mu);
  if (!ours) return;  // a fork child, or CUDA tracing never started here
  // A tick stuck in CUPTI (another thread holds the driver while this one exits) would hold up
  // the exit, and a forced flush would be stuck the same way: then leave both.
  if (!g->flusher.Stop(kExitJoinMs)) return;
  CUptiResult r = g->api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  ThreadState* t = CurrentThread();
  RecordCuptiDrops(t, nullptr, 0);
  RecordStatus(t, GpuState::kFlushed, r, nullptr);
}

int DriverVersion() {
  // Only a libcuda the process loaded already (RTLD_NOLOAD): we never load the driver ourselves.
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (h == nullptr) return 0;
  int v = 0;
  auto fn = reinterpret_cast<int (*)(int*)>(dlsym(h, "cuDriverGetVersion"));
  if (fn == nullptr || fn(&v) != 0) v = 0;
  dlclose(h);
  return v;
}

// CUDA tracing cannot be used here: GPU_STATUS kUnavailable, and one line on stderr for the
// whole process tree (TRAINPROF_CUDA_QUIET tells exec'd descendants it was said).
void Unavailable(ThreadState* t, uint32_t result, const char* why) {
  g->phase = Phase::kOff;
  RecordStatus(t, GpuState::kUnavailable, result, why);
  Runtime& rt = Rt();
  if (rt.cfg.cuda_quiet) return;
  rt.cfg.cuda_quiet = true;
  char pid[24], cupti[24], driver[24];
  LogLine("CUDA tracing unavailable in pid ", FormatU64(static_cast<unsigned>(getpid()), pid), ": ", why,
          " [CUPTI API version ", g->cupti_version != 0 ? FormatU64(g->cupti_version, cupti) : "unknown",
          ", CUDA driver version ",
          g->driver_version > 0 ? FormatU64(static_cast<unsigned>(g->driver_version), driver) : "unknown",
          "]; everything else is still recorded", nullptr);
}

constexpr int kNumKinds = sizeof(kKinds) / sizeof(kKinds[0]);

// Undoes a partial set-up after a later step failed: activity and callbacks off again.
void TearDown(const bool (&enabled)[kNumKinds]) {
  for (int i = 0; i < kNumKinds; ++i) {
    if (enabled[i]) g->api.ActivityDisable(kKinds[i]);
  }
  g->api.Unsubscribe(g->subscriber);
  g->subscriber = nullptr;
}

void Start() {
  Runtime& rt = Rt();
  // Not a process we record, or --trace without cuda: CUPTI is not even loaded.
  if (rt.inert.load() || !rt.cfg.trace_cuda || rt.file.load(std::memory_order_acquire) == nullptr ||
      !rt.recording.load()) {
    g->phase = Phase::kOff;
    return;
  }
  ThreadState* t = CurrentThread();
  g->driver_version = DriverVersion();
  char why[kPathMax + 512];
  char message[sizeof(why) + 2 * kPathMax];
  static char path[kPathMax];
  g->lib = OpenCupti(rt.cfg.cupti_path, rt.cfg.cuda_home, path, why, sizeof(why));
  if (g->lib == nullptr) {
    snprintf(message, sizeof(message), "cannot load CUPTI: %s", why);
    return Unavailable(t, CUPTI_ERROR_NOT_INITIALIZED, message);
  }
  const char* missing = nullptr;
  if (!ResolveCuptiApi(g->lib, &g->api, &missing)) {
    snprintf(message, sizeof(message), "%s lacks %s (a CUPTI older than CUDA 12?)", path, missing);
    return Unavailable(t, CUPTI_ERROR_NOT_INITIALIZED, message);
  }
  if (g->api.GetVersion(&g->cupti_version) != CUPTI_SUCCESS) g->cupti_version = 0;
  if (!CuptiVersionSupported(g->cupti_version)) {
    snprintf(message, sizeof(message),
             "%s has CUPTI API version %u; this trainprof reads the activity records of CUDA 11.8 up to "
             "CUDA %u.x (CUPTI_API_VERSION %u); point TRAINPROF_CUPTI_PATH at a matching libcupti",
             path, g->cupti_version, CUPTI_API_VERSION >= 10000 ? CUPTI_API_VERSION / 10000 : 12,
             CUPTI_API_VERSION);
    return Unavailable(t, CUPTI_ERROR_NOT_COMPATIBLE, message);
  }

  // One subscriber per process (before CUPTI 13.2, or when the other one does not allow more): if
  // another tool (torch.profiler, Nsight Systems, ...) holds it, CUPTI says
  // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, and cuptiSubscribe_v2 says who.
  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  bool multiple = false;
  CUptiResult r = SubscribeAsTrainprof(g->api, g->cupti_version, &g->subscriber, OnApiCallback, other,
                                       CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN, &multiple);
  if (r != CUPTI_SUCCESS) {
    snprintf(message, sizeof(message), "cuptiSubscribe: %s%s%s%s", ResultName(g->api, r),
             other[0] != '\0' ? " (already subscribed: " : "", other, other[0] != '\0' ? ")" : "");
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && other[0] == '\0') {
      snprintf(message + strlen(message), sizeof(message) - strlen(message),
               " (another CUPTI client, e.g. torch.profiler or Nsight Systems, is active)");
    }
    return Unavailable(t, r, message);
  }
  g->multiple_subscribers = multiple;

  // Our clock first: records of every kind enabled after this carry CLOCK_MONOTONIC times.
  const char* step = "cuptiActivityRegisterTimestampCallback";
  bool enabled[kNumKinds] = {};
  r = g->api.ActivityRegisterTimestampCallback(Timestamp);
  if (r == CUPTI_SUCCESS) {
    step = "cuptiActivityRegisterCallbacks";
    r = g->api.ActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  }
  if (r == CUPTI_SUCCESS) {
    step = "cuptiActivityEnable(CONCURRENT_KERNEL)";
    for (int i = 0; i < kNumKinds; ++i) {
      CUptiResult k = g->api.ActivityEnable(kKinds[i]);
      if (k == CUPTI_SUCCESS) {
        enabled[i] = true;
      } else if (kKinds[i] == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        r = k;
        break;
      }
    }
  }
  if (r == CUPTI_SUCCESS) {
    step = "cuptiEnableDomain";
    r = g->api.EnableDomain(1, g->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    if (r == CUPTI_SUCCESS) r = g->api.EnableDomain(1, g->subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  }
  if (r != CUPTI_SUCCESS) {
    TearDown(enabled);
    snprintf(message, sizeof(message), "%s: %s", step, ResultName(g->api, r));
    return Unavailable(t, r, message);
  }

  g->pid = getpid();
  g->phase = Phase::kOn;
  g_on.store(true, std::memory_order_release);
  // Without the thread GPU activity still arrives when CUPTI's buffers fill and at exit.
  g->flusher.Start(rt.cfg.gpu_flush_ms, FlushTick);
  if (!g->atexit_registered) {
    g->atexit_registered = true;
    atexit(AtExit);  // runs before the handlers registered earlier, e.g. the CUDA runtime's
  }
  // The message names the libcupti used, and whether other subscribers may join.
  snprintf(message, sizeof(message), "%s%s", path, multiple ? " (multiple subscribers allowed)" : "");
  RecordStatus(t, GpuState::kOn, CUPTI_SUCCESS, message);
}

}  // namespace

void StartCudaTracing() {
  pthread_once(&g_once, MakeTracer);
  pthread_mutex_lock(&g->mu);
  if (g->phase == Phase::kNone && !g->inherited) {
    g->phase = Phase::kStarting;
    Start();
  }
  pthread_mutex_unlock(&g->mu);
}

void OnForkChildCuda() {
  g_on.store(false, std::memory_order_relaxed);
  if (g == nullptr) return;
  // The parent's mutex may be held by a thread that does not exist here.
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&g->mu, &fresh, sizeof(fresh));
  if (g->phase != Phase::kNone) g->inherited = true;  // its CUPTI is the parent's: leave it alone
}

}  // namespace trainprof::inject::cupti
