// A stand-in for libcupti, for testing the library's live CUPTI path on machines without a GPU:
// it implements the CUPTI functions the library resolves (inject/cupti/cupti_api.h) the way the
// CUPTI documentation describes them, and exports fake_cupti_* hooks with which a test program
// plays the CUDA driver: API callbacks on the calling thread, activity records handed over in
// buffers the library supplies, drop counts.
//
// Environment: FAKE_CUPTI_VERSION (default 130001), FAKE_CUPTI_SUBSCRIBE_RESULT (a CUptiResult
// cuptiSubscribe returns instead of success). Built twice: libfake_cupti.so, and
// libfake_cupti_v1.so without cuptiSubscribe_v2 (FAKE_CUPTI_NO_V2), as CUPTI before CUDA 12.6.
#include <cupti.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

constexpr size_t kStride = 256;  // each record in a fake buffer starts at a multiple of this

struct State {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  bool subscribed = false;
  bool domains[CUPTI_CB_DOMAIN_SIZE] = {};
  std::vector<int> kinds;  // enabled activity kinds
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  CUpti_TimestampCallbackFunc timestamp = nullptr;
  std::vector<std::vector<uint8_t>> pending;  // activity records not yet handed over
  size_t dropped = 0;
  int flushes = 0;
  int forced_flushes = 0;
  pid_t flush_pid = 0;  // the process of the last flush
  size_t params_size = 0;  // CUpti_SubscriberParams::structSize of the last cuptiSubscribe_v2
  uint8_t params_allow = 0;
};
State g;

uint32_t EnvU32(const char* name, uint32_t dflt) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? static_cast<uint32_t>(strtoul(v, nullptr, 10)) : dflt;
}

}  // namespace

// ---- the CUPTI API ----------------------------------------------------------------------------------

FAKE_API CUptiResult cuptiGetVersion(uint32_t* v) {
  *v = EnvU32("FAKE_CUPTI_VERSION", 130001);
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiGetResultString(CUptiResult r, const char** s) {
  switch (r) {
    case CUPTI_SUCCESS: *s = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *s = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *s = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *s = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    default: *s = "CUPTI_ERROR_UNKNOWN"; break;
  }
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* sub, CUpti_CallbackFunc cb, void* ud) {
  uint32_t forced = EnvU32("FAKE_CUPTI_SUBSCRIBE_RESULT", 0);
  if (forced != 0) return static_cast<CUptiResult>(forced);
  if (g.subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  g.callback = cb;
  g.userdata = ud;
  g.subscribed = true;
  *sub = reinterpret_cast<CUpti_SubscriberHandle>(&g);
  return CUPTI_SUCCESS;
}

#ifndef FAKE_CUPTI_NO_V2
// From CUPTI 13.2 on, allowMultipleSubscribers (a byte after oldSubscriberSize) lets a subscriber
// join one that is already there: FAKE_CUPTI_SUBSCRIBE_RESULT=39 plays that other one.
FAKE_API CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* sub, CUpti_CallbackFunc cb, void* ud,
                                       CUpti_SubscriberParams* p) {
  if (p != nullptr && p->structSize < CUpti_SubscriberParams_STRUCT_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
  const size_t multiple_size = sizeof(CUpti_SubscriberParams) + 1;
  uint32_t version = 0;
  cuptiGetVersion(&version);
  g.params_size = p != nullptr ? p->structSize : 0;
  g.params_allow = 0;
  if (p != nullptr && p->structSize >= multiple_size) {
    if (version < 130200) return CUPTI_ERROR_INVALID_PARAMETER;  // a field this CUPTI does not know
    g.params_allow = reinterpret_cast<const uint8_t*>(p)[sizeof(CUpti_SubscriberParams)];
  }
  if (g.params_allow != 0 && EnvU32("FAKE_CUPTI_SUBSCRIBE_RESULT", 0) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED &&
      !g.subscribed) {
    g.callback = cb;  // the other subscriber allows more: we join
    g.userdata = ud;
    g.subscribed = true;
    *sub = reinterpret_cast<CUpti_SubscriberHandle>(&g);
    return CUPTI_SUCCESS;
  }
  CUptiResult r = cuptiSubscribe(sub, cb, ud);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && p != nullptr && p->oldSubscriberName != nullptr &&
      p->oldSubscriberSize > 0) {
    strncpy(p->oldSubscriberName, "CUPTI for torch.profiler", p->oldSubscriberSize - 1);
    p->oldSubscriberName[p->oldSubscriberSize - 1] = '\0';
  }
  return r;
}
#endif

FAKE_API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle) {
  g.subscribed = false;
  g.callback = nullptr;
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain d) {
  if (d <= 0 || d >= CUPTI_CB_DOMAIN_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
  g.domains[d] = enable != 0;
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  g.kinds.push_back(kind);
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityDisable(CUpti_ActivityKind) { return CUPTI_SUCCESS; }

FAKE_API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                    CUpti_BuffersCallbackCompleteFunc complete) {
  if (request == nullptr || complete == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  g.request = request;
  g.complete = complete;
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
  if (f == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (!g.kinds.empty()) return CUPTI_ERROR_INVALID_OPERATION;  // must come before any kind is enabled
  g.timestamp = f;
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** rec) {
  if (buffer == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  uint8_t* next = *rec == nullptr ? buffer : reinterpret_cast<uint8_t*>(*rec) + kStride;
  if (next + kStride > buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *rec = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  pthread_mutex_lock(&g.mu);
  *dropped = g.dropped;
  g.dropped = 0;
  pthread_mutex_unlock(&g.mu);
  return CUPTI_SUCCESS;
}

// Hands every pending record over, in buffers the client supplies (as many as it takes).
FAKE_API CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  pthread_mutex_lock(&g.mu);
  ++g.flushes;
  if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) ++g.forced_flushes;
  g.flush_pid = getpid();
  std::vector<std::vector<uint8_t>> recs;
  recs.swap(g.pending);
  pthread_mutex_unlock(&g.mu);
  size_t i = 0;
  while (i < recs.size()) {
    uint8_t* buf = nullptr;
    size_t size = 0, max_records = 0;
    g.request(&buf, &size, &max_records);
    if (buf == nullptr) {  // declined: the records are dropped, and counted
      pthread_mutex_lock(&g.mu);
      g.dropped += recs.size() - i;
      pthread_mutex_unlock(&g.mu);
      break;
    }
    size_t valid = 0;
    while (i < recs.size() && valid + kStride <= size) {
      memcpy(buf + valid, recs[i].data(), recs[i].size());
      valid += kStride;
      ++i;
    }
    g.complete(nullptr, 0, buf, size, valid);
  }
  return CUPTI_SUCCESS;
}

// ---- hooks for the test program ----------------------------------------------------------------------

/// Issues one API callback (site: CUPTI_API_ENTER / CUPTI_API_EXIT) on this thread, if subscribed
/// and the domain is enabled. `call_data` is the per-call correlationData; `status` the return value.
FAKE_API int fake_cupti_callback(int domain, uint32_t cbid, const char* name, int site, uint32_t correlation,
                                 uint64_t* call_data, int status) {
  if (!g.subscribed || g.callback == nullptr || domain <= 0 || domain >= CUPTI_CB_DOMAIN_SIZE ||
      !g.domains[domain]) {
    return 0;
  }
  CUpti_CallbackData d;
  memset(&d, 0, sizeof(d));
  d.callbackSite = static_cast<CUpti_ApiCallbackSite>(site);
  d.functionName = name;
  d.correlationId = correlation;
  d.correlationData = call_data;
  d.functionReturnValue = site == CUPTI_API_EXIT ? &status : nullptr;
  g.callback(g.userdata, static_cast<CUpti_CallbackDomain>(domain), cbid, &d);
  return 1;
}

/// Queues an activity record (copied, at most kStride bytes) for the next flush.
FAKE_API void fake_cupti_add_record(const void* rec, size_t size) {
  std::vector<uint8_t> r(kStride, 0);
  memcpy(r.data(), rec, size < kStride ? size : kStride);
  pthread_mutex_lock(&g.mu);
  g.pending.push_back(std::move(r));
  pthread_mutex_unlock(&g.mu);
}

/// Records CUPTI "dropped" since the last query.
FAKE_API void fake_cupti_add_dropped(size_t n) {
  pthread_mutex_lock(&g.mu);
  g.dropped += n;
  pthread_mutex_unlock(&g.mu);
}

/// Now on the client's clock (the registered timestamp callback), 0 if none was registered.
FAKE_API uint64_t fake_cupti_now() { return g.timestamp != nullptr ? g.timestamp() : 0; }

/// What the client did: flushes (all / forced) and in which process the last one ran, whether the
/// activity kind is enabled, whether the API domains are.
FAKE_API void fake_cupti_stats(int* flushes, int* forced, int* flush_pid) {
  pthread_mutex_lock(&g.mu);
  *flushes = g.flushes;
  *forced = g.forced_flushes;
  *flush_pid = g.flush_pid;
  pthread_mutex_unlock(&g.mu);
}

FAKE_API int fake_cupti_kind_enabled(int kind) {
  for (int k : g.kinds) {
    if (k == kind) return 1;
  }
  return 0;
}

FAKE_API int fake_cupti_domain_enabled(int domain) {
  return domain > 0 && domain < CUPTI_CB_DOMAIN_SIZE && g.domains[domain] ? 1 : 0;
}

/// structSize and allowMultipleSubscribers of the last cuptiSubscribe_v2 call.
FAKE_API void fake_cupti_subscribe_params(size_t* size, int* allow) {
  *size = g.params_size;
  *allow = g.params_allow;
}
