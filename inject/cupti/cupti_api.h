// The CUPTI functions the library uses, resolved with dlsym from a libcupti loaded with dlopen.
// libcupti is never a link-time dependency: a process that never calls cuInit never maps it.
#pragma once

#include <cupti.h>

namespace trainprof::inject::cupti {

// The required functions, X(member of CuptiApi, CUPTI function): without any of them CUDA tracing
// is unavailable. Each member has the type of the function as cupti.h declares it.
#define TRAINPROF_CUPTI_REQUIRED(X)                                             \
  X(GetVersion, cuptiGetVersion)                                               \
  X(GetResultString, cuptiGetResultString)                                     \
  X(Subscribe, cuptiSubscribe)                                                 \
  X(Unsubscribe, cuptiUnsubscribe)                                             \
  X(EnableDomain, cuptiEnableDomain)                                           \
  X(ActivityEnable, cuptiActivityEnable)                                       \
  X(ActivityDisable, cuptiActivityDisable)                                     \
  X(ActivityRegisterCallbacks, cuptiActivityRegisterCallbacks)                 \
  X(ActivityRegisterTimestampCallback, cuptiActivityRegisterTimestampCallback) \
  X(ActivityGetNextRecord, cuptiActivityGetNextRecord)                         \
  X(ActivityGetNumDroppedRecords, cuptiActivityGetNumDroppedRecords)           \
  X(ActivityFlushAll, cuptiActivityFlushAll)

/// Pointers to the CUPTI functions the library calls; null until ResolveCuptiApi.
struct CuptiApi {
#define TRAINPROF_CUPTI_MEMBER(member, function) decltype(&::function) member = nullptr;
  TRAINPROF_CUPTI_REQUIRED(TRAINPROF_CUPTI_MEMBER)
#undef TRAINPROF_CUPTI_MEMBER
  // Optional.
  /// CUDA 12.6+: names us to other tools and, on CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
  /// names the subscriber that is already there. Falls back to Subscribe when absent.
  CUptiResult (*SubscribeV2)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*) = nullptr;
};

/// Resolves every function of `api` from the dlopen handle `lib`. Returns false, with the name of
/// the first required function that is missing in *missing, if `lib` lacks one.
bool ResolveCuptiApi(void* lib, CuptiApi* api, const char** missing);

/// Subscribes `callback` as "trainprof": cuptiSubscribe_v2 when the library has it (asking, from
/// CUPTI 13.2 on, to allow multiple subscribers, so that another tool — torch.profiler — and we
/// may both subscribe), else cuptiSubscribe. On CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
/// `other` (other_size bytes, at least CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN) gets the name of the
/// subscriber already there when CUPTI says it. *multiple says whether multiple subscribers were
/// requested.
CUptiResult SubscribeAsTrainprof(const CuptiApi& api, uint32_t version, CUpti_SubscriberHandle* subscriber,
                                 CUpti_CallbackFunc callback, char* other, size_t other_size, bool* multiple);

/// First CUPTI API version whose CUpti_SubscriberParams has allowMultipleSubscribers (CUDA 13.2).
inline constexpr uint32_t kMultipleSubscribersVersion = 130200;

/// CUPTI's name for a result ("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"), or a fixed
/// text when the table cannot tell.
const char* ResultName(const CuptiApi& api, CUptiResult r);

/// The CUPTI API versions whose activity records this build reads (see activity_layout.h):
/// CUDA 11.8's (18) up to the major version of the headers it was built with.
bool CuptiVersionSupported(uint32_t version);

}  // namespace trainprof::inject::cupti
